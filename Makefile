# The two commands a user needs: `make run` and `make test`. Both bootstrap a fresh machine.
VENV := .venv
BIN := $(VENV)/bin
# Python writes the bytecode of flagdesk's own modules (and pytest its rewritten tests) once
# and reads it after: with PYTHONDONTWRITEBYTECODE set (some machines and CI images set it),
# every process compiled app/, ui/ and sandbox/ again: 0.3 s more for each of the hundreds of
# sandbox and command-line children the tests start, and for every start of the window
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint typecheck bench screenshots serve clean package bundle artefact-test lock

run:
	@packaging/bootstrap.sh run
	@$(BIN)/flagdesk

test:
	@packaging/bootstrap.sh test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy app ui sandbox
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest $(PYTEST_ARGS)

# uv.lock made anew with the newest versions pyproject.toml's ranges allow; `make test` then
# tries them, and the lock is committed when it is green (packaging/bootstrap.sh)
lock:
	@packaging/bootstrap.sh lock

lint:
	@packaging/bootstrap.sh test
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/lint-imports --no-cache

typecheck:
	@packaging/bootstrap.sh test
	$(BIN)/mypy app ui sandbox

serve:
	@packaging/bootstrap.sh run
	$(BIN)/flagdesk serve

bench:
	@packaging/bootstrap.sh test
	$(BIN)/python bench/sandbox_bulk_metrics.py
	$(BIN)/python bench/sandbox_idle_rss.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/gui_startup.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/ui_tables.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/actions.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/credentials.py

screenshots:
	@packaging/bootstrap.sh test
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m ui.screenshots docs/screenshots

# The wheel and sdist, in dist/ (README "Install": `pipx install dist/flagdesk-*.whl`): the
# sdist, then the wheel from it, with the build backend pyproject.toml's [tool.uv] pins.
package:
	@packaging/bootstrap.sh test
	rm -rf dist/flagdesk-*.whl dist/flagdesk-*.tar.gz
	.uv/bin/uv build --quiet --no-python-downloads --out-dir dist .

# The one-folder bundle with its own Python, dist/flagdesk/, and its tarball (README "Install").
APP_ID = io.flagdesk.Flagdesk
VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' app/__init__.py)
bundle:
	@packaging/bootstrap.sh bundle
	rm -rf dist/flagdesk dist/flagdesk-$(VERSION)-linux-x86_64.tar.gz
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
	    packaging/bundle/flagdesk.spec
	cp packaging/install.sh dist/flagdesk/
	mkdir dist/flagdesk/linux && cp -r packaging/linux/$(APP_ID).* packaging/linux/icons dist/flagdesk/linux/
	tar -C dist -czf dist/flagdesk-$(VERSION)-linux-x86_64.tar.gz flagdesk
	@du -sh dist/flagdesk dist/flagdesk-$(VERSION)-linux-x86_64.tar.gz

# The artefacts themselves, outside the checkout: the wheel in a fresh virtual environment, the
# bundle's tarball unpacked in a temporary HOME under Xvfb (packaging/tests/). Slow (builds both
# first): `.ci/run` runs it after `make test`.
artefact-test: package bundle
	$(BIN)/python -m pytest -p no:cacheprovider packaging/tests $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .uv .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info

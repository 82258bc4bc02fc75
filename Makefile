# The two commands a user needs: `make run` and `make test`. Both bootstrap a fresh machine.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint typecheck bench screenshots serve clean

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

screenshots:
	@packaging/bootstrap.sh test
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m ui.screenshots docs/screenshots

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info

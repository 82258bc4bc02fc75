"""The wheel (`make package`) installed in a fresh virtual environment outside the checkout, as
`pipx install` does: `flagdesk --version` is the package's version, `flagdesk serve` answers
/health, `flagdesk metrics validate` reads a sample the wheel carries, and the window opens
offscreen on its embedded sandbox with the demo data. Python packages come from pip's cache
or the configured registries, nothing else."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT, artefact, clean_env, serving, version


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A new virtual environment holding the wheel, and a HOME of its own."""
    place = tmp_path_factory.mktemp("wheel")
    assert not place.resolve().is_relative_to(ROOT)
    wheel = artefact(f"flagdesk-{version()}-py3-none-any.whl")
    venv.EnvBuilder(with_pip=True).create(place / "venv")
    # pip runs as the person would: their pip configuration (registries, mirrors) and cache
    pip_env = clean_env(Path.home())
    result = subprocess.run([str(place / "venv" / "bin" / "python"), "-m", "pip", "install",
                             "-q", str(wheel)], cwd=place, env=pip_env, capture_output=True,
                            text=True, timeout=900)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    home = place / "home"
    home.mkdir()
    env = clean_env(home)
    env["XDG_DATA_HOME"] = str(home / "data")
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["XDG_STATE_HOME"] = str(home / "state")
    return place, env


def _run(place: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(place / "venv" / "bin" / "flagdesk"), *args], cwd=place, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_the_version_is_the_package_s(installed: tuple[Path, dict[str, str]]) -> None:
    place, env = installed
    result = _run(place, env, "--version")
    assert result.stdout.strip() == f"flagdesk {version()}", result.stderr
    metadata = subprocess.run(
        [str(place / "venv" / "bin" / "python"), "-c",
         "import importlib.metadata as m; print(m.version('flagdesk'))"],
        cwd=place, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert metadata.stdout.strip() == version()


def test_serve_answers_health(installed: tuple[Path, dict[str, str]]) -> None:
    place, env = installed
    with serving([str(place / "venv" / "bin" / "flagdesk"), "serve", "--empty"], env, place):
        pass


def test_metrics_validate_reads_a_sample_the_wheel_carries(
    installed: tuple[Path, dict[str, str]],
) -> None:
    place, env = installed
    where = subprocess.run(
        [str(place / "venv" / "bin" / "python"), "-c",
         "from app import resources; print(resources.samples())"],
        cwd=place, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    samples = Path(where.stdout.strip())
    assert samples.is_relative_to(place / "venv"), where.stdout + where.stderr
    result = _run(place, env, "metrics", "validate", str(samples / "sdk.json"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 valid metrics" in result.stdout
    bad = _run(place, env, "metrics", "validate", str(samples / "invalid.ndjson"))
    assert bad.returncode != 0 and "invalid.ndjson:" in bad.stdout + bad.stderr


def test_the_window_opens_offscreen_on_its_embedded_sandbox(
    installed: tuple[Path, dict[str, str]],
) -> None:
    """tests/ui/run_driver.py run by the installed Python from outside the checkout: the `ui`
    and `app` it imports are the wheel's."""
    place, env = installed
    driver = place / "run_driver.py"
    shutil.copyfile(ROOT / "tests" / "ui" / "run_driver.py", driver)
    python = str(place / "venv" / "bin" / "python")
    env = {**env, "QT_QPA_PLATFORM": "offscreen"}
    code = "import ui, app; print(ui.__file__, app.__file__)"
    origin = subprocess.run([python, "-c", code], cwd=place, env=env, capture_output=True,
                            text=True, timeout=60)  # fmt: skip
    assert all(Path(p).is_relative_to(place / "venv") for p in origin.stdout.split()), origin
    result = subprocess.run([python, str(driver), str(place / "window.png")], cwd=place,
                            env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    output = f"{result.returncode}\n{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["page"] == "projectsPage", output
    assert report["source"] == "Local sandbox with demo data", output
    assert report["projects"] == 4, output
    assert len(report["children"]) == 1 and report["children_alive_after_exit"] == [], output
    assert (place / "home" / "data" / "flagdesk" / "sandbox.sqlite3").exists()
    assert sys.platform != "linux" or (place / "window.png").stat().st_size > 0

"""The launcher entry of packaging/linux/: the `.desktop` file and the AppStream metainfo pass
their validators (Debian `desktop-file-utils` and `appstream`, which `packaging/bootstrap.sh
test` installs), and the icons are the application icon, drawn at each size."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app import resources

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
sys.path.insert(0, str(LINUX))
import make_icons  # noqa: E402

APP_ID = make_icons.APP_ID
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is missing: run packaging/bootstrap.sh test"
    return path


def test_the_desktop_file_validates() -> None:
    result = subprocess.run([_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True,
                            text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # hints are advice; warnings and errors are not let through
    assert "error:" not in result.stdout and "warning:" not in result.stdout, result.stdout


def test_the_desktop_file_starts_flagdesk_with_its_icon() -> None:
    entry = dict(line.split("=", 1) for line in DESKTOP.read_text().splitlines() if "=" in line)
    assert entry["Exec"] == "flagdesk"  # install.sh writes the bundle's full path instead
    assert entry["Icon"] == APP_ID
    assert entry["StartupWMClass"] == "flagdesk"  # the window's WM_CLASS (tests in packaging/)


def test_the_metainfo_validates_offline() -> None:
    result = subprocess.run([_tool("appstreamcli"), "validate", "--no-net", str(METAINFO)],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_metainfo_names_this_entry() -> None:
    from app import __version__

    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.find("releases/release").get("version") == __version__  # type: ignore[union-attr]


#: hosts that are no one's address (RFC 2606 and 6761)
PLACEHOLDER = re.compile(
    r"^https?://([^/]*\.)?(example\.(org|com|net)|invalid|test|localhost)(/|$)"
)


def test_the_metainfo_gives_no_made_up_address() -> None:
    # the project has no public address yet: a homepage or screenshot would be invented (the
    # metainfo's comment says what goes there once there is one)
    root = ET.parse(METAINFO).getroot()
    addresses = [e.text or "" for e in root.iter() if e.tag in ("url", "image", "video")]
    assert [a for a in addresses if PLACEHOLDER.match(a.strip())] == []


@pytest.mark.parametrize("size", make_icons.SIZES)
def test_each_png_is_the_application_icon_at_its_size(qapp: object, size: int) -> None:
    from PySide6.QtGui import QImage

    png = QImage(str(make_icons.png_path(size)))
    assert (png.width(), png.height()) == (size, size)
    expected = make_icons.render(size).convertToFormat(png.format())
    assert png == expected, "run packaging/linux/make_icons.py after changing the app icon"


def test_the_scalable_icon_is_the_application_icon() -> None:
    svg = make_icons.svg_path()
    assert svg.read_bytes() == (resources.icons() / "flagdesk.svg").read_bytes()

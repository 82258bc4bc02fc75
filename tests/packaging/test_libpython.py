"""The recipe of the bundle's Python library (packaging/bundle/libpython.py): which archives its
source is fetched from, which revision is built, which modules go into it, and when the
library PyInstaller collects stays. The build itself runs in `make bundle`, and
packaging/tests/test_bundle.py checks the bundle holds its result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging" / "bundle"))
import libpython  # noqa: E402

DEBIAN_SOURCES = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

VENDOR_SOURCES = """\
Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
Signed-By: /usr/share/keyrings/nodesource.gpg

Types: deb
URIs: http://ftp.fr.debian.org/debian
Suites: bookworm-backports
Components: main
Enabled: no
"""

ONE_LINE_LIST = """\
# the main archive
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] \
http://ftp.de.debian.org/debian bookworm main contrib
deb-src http://ftp.de.debian.org/debian bookworm main
deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main
"""


def test_the_source_comes_from_the_debian_archives_apt_already_uses() -> None:
    entries = libpython.deb_src_entries(
        [("debian.sources", DEBIAN_SOURCES), ("vendor.sources", VENDOR_SOURCES),
         ("sources.list", ONE_LINE_LIST)]
    )  # fmt: skip
    stanzas = entries.strip().split("\n\n")
    assert stanzas == [
        "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg",
        "Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg",
        "Types: deb-src\nURIs: http://ftp.de.debian.org/debian\nSuites: bookworm\n"
        "Components: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg",
    ]  # a vendor's repository and a disabled entry are left out; one-line options are read


def test_the_installed_revision_is_built_when_the_archive_still_has_it() -> None:
    indexed = ["3.11.2-6+deb12u8", "3.11.2-6+deb12u6", "3.11.2-6+deb12u9", "3.12.1-1"]
    assert libpython.candidates("3.11.2-6+deb12u6", indexed) == [
        "3.11.2-6+deb12u6", "3.11.2-6+deb12u9", "3.11.2-6+deb12u8",
    ]  # fmt: skip


def test_otherwise_the_newest_revision_of_the_same_release_never_another_release() -> None:
    indexed = ["3.11.2-6+deb12u8", "3.11.2-6+deb12u10", "3.11.4-1", "3.11.2-6+deb12u9"]
    assert libpython.candidates("3.11.2-6+deb12u6", indexed) == [
        "3.11.2-6+deb12u10", "3.11.2-6+deb12u9", "3.11.2-6+deb12u8",
    ]  # fmt: skip
    assert libpython.candidates("3.11.2-6+deb12u6", ["3.11.4-1"]) == []
    assert libpython.upstream("1:3.11.2-6+deb12u8") == "3.11.2"


SETUP = """\
# The modules listed here are built in.
#_sha1 sha1module.c
#_sha1x sha1x.c
#pyexpat pyexpat.c -lexpat
#_ssl _ssl.c -lssl -lcrypto
#zlib  zlibmodule.c -lz
"""


def test_the_modules_debian_builds_in_are_built_in() -> None:
    text = libpython.setup_local(SETUP, ["zlib", "_sha1", "pyexpat", "sys", "_io"])
    assert text.splitlines() == [
        "_sha1 sha1module.c",
        "pyexpat pyexpat.c -lexpat",
        "zlib  zlibmodule.c -lz",
    ]


def test_the_recipe_is_profile_guided_and_a_change_of_it_is_a_new_cache() -> None:
    assert (
        "--enable-optimizations" in libpython.CONFIGURE and "--enable-shared" in libpython.CONFIGURE
    )
    before = libpython.cache_dir(Path("/c"), "python3.11", "3.11.2-6+deb12u6")
    assert before.name.startswith("python3.11_3.11.2-6+deb12u6_")
    recipe = libpython.CONFIGURE
    try:
        libpython.CONFIGURE = (*recipe, "--with-lto")
        assert libpython.cache_dir(Path("/c"), "python3.11", "3.11.2-6+deb12u6") != before
    finally:
        libpython.CONFIGURE = recipe
    lto = libpython.PARALLEL_LTO
    try:
        libpython.PARALLEL_LTO = "-flto=2 -fuse-linker-plugin -ffat-lto-objects"
        assert libpython.cache_dir(Path("/c"), "python3.11", "3.11.2-6+deb12u6") != before
    finally:
        libpython.PARALLEL_LTO = lto


def test_a_library_built_earlier_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLAGDESK_BUNDLE_LIBPYTHON", raising=False)
    monkeypatch.setattr(libpython, "debian_package", lambda library: "libpython3.11")
    monkeypatch.setattr(
        libpython, "installed_source", lambda package: ("python3.11", "3.11.2-6+deb12u6")
    )
    monkeypatch.setattr(libpython, "fetch", lambda *a: pytest.fail("fetched again"))
    kept = (
        libpython.cache_dir(tmp_path, "python3.11", "3.11.2-6+deb12u6") / libpython.library_name()
    )
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"\x7fELF")
    assert libpython.build(tmp_path) == kept


def test_the_system_library_stays_when_asked_or_when_python_is_not_debian_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(libpython, "fetch", lambda *a: pytest.fail("fetched"))
    monkeypatch.setenv("FLAGDESK_BUNDLE_LIBPYTHON", "system")
    assert libpython.build(tmp_path) is None
    monkeypatch.delenv("FLAGDESK_BUNDLE_LIBPYTHON")
    monkeypatch.setattr(libpython, "debian_package", lambda library: None)
    assert libpython.build(tmp_path) is None


MAKEFILE = f"""\
CONFIGURE_CFLAGS_NODIST= -fno-semantic-interposition {libpython.SERIAL_LTO} -g -std=c11
CONFIGURE_LDFLAGS_NODIST= -fno-semantic-interposition {libpython.SERIAL_LTO} -g
profile-opt: profile-run-stamp
{libpython.WHOLE_REBUILD} LDFLAGS_NODIST="$(LDFLAGS_NODIST)"
"""


def test_the_build_links_in_parallel_and_rebuilds_the_library_alone() -> None:
    quicker = libpython.quicker_makefile(MAKEFILE)
    assert quicker.splitlines() == [
        "CONFIGURE_CFLAGS_NODIST= -fno-semantic-interposition -flto=auto -fuse-linker-plugin "
        "-ffat-lto-objects -g -std=c11",
        "CONFIGURE_LDFLAGS_NODIST= -fno-semantic-interposition -flto=auto -fuse-linker-plugin "
        "-ffat-lto-objects -g",
        "profile-opt: profile-run-stamp",
        '\t$(MAKE) $(LDLIBRARY) CFLAGS_NODIST="$(CFLAGS_NODIST) $(PGO_PROF_USE_FLAG)" '
        'LDFLAGS_NODIST="$(LDFLAGS_NODIST)"',
    ]
    with pytest.raises(RuntimeError, match="not the one"):
        libpython.quicker_makefile(MAKEFILE.replace(libpython.WHOLE_REBUILD, "\t$(MAKE) all"))

"""The bundle's Python library, built with profile-guided optimisation (`make bundle`;
packaging/bundle/flagdesk.spec).

PyInstaller puts the building interpreter's shared library in the bundle: on Debian, the file of
package libpython3.11. Debian builds its `python3.11` program with profile-guided and link-time
optimisation, linked statically; it builds the shared library with neither (debian/rules: the
static build's target is `profile-opt`, the shared one's the default). So the bundle ran the same
Python code slower than the development environment does. Measured on these machines: an
enum-and-loop script ran 316M instructions on Debian's library against 262M on its program
(callgrind), 287M on a library built with profile-guided optimisation alone and 259M with
link-time optimisation too; with the last, the bundle showed its first data 0.097-0.110 s sooner
(medians of 16 alternated pairs, `bench/gui_startup.py`'s way; 0.03 s less without link-time
optimisation).

The library built here is Debian's own source of that package, fetched with apt (which checks it
against the archive's signed index; `apt-get source` into a private state directory, so the
machine's apt configuration is left as it was) and unpacked with Debian's patches by dpkg-source.
It is configured as Debian configures its shared build where the interpreter's behaviour is
concerned (`--enable-shared`, the system's expat, computed gotos), with the modules Debian builds
into its interpreter built in too (PyInstaller collects no file for a built-in module), and with
`--enable-optimizations --with-lto`: CPython's profile-guided build, trained on CPython's own
test subset (`make profile-opt`), with link-time optimisation (in parallel partitions, and the
last stage making the library alone: `quicker_makefile`). About 18 minutes on two cores, once per
version: the result is kept in build/libpython/ and reused.

The source is the installed package's version when the archive still indexes it; otherwise the
newest indexed revision of the same upstream release (Debian's security updates of 3.11.2 add
patches, never change the ABI), and the bundle says so as it is built. Only for Debian's own
Python: another interpreter (pyenv's, a virtual environment of it) keeps the library PyInstaller
collects, as does `FLAGDESK_BUNDLE_LIBPYTHON=system`. tests/packaging/test_libpython.py tests the
recipe; packaging/tests/test_bundle.py checks the bundle holds the library built here.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

#: how the library is configured (a change of these or of `quicker_makefile`'s changes rebuilds
#: it: the cache's name carries their digest)
CONFIGURE = (
    "--enable-shared",
    "--enable-optimizations",
    "--with-lto",
    "--enable-ipv6",
    "--with-computed-gotos",
    "--with-system-expat",
    "--without-ensurepip",
)
#: where Debian keeps the sources lists apt reads
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))


def say(message: str) -> None:
    print(f"flagdesk bundle: {message}", file=sys.stderr, flush=True)


def library_name() -> str:
    return f"libpython{sys.version_info.major}.{sys.version_info.minor}.so.1.0"


def debian_package(library: Path) -> str | None:
    """The Debian package that installed `library` (its real path), or None."""
    if not shutil.which("dpkg-query"):
        return None
    found = subprocess.run(
        ["dpkg-query", "--search", str(library.resolve())], capture_output=True, text=True
    )
    if found.returncode != 0:
        return None
    return found.stdout.split(":", 1)[0].strip() or None


def installed_source(package: str) -> tuple[str, str]:
    """(source package, version) of an installed binary package."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${source:Package} ${source:Version}", package],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return out[0], out[1]


def deb_src_entries(files: Iterable[tuple[str, str]]) -> str:
    """The Debian archives of apt's sources lists ((name, text) pairs: one-line `.list` files or
    deb822 `.sources` files), as deb822 `deb-src` entries. Other repositories (a vendor's) are
    left out: they hold no Debian source, and an index they lack would fail the update."""
    stanzas = []
    for name, text in files:
        if name.endswith(".sources"):
            for block in re.split(r"\n\s*\n", text):
                fields = dict(
                    (key.strip().lower(), value.strip())
                    for key, _, value in (
                        line.partition(":")
                        for line in block.splitlines()
                        if line.strip() and not line.lstrip().startswith("#") and ":" in line
                    )
                )
                if "deb" not in fields.get("types", "").split():
                    continue
                if fields.get("enabled", "yes").lower() == "no":
                    continue
                stanzas.append(
                    _stanza(
                        fields.get("uris", ""),
                        fields.get("suites", ""),
                        fields.get("components", ""),
                        fields.get("signed-by"),
                    )
                )
        else:
            for line in text.splitlines():
                words = line.split("#", 1)[0].split()
                if not words or words[0] != "deb":
                    continue
                words = words[1:]
                signed_by = None
                if words and words[0].startswith("["):
                    options = []
                    while words:
                        options.append(words.pop(0))
                        if options[-1].endswith("]"):
                            break
                    match = re.search(r"signed-by=([^\s\]]+)", " ".join(options))
                    signed_by = match.group(1) if match else None
                if len(words) >= 2:
                    stanzas.append(_stanza(words[0], words[1], " ".join(words[2:]), signed_by))
    return "\n".join(s for s in stanzas if s)


def _stanza(uris: str, suites: str, components: str, signed_by: str | None) -> str:
    debian = [uri for uri in uris.split() if "debian" in uri]
    if not debian or not suites:
        return ""
    lines = ["Types: deb-src", f"URIs: {' '.join(debian)}", f"Suites: {suites}"]
    if components:
        lines.append(f"Components: {components}")
    if signed_by:
        lines.append(f"Signed-By: {signed_by}")
    return "\n".join(lines) + "\n"


def upstream(version: str) -> str:
    """The upstream part of a Debian version: 3.11.2 of 3.11.2-6+deb12u8."""
    return version.split(":", 1)[-1].rsplit("-", 1)[0]


def candidates(installed: str, indexed: Iterable[str]) -> list[str]:
    """The source versions to try, best first: the installed one if the archive indexes it, then
    the indexed revisions of the same upstream release, newest first. Another upstream release
    never: its library would not match the standard library PyInstaller collects."""
    same = sorted(
        {v for v in indexed if upstream(v) == upstream(installed) and v != installed},
        key=functools.cmp_to_key(_compare_versions),
        reverse=True,
    )
    return ([installed] if installed in set(indexed) else []) + same


def _compare_versions(a: str, b: str) -> int:
    """Debian's order of two versions (dpkg's own comparison)."""
    if a == b:
        return 0
    return -1 if subprocess.run(["dpkg", "--compare-versions", a, "lt", b]).returncode == 0 else 1


def setup_local(setup: str, builtins: Iterable[str]) -> str:
    """Modules/Setup.local building the named modules into the library: the line Modules/Setup
    has for each, commented out (Debian's patches give it the system libraries' flags). Modules
    the build always puts in (sys, _io, posix...) have no such line and need none."""
    lines = []
    for name in sorted(set(builtins)):
        for line in setup.splitlines():
            if re.match(rf"#{re.escape(name)}\s", line):
                lines.append(line[1:])
                break
    return "\n".join(lines) + "\n"


#: CPython's configure gives GCC's link-time optimisation one partition: one core for every link
#: (its fat objects stay: the build links a program of its own without link-time optimisation)
SERIAL_LTO = "-flto -fuse-linker-plugin -ffat-lto-objects -flto-partition=none"
PARALLEL_LTO = "-flto=auto -fuse-linker-plugin -ffat-lto-objects"
#: `make profile-opt`'s last stage: the whole interpreter again, with the profile
WHOLE_REBUILD = '\t$(MAKE) build_all CFLAGS_NODIST="$(CFLAGS_NODIST) $(PGO_PROF_USE_FLAG)"'
LIBRARY_REBUILD = '\t$(MAKE) $(LDLIBRARY) CFLAGS_NODIST="$(CFLAGS_NODIST) $(PGO_PROF_USE_FLAG)"'


def quicker_makefile(makefile: str) -> str:
    """The configured Makefile with a shorter build of the same library: link-time optimisation
    in parallel partitions, and the profile-guided stage building the library alone (the profile
    run needs the whole interpreter and its modules, the bundle only the library). Raises if the
    Makefile is not what these changes expect."""
    flags = [line for line in makefile.splitlines() if line.startswith("CONFIGURE_")]
    if sum(SERIAL_LTO in line for line in flags) != 2 or makefile.count(WHOLE_REBUILD) != 1:
        raise RuntimeError("CPython's Makefile is not the one packaging/bundle/libpython.py knows")
    lines = [
        line.replace(SERIAL_LTO, PARALLEL_LTO) if line.startswith("CONFIGURE_") else line
        for line in makefile.splitlines(keepends=True)
    ]
    return "".join(lines).replace(WHOLE_REBUILD, LIBRARY_REBUILD)


def cache_dir(root: Path, source: str, version: str) -> Path:
    """Where the library built for the installed `source` `version` is kept."""
    recipe = (*CONFIGURE, PARALLEL_LTO, LIBRARY_REBUILD)
    digest = hashlib.sha256("\n".join(recipe).encode()).hexdigest()[:8]
    return root / f"{source}_{version}_{digest}"


def _apt(state: Path) -> list[str]:
    return [
        "-o",
        "Dir::Etc::SourceList=/dev/null",
        "-o",
        f"Dir::Etc::SourceParts={state / 'sources.list.d'}",
        "-o",
        f"Dir::State::Lists={state / 'lists'}",
        "-o",
        f"Dir::Cache={state / 'cache'}",
        "-o",
        "Debug::NoLocking=1",
        "-q",
    ]


def _read_sources(places: Sequence[Path]) -> list[tuple[str, str]]:
    files = []
    for place in places:
        paths = sorted(place.iterdir()) if place.is_dir() else [place]
        for path in paths:
            if path.is_file() and path.name.endswith((".list", ".sources")):
                files.append((path.name, path.read_text(errors="replace")))
    return files


def fetch(source: str, installed: str, work: Path, log: Path) -> tuple[Path, str]:
    """Debian's source tree of `source` (unpacked, patched) and its version."""
    state = work / "apt"
    for sub in ("sources.list.d", "lists/partial", "cache/archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    entries = deb_src_entries(_read_sources(APT_SOURCES))
    if not entries:
        raise RuntimeError(
            "apt's sources lists name no Debian archive to fetch Python's source from"
        )
    (state / "sources.list.d" / "debian-src.sources").write_text(entries)
    with log.open("a") as out:
        subprocess.run(["apt-get", *_apt(state), "update"], check=True, stdout=out, stderr=out)
        shown = subprocess.run(
            ["apt-cache", *_apt(state), "showsrc", "--only-source", source],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        indexed = re.findall(r"^Version: (\S+)$", shown, re.M)
        tried = []
        for version in candidates(installed, indexed):
            fetched = subprocess.run(
                ["apt-get", *_apt(state), "source", "--download-only", f"{source}={version}"],
                cwd=work,
                stdout=out,
                stderr=out,
            )
            if fetched.returncode != 0:
                tried.append(version)
                continue
            tree = work / "src"
            dsc = f"{source}_{version.split(':', 1)[-1]}.dsc"
            subprocess.run(
                ["dpkg-source", "-x", dsc, str(tree)], cwd=work, check=True, stdout=out, stderr=out
            )
            return tree, version
    raise RuntimeError(
        f"apt found no source of {source} {upstream(installed)} to fetch "
        f"(indexed: {', '.join(indexed) or 'none'}; failed: {', '.join(tried) or 'none'})"
    )


def build(cache_root: Path) -> Path | None:
    """The library to put in the bundle, built once per source version into `cache_root`; None
    when the interpreter is not Debian's own (PyInstaller's library stays)."""
    if os.environ.get("FLAGDESK_BUNDLE_LIBPYTHON") == "system":
        say("FLAGDESK_BUNDLE_LIBPYTHON=system: the bundle keeps the system's Python library")
        return None
    name = library_name()
    system_library = Path(sysconfig.get_config_var("LIBDIR") or "/usr/lib") / name
    package = debian_package(system_library)
    if package is None:
        say(f"{system_library} is no Debian package's: the bundle keeps PyInstaller's library")
        return None
    source, installed = installed_source(package)
    # kept by the installed version: the source built may be a later revision (fetch)
    target = cache_dir(cache_root, source, installed)
    if (target / name).is_file():
        return target / name
    cache_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="libpython-", dir=cache_root) as tmp:
        work = Path(tmp)
        log = cache_root / "build.log"
        log.write_text("")
        say(
            f"building the bundle's Python library from Debian's source of {source} (once, about "
            f"18 minutes on two cores; log: {log})"
        )
        try:
            tree, version = fetch(source, installed, work, log)
            if version != installed:
                say(
                    f"the archive no longer indexes {source} {installed} (installed): building "
                    f"{version}, the same release with Debian's later patches"
                )
            built = _make(tree, work / "build", log)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(
                f"flagdesk bundle: the bundle's Python library could not be built: {exc} (log: "
                f"{log}). `FLAGDESK_BUNDLE_LIBPYTHON=system make bundle` keeps Debian's library."
            ) from exc
        target.mkdir(parents=True, exist_ok=True)
        (target / "source-version").write_text(f"{source} {version}\n")
        subprocess.run(["strip", "-o", str(target / name), str(built)], check=True)
        say(f"the bundle's Python library: {target / name}")
        return target / name


def _make(tree: Path, out_dir: Path, log: Path) -> Path:
    """Configure and build the library from the source `tree` in `out_dir`; its path."""
    # Setup.local before configure, whose makesetup writes the Makefile and the table of built-in
    # modules from it (written later, make remade them halfway and linked without the modules)
    (out_dir / "Modules").mkdir(parents=True)
    (out_dir / "Modules" / "Setup.local").write_text(
        setup_local((tree / "Modules" / "Setup").read_text(), sys.builtin_module_names)
    )
    with log.open("a") as out:
        subprocess.run(
            [str(tree / "configure"), *CONFIGURE], cwd=out_dir, check=True, stdout=out, stderr=out
        )
        for makefile in (out_dir / "Makefile.pre", out_dir / "Makefile"):  # the template too
            makefile.write_text(quicker_makefile(makefile.read_text()))
        subprocess.run(
            ["make", f"-j{os.cpu_count() or 1}", "profile-opt"],
            cwd=out_dir,
            check=True,
            stdout=out,
            stderr=out,
        )
    return out_dir / library_name()


if __name__ == "__main__":  # `python packaging/bundle/libpython.py build/libpython`: build it alone
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/libpython")))

#!/usr/bin/env bash
# Bring a fresh Debian machine (or an up-to-date checkout) to a working flagdesk environment.
#   packaging/bootstrap.sh run    system libraries for a real window, .venv, runtime dependencies
#   packaging/bootstrap.sh test   system libraries for offscreen Qt, .venv, runtime + test dependencies
#   packaging/bootstrap.sh bundle test's, + a real window under Xvfb and PyInstaller (`make bundle`,
#                                 `make bundle-test`)
#   packaging/bootstrap.sh python the Python it makes .venv with (nothing installed)
#   packaging/bootstrap.sh lock   uv.lock made anew: the newest versions pyproject.toml allows
#                                 (`make lock`; then `make test` tries them)
# Python packages are exactly uv.lock's, in every mode. Idempotent and cheap when nothing
# changed: a dpkg query and a `uv sync` that finds everything in place.
set -euo pipefail
mode="${1:-run}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf 'flagdesk setup: %s\n' "$*" >&2; }

# Qt's offscreen platform (what tests use), checked in an empty Debian 12 chroot.
offscreen_pkgs=(libgl1 libegl1 libxkbcommon0 libglib2.0-0 libfontconfig1 libdbus-1-3 fonts-dejavu-core)
# A real X window, and xvfb-run for machines without a display.
window_pkgs=(xvfb xauth libxkbcommon-x11-0 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0
    libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-render0 libxcb-shape0 libxcb-shm0
    libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1)

# A real Secret Service for the keyring test (tests/app/test_secret_service.py); the launcher
# entry's validators (tests/packaging/test_linux_entry.py); `as` and `ld`, which build the
# bundle's small ICU data library (packaging/bundle/icudata.py, tests/packaging/test_icudata.py).
test_pkgs=(gnome-keyring dbus-daemon desktop-file-utils appstream binutils)
# The bundle's test (tests/bundle): its window is looked for with xwininfo.
bundle_pkgs=(x11-utils)

want=("${offscreen_pkgs[@]}")
case "$mode" in
    run) want+=("${window_pkgs[@]}") ;;
    test) want+=("${test_pkgs[@]}") ;;
    bundle) want+=("${test_pkgs[@]}" "${window_pkgs[@]}" "${bundle_pkgs[@]}") ;;
    python) ;;  # prints the Python it would make .venv with, and does nothing else
    lock) ;;
    *) say "unknown mode $mode (run, test, bundle, python or lock)"; exit 2 ;;
esac

# The Python that makes the virtual environment: $PYTHON when set; otherwise the system's own
# (/usr/bin/python3) when it is 3.11 or newer and can make one (or apt can give it venv), else
# python3 on PATH. Debian builds its Python with profile-guided and link-time optimisation; a
# Python built from source without them (pyenv's default) is slower: on these machines plain
# Python code took 0.69x the time on Debian's (farm-bench), the window's first data 0.47-0.57 s
# against 0.59-0.70 s in the same minutes (bench/gui_startup.py).
system_python=/usr/bin/python3
usable() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
if [ -z "${PYTHON:-}" ] && [ -x "$system_python" ] && usable "$system_python" \
    && { "$system_python" -c 'import venv, ensurepip' 2>/dev/null \
         || { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }; }; then
    PYTHON="$system_python"
fi
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || { say "no $PYTHON on PATH: install Python 3.11 or newer"; exit 1; }
if [ "$mode" = python ]; then
    command -v "$PYTHON"
    exit 0
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { say "$PYTHON is $("$PYTHON" -V 2>&1); flagdesk needs Python 3.11 or newer"; exit 1; }
# Debian splits venv/ensurepip out of python3 into python3-venv.
if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
    want+=("python3-venv")
fi
# PyInstaller puts the interpreter's shared library in the bundle: Debian's is a package of its
# own (libpython3.11), which python3 does not pull in
if [ "$mode" = bundle ] && [ "$(command -v "$PYTHON")" = "$system_python" ]; then
    want+=("libpython$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')")
fi

missing=()
if command -v dpkg-query >/dev/null; then
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
fi
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        # another apt may hold the lock for a while (several setups at once): wait for it
        apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
        apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}" \
            >/dev/null
    else
        say "missing Debian packages (run as root to install them): sudo apt-get install ${missing[*]}"
    fi
fi

# The Python packages: exactly the versions and files (by hash) of uv.lock, for every mode.
# uv, because its lock is one file for every Python and every set (run, test, bundle), installs
# from it with the hashes checked, and says when the lock and pyproject.toml disagree
# (`--locked`); pip-tools' compiled files hold one interpreter's resolution each. uv itself comes
# from PyPI at the version and hashes of packaging/uv.txt, into a folder of its own (.uv), so
# the project's environment holds only what the lock names. `make lock` refreshes uv.lock.
uv_dir=.uv
uv_pin="$(sed -n 's/^uv==\([^ ]*\).*/\1/p' packaging/uv.txt)"
if [ "$("$uv_dir/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$uv_pin" ]; then
    say "installing uv $uv_pin into $uv_dir (packaging/uv.txt)"
    rm -rf "$uv_dir"
    "$PYTHON" -m venv "$uv_dir"
    # (grep drops the noise of pip mirrors configured on some machines, not real warnings)
    if ! "$uv_dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
        --require-hashes -r packaging/uv.txt 2>&1 \
        | { grep -vE "^WARNING: Location 'file:" || true; }; then
        say "installing uv failed (see above)"
        exit 1
    fi
fi
if [ "$mode" = lock ]; then
    exec "$uv_dir/bin/uv" lock --upgrade
fi

venv=.venv
sync=(--locked)
case "$mode" in
    # the window alone: what test or bundle added stays, so `make run` after `make test` removes
    # nothing
    run) sync+=(--inexact) ;;
    test) sync+=(--extra test) ;;
    bundle) sync+=(--extra test --extra bundle) ;;
esac
# an existing .venv keeps its Python (delete it to choose another)
[ -x "$venv/bin/python" ] || sync+=(--python "$PYTHON")
[ -x "$venv/bin/python" ] \
    || say "creating the virtual environment in $venv with $("$PYTHON" -V 2>&1) ($(command -v "$PYTHON"))"
if ! UV_PROJECT_ENVIRONMENT="$venv" UV_PYTHON_DOWNLOADS=never \
    "$uv_dir/bin/uv" sync --quiet --no-python-downloads "${sync[@]}"; then
    say "installing the locked dependencies failed (see above); when uv.lock and pyproject.toml disagree, \`make lock\` makes a new lock"
    exit 1
fi

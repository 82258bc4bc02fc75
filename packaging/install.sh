#!/usr/bin/env bash
# Put the flagdesk bundle, its launcher entry and its icon where the desktop finds them (XDG).
#   install.sh [--user]               install (--user: for you alone, no root needed)
#   install.sh [--user] --uninstall   remove exactly what install.sh put there
# Run it from the unpacked tarball (flagdesk/install.sh) or from a clone after `make bundle`
# (packaging/install.sh). Where things go:
#                 --user                                  system-wide (root)
#   the bundle    ~/.local/lib/flagdesk/                  /opt/flagdesk/
#   the command   ~/.local/bin/flagdesk (a link)          /usr/local/bin/flagdesk
#   the launcher  $XDG_DATA_HOME/applications/, icons/hicolor/*/apps/, metainfo/
#                 ($XDG_DATA_HOME: ~/.local/share)        /usr/local/share/...
# What lies outside the bundle's folder is listed in its INSTALLED file; --uninstall removes
# those files, the folders install.sh made for them when they are left empty, and the bundle.
set -euo pipefail

APP_ID=io.flagdesk.Flagdesk
say() { printf 'flagdesk install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

user=0
uninstall=0
for arg in "$@"; do
    case "$arg" in
        --user) user=1 ;;
        --uninstall) uninstall=1 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $arg (--user, --uninstall)" ;;
    esac
done

if [ "$user" = 1 ]; then
    [ -n "${HOME:-}" ] || die "HOME is not set"
    lib="$HOME/.local/lib/flagdesk"
    bin="$HOME/.local/bin"
    share="${XDG_DATA_HOME:-$HOME/.local/share}"
else
    [ "$(id -u)" = 0 ] || die "installing for every user needs root: sudo $0, or $0 --user"
    lib=/opt/flagdesk
    bin=/usr/local/bin
    share=/usr/local/share
fi
manifest="$lib/INSTALLED"

remove_installed() {
    [ -d "$lib" ] || { say "nothing installed in $lib"; return 0; }
    [ -x "$lib/flagdesk" ] && [ -d "$lib/_internal" ] \
        || die "$lib does not hold a flagdesk bundle: left alone"
    local listed=""
    [ -f "$manifest" ] && listed="$(cat "$manifest")"
    # files first, the bundle, then the folders install.sh made, deepest first, if left empty
    grep '^file ' <<<"$listed" | cut -d' ' -f2- | while IFS= read -r path; do
        rm -f -- "$path"
    done
    rm -rf -- "$lib"
    grep '^dir ' <<<"$listed" | cut -d' ' -f2- | sort -r | while IFS= read -r path; do
        rmdir -- "$path" 2>/dev/null || true
    done
    say "removed flagdesk from $lib"
}

if [ "$uninstall" = 1 ]; then
    remove_installed
    exit 0
fi

# the bundle and the launcher's files: beside this script in the unpacked tarball, or the
# clone's dist/flagdesk (made by `make bundle`) and packaging/linux
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -x "$here/flagdesk" ] && [ -d "$here/_internal" ]; then
    bundle="$here"
else
    bundle="$here/../dist/flagdesk"
    [ -x "$bundle/flagdesk" ] || die "no bundle in $(cd "$here/.." && pwd)/dist/flagdesk: run \`make bundle\` first"
    bundle="$(cd "$bundle" && pwd)"
fi
linux="$here/linux"
[ -f "$linux/$APP_ID.desktop" ] || die "no launcher entry in $linux"

[ -d "$lib" ] && remove_installed  # a new version replaces the old one whole

made=()   # folders this install creates, for --uninstall
files=()
make_dir() {
    local dir="$1" missing=()
    while [ ! -d "$dir" ]; do missing+=("$dir"); dir="$(dirname "$dir")"; done
    [ "${#missing[@]}" -gt 0 ] && made+=("${missing[@]}")
    mkdir -p -- "$1"
}
put() { # $1 source file, $2 destination file
    make_dir "$(dirname "$2")"
    install -m 644 -- "$1" "$2"
    files+=("$2")
}

make_dir "$(dirname "$lib")"
cp -a -- "$bundle" "$lib"

make_dir "$bin"
ln -sfn -- "$lib/flagdesk" "$bin/flagdesk"
files+=("$bin/flagdesk")

# the launcher runs the bundle by its full path: ~/.local/bin is not on every session's PATH
make_dir "$share/applications"
sed "s|^Exec=flagdesk\$|Exec=$lib/flagdesk|" "$linux/$APP_ID.desktop" >"$share/applications/$APP_ID.desktop"
chmod 644 "$share/applications/$APP_ID.desktop"
files+=("$share/applications/$APP_ID.desktop")
put "$linux/$APP_ID.metainfo.xml" "$share/metainfo/$APP_ID.metainfo.xml"
while IFS= read -r icon; do
    put "$linux/icons/$icon" "$share/icons/$icon"
done < <(cd "$linux/icons" && find hicolor -type f | sort)

{
    for f in "${files[@]}"; do printf 'file %s\n' "$f"; done
    for d in "${made[@]}"; do
        [ "$d" = "$lib" ] || printf 'dir %s\n' "$d"
    done
} >"$manifest"
say "installed flagdesk $("$lib/flagdesk" --version | cut -d' ' -f2) in $lib; launcher: $share/applications/$APP_ID.desktop"
case ":$PATH:" in *":$bin:"*) ;; *) say "note: $bin is not on your PATH (the launcher works without it)" ;; esac

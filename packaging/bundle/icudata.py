"""A small ICU data library for the bundle (`make bundle`; packaging/bundle/flagdesk.spec).

PySide6's QtCore links against ICU, and ICU's data library, libicudata (31 MB: every locale's
names, calendars, units, currencies, time zones, transliterators, break rules, character-set
converters and collation tailorings) must be there or QtCore does not load (measured: the
bundle without it stops at `import PySide6.QtCore` with "libicudata.so.73: cannot open shared
object file"). Of ICU, Qt calls (QtCore alone, by its imported symbols) collation (QCollator:
the file dialog sorts its file list with it), locale-specific case mapping, time zone names
and character-set converters; flagdesk itself calls none of them (no QCollator, QTimeZone,
QStringConverter or QLocale::toUpper in ui/). This keeps the root collation (the Unicode
Collation Algorithm's order: English's and most locales') and builds a library of the same
name and symbol around it: 0.9 MB instead of 31.

What goes without the rest, measured with PySide6 against both libraries: a locale's own
collation tailoring (Swedish sorts Å and Ä with A, as English does, not after Z); time zone
display names (QTimeZone.displayName is empty; the zones themselves come from the system's tz
database, as on Linux anyway); QStringDecoder for encodings Qt has no codec of its own for
(Shift_JIS, ISO-8859-15: invalid; UTF-8/16/32 and Latin-1 are Qt's). Case mapping is unchanged
(its data is compiled into libicuuc: Turkish "istanbul" still upper-cases to "İSTANBUL"). ICU
answers a missing item with an error status and Qt falls back without a word (with no data at
all, QCollator says "Could not create collator"). tests/packaging/test_icudata.py checks it.

The data is ICU's "common data" format (icu4c/source/common/ucmndata.h): a header (its size in
the first two bytes), then the table of contents, a count and (name offset, data offset) pairs
relative to the count, names sorted (ICU finds items by binary search), the items 16-aligned.
The library is built with binutils' `as` and `ld` (Debian package binutils).
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: the items kept, by their name under the data's prefix (icudt73l/): the root collation
KEEP = ("coll/res_index.res", "coll/root.res", "coll/ucadata.icu")


def data_symbol(library: Path) -> tuple[str, bytes]:
    """(name, bytes) of the ICU data symbol (icudtNN_dat) a libicudata.so exports."""
    elf = library.read_bytes()
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError(f"{library}: not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strtab = sections[link][4]
        for at in range(offset, offset + size, entsize):
            st_name, _info, _other, shndx, value, st_size = struct.unpack_from("<IBBHQQ", elf, at)
            name = elf[strtab + st_name : elf.index(b"\0", strtab + st_name)].decode()
            if re.fullmatch(r"icudt\d+_dat", name):
                _n, _k, _f, sec_addr, sec_offset, *_ = sections[shndx]
                start = value - sec_addr + sec_offset
                return name, elf[start : start + st_size]
    raise ValueError(f"{library}: no icudtNN_dat symbol")


def items(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(header, [(name, item bytes), ...]) of an ICU common data file, in its order."""
    (header_size,) = struct.unpack_from("<H", data, 0)
    (count,) = struct.unpack_from("<I", data, header_size)
    toc = [struct.unpack_from("<II", data, header_size + 4 + 8 * i) for i in range(count)]
    out = []
    for i, (name_at, data_at) in enumerate(toc):
        end = toc[i + 1][1] if i + 1 < count else len(data) - header_size
        name_start = header_size + name_at
        name = data[name_start : data.index(b"\0", name_start)].decode()
        out.append((name, data[header_size + data_at : header_size + end]))
    return data[:header_size], out


def _pad(size: int) -> int:
    return -size % 16


def common_data(header: bytes, kept: Iterable[tuple[str, bytes]]) -> bytes:
    """An ICU common data file of `kept` (names in ICU's order, as `items` gives them)."""
    kept = list(kept)
    toc_size = 4 + 8 * len(kept)
    names = b"".join(name.encode() + b"\0" for name, _ in kept)
    first = toc_size + len(names)
    first += _pad(len(header) + first)
    entries, blobs, name_at, data_at = [], [], toc_size, first
    for name, blob in kept:
        entries.append(struct.pack("<II", name_at, data_at))
        name_at += len(name) + 1
        blobs.append(blob + b"\0" * _pad(len(blob)))
        data_at += len(blobs[-1])
    table = struct.pack("<I", len(kept)) + b"".join(entries) + names
    return header + table + b"\0" * (first - len(table)) + b"".join(blobs)


def build(original: Path, target: Path, keep: Iterable[str] = KEEP) -> Path:
    """Write at `target` a libicudata with `keep` of `original`'s items (same soname, same
    symbol); returns `target`."""
    symbol, data = data_symbol(original)
    header, everything = items(data)
    prefix = everything[0][0].split("/", 1)[0]  # icudt73l
    wanted = {f"{prefix}/{name}" for name in keep}
    kept = [(name, blob) for name, blob in everything if name in wanted]
    missing = wanted - {name for name, _ in kept}
    if missing:
        raise ValueError(f"{original}: no {', '.join(sorted(missing))} in its data")
    with tempfile.TemporaryDirectory() as tmp:
        dat = Path(tmp) / f"{prefix}.dat"
        dat.write_bytes(common_data(header, kept))
        asm = Path(tmp) / "icudata.s"
        asm.write_text(
            f"\t.section .rodata\n\t.globl {symbol}\n\t.type {symbol}, @object\n\t.balign 16\n"
            f'{symbol}:\n\t.incbin "{dat}"\n\t.size {symbol}, . - {symbol}\n'
            '\t.section .note.GNU-stack,"",@progbits\n'
        )
        obj = Path(tmp) / "icudata.o"
        subprocess.run(["as", "-o", str(obj), str(asm)], check=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ld", "-shared", "-soname", original.name, "-o", str(target), str(obj)],
                       check=True)  # fmt: skip
    return target

"""The bundle's small ICU data library (packaging/bundle/icudata.py): built from PySide6's own
libicudata with the root collation alone, it stands in for the 31 MB one (same soname, same
symbol) and QCollator still sorts by the Unicode collation, as the file dialog does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging" / "bundle"))
import icudata  # noqa: E402

#: the file dialog's order (QFileSystemModel: numeric, case-insensitive) of these names, as
#: PySide6's full ICU data sorts them in English
WORDS = ["file10", "File2", "éclair", "eclair", "Zebra", "apple", "Ärger", "arbeit", "zoo"]
ENGLISH = ["apple", "arbeit", "Ärger", "eclair", "éclair", "File2", "file10", "Zebra", "zoo"]

SORT = """
import functools, json, sys
from PySide6.QtCore import QCollator, QLocale, Qt
collator = QCollator(QLocale("en_US"))
collator.setNumericMode(True)
collator.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
icu = [line.split()[-1] for line in open("/proc/self/maps") if "libicudata" in line]
print(json.dumps({"sorted": sorted(sys.argv[1:], key=functools.cmp_to_key(collator.compare)),
                  "libicudata": sorted(set(icu))}))
"""


def _original() -> Path:
    import PySide6

    found = sorted((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.*"))
    assert found, "PySide6 ships no libicudata: packaging/bundle/flagdesk.spec needs a look"
    return found[0]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("as", "ld"):
        assert shutil.which(tool), f"{tool} is missing: run packaging/bootstrap.sh test"
    return icudata.build(_original(), tmp_path_factory.mktemp("icu") / _original().name)


def _sort_with(library: Path) -> dict[str, list[str]]:
    # a library preloaded under the soname QtCore asks for is the one it gets
    env = {**os.environ, "LD_PRELOAD": str(library), "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", SORT, *WORDS], env=env, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    # Qt says "Could not create collator" when ICU has no collation data
    assert "collator" not in result.stderr.lower(), result.stderr
    answer: dict[str, list[str]] = json.loads(result.stdout)
    return answer


def test_the_small_library_sorts_as_the_full_one(small: Path) -> None:
    assert small.stat().st_size < 2 * 2**20  # the full one: 31 MB
    answer = _sort_with(small)
    assert answer["libicudata"] == [str(small)]
    assert answer["sorted"] == ENGLISH


def test_the_full_library_sorts_so_too() -> None:
    # the order above is ICU's, not the plain comparison Qt falls back to without data
    assert _sort_with(_original())["sorted"] == ENGLISH


def test_common_data_rebuilt_whole_holds_the_same_items() -> None:
    _, data = icudata.data_symbol(_original())
    header, items = icudata.items(data)
    assert len(items) > 1000 and any(name.endswith("/coll/ucadata.icu") for name, _ in items)
    assert icudata.items(icudata.common_data(header, items)) == (header, items)

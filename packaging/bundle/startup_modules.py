"""The modules flagdesk's two processes import as they start, for the bundle's archive of Python
modules (`make bundle`; packaging/bundle/flagdesk.spec stores these uncompressed).

PyInstaller keeps a bundle's pure-Python modules as compiled code in one archive, each entry
compressed with zlib, and inflates an entry on every import. As the bundle starts, its window
and its sandbox child import about 500 of them: zlib was 147M of the child's 1,105M
instructions until it listened (callgrind), 993M in all with these stored. Measured
alternated against the compressed bundle: the child's first answers 0.026 s sooner and 0.04 s
less of its CPU (`bench/sandbox_boot.py --bundle --baseline`), the window's first data 0.025 s
and 0.041 s sooner in two runs (`bench/gui_startup.py --bundle`'s figures, 16 starts of each).
All stored, the archive is 9.4 MB larger and the bundle over its size goal (120 MB); the
modules imported at the start are 6.5 MB of it, and the rest stays compressed.

Which ones: everything importing flagdesk's own packages brings (every module of `app`, `ui`
and `sandbox`: a tool's page, built when first opened, is imported then), and what the start
imports by name later: httpx's transport (httpcore, h11, anyio's asyncio backend, on the first
request), uvicorn's event loop, HTTP protocol and lifespan (chosen by its configuration), and
qasync. A module left out by mistake is still in the archive, only compressed: it costs time,
never a failed import. packaging/tests/test_bundle.py checks the start's modules are stored.

Run by the spec in the build's Python, as a script: prints the names, one a line."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

#: imported by name, or on first use, as the window and its sandbox start (see above)
LATER = (
    "httpcore",
    "httpcore._async.connection_pool",
    "httpcore._async.http11",
    "h11",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
    "uvicorn.loops.asyncio",
    "uvicorn.loops.auto",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.lifespan.on",
    "uvicorn.lifespan.off",
    "qasync",
)

OWN = ("app", "ui", "sandbox")


def names() -> list[str]:
    """Import every module of flagdesk's own packages (not their `__main__`, which would run
    the program) and `LATER`; return what is imported then."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # nothing is shown: Qt is imported
    for name in OWN:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            if not module.name.endswith(".__main__"):
                importlib.import_module(module.name)
    for name in LATER:
        importlib.import_module(name)
    return sorted(sys.modules)


if __name__ == "__main__":
    print("\n".join(names()))

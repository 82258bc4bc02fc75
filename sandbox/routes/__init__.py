"""The sandbox's routes, one `APIRouter` per area of the API; `sandbox.app` includes them.

Every route reaches the store through one dependency (`deps.StoreDep`) and says who may call it
with `deps.Admin` or `deps.Client`.
"""

from __future__ import annotations

import importlib
import sys


def _skip_the_pydantic_v1_check() -> None:
    """FastAPI asks of every parameter and response type whether it is a pydantic v1 model, and
    imports `pydantic.v1` to ask: 60-80 ms of the sandbox's start (its routes use none), on the
    way to the GUI's first data. A class can only be a v1 model once `pydantic.v1` is imported,
    so while it is not, the answer is no without importing it. Only where FastAPI has this
    function; elsewhere its own check runs as before."""
    try:  # a private module of FastAPI's: a release without it only costs the time again
        _fastapi_compat = importlib.import_module("fastapi._compat.shared")
    except ImportError:
        return
    check = getattr(_fastapi_compat, "is_pydantic_v1_model_class", None)
    if check is None or getattr(check, "skips_unloaded_v1", False):
        return

    def is_pydantic_v1_model_class(cls: object) -> bool:
        return "pydantic.v1" in sys.modules and bool(check(cls))

    is_pydantic_v1_model_class.skips_unloaded_v1 = True  # type: ignore[attr-defined]
    _fastapi_compat.is_pydantic_v1_model_class = is_pydantic_v1_model_class  # type: ignore[attr-defined]


_skip_the_pydantic_v1_check()

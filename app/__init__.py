"""flagdesk: desktop administration for Unleash-compatible feature-flag servers."""

import os
import sys
import types

__version__ = "0.1.0"

# httpx imports its own command-line client as it is imported (`httpx._main`, which imports
# click, rich and pygments whenever they are installed; uvicorn always brings click), for an
# `httpx` command flagdesk never runs: 0.08 s of the window's way to its first data in the
# development environment, where all three are, and click's import in the bundle's. Marked
# absent here, before any module of flagdesk imports httpx: httpx then puts a stub in its place.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

#: pydantic's plugin loader, and the values of PYDANTIC_DISABLE_PLUGINS that turn every plugin off
PLUGIN_LOADER = "pydantic.plugin._loader"
NO_PLUGINS = ("__all__", "1", "true")


class PluginLoader(types.ModuleType):
    """pydantic's plugin loader, imported only when plugins may load.

    pydantic asks its loader for plugins as it builds its first validator, and the loader
    imports `importlib.metadata` (with `email`, `zipfile` and `csv`) as it is imported, even
    when PYDANTIC_DISABLE_PLUGINS turns every plugin off, as flagdesk's processes do: 10-14 ms
    of the bundle's window before its event loop, the same in its sandbox child (a sampling
    profile of `dist/flagdesk`). This stands in for it: with every plugin off it answers "none"
    as the loader would; otherwise, and for any other name, it imports the loader and defers
    to it."""

    def __init__(self) -> None:
        super().__init__(PLUGIN_LOADER)
        self._loader: types.ModuleType | None = None

    def get_plugins(self) -> object:
        if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in NO_PLUGINS:
            return ()
        return self.loader.get_plugins()

    @property
    def loader(self) -> types.ModuleType:
        """pydantic's own loader module (imported on first use, not put in `sys.modules`)."""
        if self._loader is None:
            import importlib.machinery
            import importlib.util

            import pydantic.plugin

            spec = importlib.machinery.PathFinder.find_spec(PLUGIN_LOADER, pydantic.plugin.__path__)
            if spec is None or spec.loader is None:
                raise ImportError(f"no module named {PLUGIN_LOADER!r}", name=PLUGIN_LOADER)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._loader = module
        return self._loader

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.loader, name)


sys.modules.setdefault(PLUGIN_LOADER, PluginLoader())

"""Every tool of the registry has a window (`ui.tool_page.WINDOWS`), a `ToolContent`, imported
only when its page is first shown."""

from __future__ import annotations

from app.registry import TOOLS
from ui.tool_page import WINDOWS, ToolContent, content_class


def test_every_tool_has_a_window() -> None:
    assert set(WINDOWS) == set(TOOLS)
    for tool in TOOLS:
        cls = content_class(tool)
        assert isinstance(cls, type) and issubclass(cls, ToolContent), tool.key
        assert content_class(tool.key) is cls

"""The sidebar's tools, as the view-models and windows name them: they are declared once, with
their actions and what each needs, in `app.registry` (this module only re-exports them)."""

from __future__ import annotations

from app.registry import GROUPS, TOOL, TOOLS, TOOLS_BY_KEY, Tool, camel

__all__ = ["GROUPS", "TOOL", "TOOLS", "TOOLS_BY_KEY", "Tool", "camel"]

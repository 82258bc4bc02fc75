"""View-model tests run on the same Qt and qasync fixtures as the window tests, without a
window."""

from tests.qt_fixtures import (  # noqa: F401 (fixtures)
    _fonts_exist,
    _free_closed_loops_on_gui_thread,
    arun,
    connect,
    qloop,
)

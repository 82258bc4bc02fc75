"""`make screenshots`: render every window offscreen against a demo sandbox into
docs/screenshots/, in the light and in a dark palette, plus the error state.

Run as `python -m ui.screenshots [OUT_DIR]` with QT_QPA_PLATFORM=offscreen.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import qasync
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from app.api.client import AdminClient
from app.api.errors import ClientError
from app.viewmodels.overview import OverviewModel
from sandbox.process import SandboxProcess
from ui.main_window import SANDBOX_SOURCE, MainWindow


def dark_palette() -> QPalette:
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#2b2d30",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1f22",
        QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#3c3f41",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.Highlight: "#2f65ca",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#3c3f41",
        QPalette.ColorRole.ToolTipText: "#e6e6e6",
        QPalette.ColorRole.PlaceholderText: "#8c8c8c",
        QPalette.ColorRole.Link: "#589df6",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    return p


async def settle(widget: QWidget) -> None:
    for _ in range(5):
        await asyncio.sleep(0.02)
        QApplication.processEvents()
    widget.repaint()


async def shoot(app: QApplication, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = SandboxProcess(Path(tmp) / "demo.sqlite3", "--demo")
        await asyncio.to_thread(sandbox.start)
        client = AdminClient(sandbox.url, sandbox.admin_token)

        async def connect() -> AdminClient:
            return client

        async def refuse() -> AdminClient:
            raise ClientError("Cannot reach http://127.0.0.1:9 (connection refused).")

        light = app.palette()
        try:
            for name, palette in (("light", light), ("dark", dark_palette())):
                app.setPalette(palette)
                for state, opener in (("", connect), ("-error", refuse)):
                    model = OverviewModel(opener, source=SANDBOX_SOURCE)
                    window = MainWindow(model)
                    window.resize(900, 560)
                    window.show()
                    await model.load()
                    await settle(window)
                    path = out / f"main_window{state}-{name}.png"
                    window.grab().save(str(path))
                    written.append(path)
                    window.close()
                    model.close()
        finally:
            app.setPalette(light)
            await client.aclose()
            await asyncio.to_thread(sandbox.stop)
    return written


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots")
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")  # the same look on every machine, so screenshots compare
    app.setQuitOnLastWindowClosed(False)  # each window is closed after its picture
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        written = loop.run_until_complete(shoot(app, out))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

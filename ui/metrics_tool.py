"""`MetricsTool`: the metrics tool's window, bound to `MetricsToolModel`.

Four tabs over one batch: Files (the sources with their formats and counts; empty, loading with
a byte progress and Cancel, or failed with Retry), Preview (totals, a chart of yes/no per
feature and per hour window, the rows, and the application items), Problems (errors and
warnings with file, line, column and JSON path; Save invalid items…) and Upload (the client
token, body limit and concurrency, Upload / Cancel, the progress in requests, the end report,
and Resume for unfinished uploads). Files come from Add files…, drag and drop, or the
clipboard (Ctrl+V).

The chart is drawn here with QPainter: QtCharts is in PySide6-Addons only (153 MiB more).
Everything else comes from the view-model; this module only shows and forwards.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, NamedTuple

from PySide6.QtCore import QEvent, QRect, QRectF, QSize, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QHelpEvent,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPalette,
    QShortcut,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QStyle,
    QTabWidget,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.text import counted
from app.viewmodels.metrics import (
    BULK_METRICS_BODY_LIMIT,
    CONTENT,
    DEFAULT_CONCURRENCY,
    EMPTY,
    FAILED,
    INVALID_NAME,
    LOADING,
    MAX_CONCURRENCY,
    MIN_MAX_BODY,
    RESEND_BUTTON,
    InputProblem,
    MetricsToolModel,
    Progress,
)
from app.viewmodels.metrics_inputs import EMPTY_TEXT, SourceRow, megabytes
from app.viewmodels.metrics_preview import NO_APPLICATIONS_TEXT, TOP_FEATURES, Bar
from app.viewmodels.metrics_uploads import progress_text
from app.viewmodels.session import Session
from ui.confirmation import ConfirmationBox, ConfirmationFlow
from ui.palette import is_dark
from ui.palette import quiet as quieten
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent

STEM = "metrics"

#: yes and no, in light and dark palettes: green, and a greyed red that reads on both
YES_COLOURS = ("#3a9a4b", "#55b866")
NO_COLOURS = ("#c0645c", "#d4847c")
#: application items the preview shows without scrolling
APPLICATION_ROWS = 4


class Ink(NamedTuple):
    """A chart's colours in the current palette."""

    yes: QColor
    no: QColor
    text: QColor
    grid: QColor


def compact(n: float) -> str:
    """An axis label or a bar's figure: 950, 1.2k, 12.5k, 340k, 1.5M."""
    for limit, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= limit * 0.9995:  # 999,999 is "1M", not "1000k"
            value = n / limit
            text = f"{value:.1f}" if value < 100 else f"{value:.0f}"
            return text.removesuffix(".0") + unit
    return f"{n:.0f}"


def _nice_max(value: int) -> int:
    """The axis' end: `value` rounded up to 1, 2 or 5 times a power of ten."""
    if value <= 0:
        return 1
    power = 1
    while power * 10 <= value:
        power *= 10
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


class BarChart(QWidget):
    """Yes and no stacked per bar: horizontal bars with their labels on the left (features),
    or columns over a time axis (hour windows). Hovering a bar shows its figures."""

    def __init__(
        self, name: str, title: str, *, horizontal: bool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setAccessibleName(title)
        self.title = title
        self.horizontal = horizontal
        self.bars: list[Bar] = []
        self._hit: list[tuple[QRectF, Bar]] = []
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setMinimumSize(240, 150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(380, 190)

    def set_bars(self, bars: list[Bar]) -> None:
        self.bars = list(bars)
        described = "; ".join(f"{b.label}: {b.yes:,} yes, {b.no:,} no" for b in self.bars[:20])
        self.setAccessibleDescription(described or "No metrics")
        self.update()

    # ------------------------------------------------------------------ drawing

    def _colours(self) -> Ink:
        palette = self.palette()
        dark = is_dark(palette)
        text = palette.color(QPalette.ColorRole.WindowText)
        grid = QColor(text)
        grid.setAlpha(45)
        return Ink(QColor(YES_COLOURS[dark]), QColor(NO_COLOURS[dark]), text, grid)

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        ink = self._colours()
        yes_c, no_c, text_c = ink.yes, ink.no, ink.text
        fm = QFontMetrics(self.font())
        line = fm.height()
        area = self.rect().adjusted(4, 2, -6, -4)
        # the title, and the legend on the right of it
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text_c)
        painter.drawText(area.left(), area.top() + fm.ascent(), self.title)
        painter.setFont(self.font())
        x = area.right()
        for label, colour in (("no", no_c), ("yes", yes_c)):
            width = fm.horizontalAdvance(label)
            x -= width
            painter.setPen(text_c)
            painter.drawText(x, area.top() + fm.ascent(), label)
            x -= 14
            painter.fillRect(QRect(x, area.top() + (line - 10) // 2, 10, 10), colour)
            x -= 12
        plot = area.adjusted(0, line + 6, 0, 0)
        self._hit = []
        if not self.bars or max(b.total for b in self.bars) == 0:
            painter.setPen(text_c)
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, "No metrics to show")
            return
        if self.horizontal:
            self._paint_horizontal(painter, plot, fm, ink)
        else:
            self._paint_columns(painter, plot, fm, ink)

    def _paint_horizontal(self, p: QPainter, plot: QRect, fm: QFontMetrics, ink: Ink) -> None:
        yes_c, no_c, text_c, grid_c = ink
        line = fm.height()
        # the scale is the features' own: the "others" bar (often the largest) is cut short
        # with a break mark and its figure, so it does not flatten every other bar
        named = [b.total for b in self.bars if not b.others] or [b.total for b in self.bars]
        top = _nice_max(max(named))
        label_w = min(max(fm.horizontalAdvance(b.label) for b in self.bars) + 8, plot.width() // 3)
        axis_h = line + 4
        x0 = plot.left() + label_w
        figure_w = max(fm.horizontalAdvance(compact(b.total)) for b in self.bars) + 8
        width = plot.right() - x0 - max(figure_w, fm.horizontalAdvance(compact(top)) // 2 + 2)
        rows_h = plot.height() - axis_h
        step = min(line + 8, rows_h / len(self.bars))
        bar_h = max(3.0, step * 0.66)
        # grid and the axis' figures
        for k in range(5):
            gx = x0 + width * k / 4
            p.setPen(grid_c)
            p.drawLine(int(gx), plot.top(), int(gx), int(plot.top() + step * len(self.bars)))
            p.setPen(text_c)
            label = compact(top * k / 4)
            lw = fm.horizontalAdvance(label)
            y_axis = int(plot.top() + step * len(self.bars) + fm.ascent() + 2)
            p.drawText(int(gx - lw / 2) if k else int(gx), y_axis, label)
        background = self.palette().color(QPalette.ColorRole.Window)
        for n, bar in enumerate(self.bars):
            row = QRectF(plot.left(), plot.top() + n * step, plot.width(), step)
            y = row.top() + (step - bar_h) / 2
            name = fm.elidedText(bar.label, Qt.TextElideMode.ElideMiddle, label_w - 8)
            p.setPen(text_c)
            p.drawText(
                QRectF(plot.left(), row.top(), label_w - 8, step),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                name,
            )
            cut = bar.total > top
            scale = width / (bar.total if cut else top)
            yes_w, no_w = bar.yes * scale, bar.no * scale
            p.fillRect(QRectF(x0, y, yes_w, bar_h), yes_c)
            p.fillRect(QRectF(x0 + yes_w, y, no_w, bar_h), no_c)
            if cut:  # a break mark: two slanted strokes across the bar
                p.setPen(background)
                for dx in (0.0, 4.0):
                    bx = x0 + width * 0.82 + dx
                    p.drawLine(int(bx - 2), int(y + bar_h + 1), int(bx + 2), int(y - 1))
            p.setPen(text_c)
            end = x0 + (yes_w + no_w if not cut else width)
            p.drawText(
                QRectF(end + 4, row.top(), figure_w, step),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                compact(bar.total),
            )
            self._hit.append((row, bar))

    def _paint_columns(self, p: QPainter, plot: QRect, fm: QFontMetrics, ink: Ink) -> None:
        yes_c, no_c, text_c, grid_c = ink
        line = fm.height()
        top = _nice_max(max(b.total for b in self.bars))
        axis_w = max(fm.horizontalAdvance(compact(top * k / 4)) for k in range(5)) + 6
        x0 = plot.left() + axis_w
        bottom = plot.bottom() - 2 * line - 4
        height = bottom - plot.top()
        width = plot.right() - x0
        for k in range(5):
            gy = bottom - height * k / 4
            p.setPen(grid_c)
            p.drawLine(x0, int(gy), plot.right(), int(gy))
            p.setPen(text_c)
            label = compact(top * k / 4)
            p.drawText(
                QRectF(plot.left(), gy - line / 2, axis_w - 6, line),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                label,
            )
        slot = width / len(self.bars)
        bar_w = max(1.0, min(slot * 0.7, 40.0))
        every = max(1, math.ceil((fm.horizontalAdvance("00:00") + 8) / slot))
        last_day = ""
        day_end = float(x0)
        for n, bar in enumerate(self.bars):
            x = x0 + n * slot + (slot - bar_w) / 2
            yes_h = height * bar.yes / top
            no_h = height * bar.no / top
            p.fillRect(QRectF(x, bottom - yes_h, bar_w, yes_h), yes_c)
            p.fillRect(QRectF(x, bottom - yes_h - no_h, bar_w, no_h), no_c)
            self._hit.append((QRectF(x0 + n * slot, plot.top(), slot, plot.height()), bar))
            if n % every:
                continue
            centre = x0 + n * slot + slot / 2
            p.setPen(text_c)
            lw = fm.horizontalAdvance(bar.label)
            lx = min(max(centre - lw / 2, x0), plot.right() - lw)
            p.drawText(int(lx), int(bottom + fm.ascent() + 3), bar.label)
            if bar.sublabel and bar.sublabel != last_day and lx >= day_end:
                # the date under the first hour shown of each day, where it does not run
                # into the date before it
                last_day = bar.sublabel
                dw = fm.horizontalAdvance(bar.sublabel)
                dx = min(lx, plot.right() - dw)
                p.drawText(int(dx), int(bottom + line + fm.ascent() + 3), bar.sublabel)
                day_end = dx + dw + 8

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            at = event.pos()
            for rect, bar in self._hit:
                if rect.contains(at.x(), at.y()):
                    QToolTip.showText(event.globalPos(), bar.tooltip, self)
                    return True
            QToolTip.hideText()
            event.ignore()
            return True
        return super().event(event)


def _label(name: str, text: str = "", *, wrap: bool = True, quiet: bool = False) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if quiet:
        quieten(label)  # a remark, in the palette's quieter text colour
    return label


def _button(name: str, text: str, accessible: str, tip: str = "") -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    button.setAccessibleName(accessible)
    if tip:
        button.setToolTip(tip)
    return button


def _spin(name: str, accessible: str, low: int, high: int, value: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setAccessibleName(accessible)
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setGroupSeparatorShown(True)
    edit = spin.findChild(QLineEdit)
    if edit is not None:
        edit.setObjectName(f"{name}Edit")
        edit.setAccessibleName(accessible)
    return spin


class MetricsTool(ToolContent):
    #: files are read and checked with no connection, or one without a client token: the page
    #: should leave this window enabled (see the ToolPage change asked for in issue 6's notes)
    usable_when_unavailable = True
    model: MetricsToolModel

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("metricsTool")
        self.setAcceptDrops(True)
        self.model = MetricsToolModel(session, self)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)

        # ---- the toolbar: inputs
        bar = QHBoxLayout()
        self.add_button = _button(
            f"{STEM}AddFilesButton", "Add files…", "Add metrics files",
            "Add metrics files (or drop them on this window)",
        )  # fmt: skip
        self.paste_button = _button(
            f"{STEM}PasteButton", "Paste", "Paste a batch from the clipboard",
            "Read a batch from the clipboard (Ctrl+V)",
        )  # fmt: skip
        self.remove_button = _button(
            f"{STEM}RemoveButton", "Remove", "Remove the selected files",
            "Remove the selected files from the batch (Delete)",
        )  # fmt: skip
        self.clear_button = _button(f"{STEM}ClearButton", "Clear", "Remove every file")
        for button in (self.add_button, self.paste_button, self.remove_button, self.clear_button):
            bar.addWidget(button)
        self.summary_label = _label(f"{STEM}Summary", wrap=False)
        bar.addSpacing(8)
        bar.addWidget(self.summary_label, 1)
        outer.addLayout(bar)
        self.notice_label = _label(f"{STEM}Notice", quiet=True)
        self.notice_label.hide()
        outer.addWidget(self.notice_label)

        self.tabs = QTabWidget()
        self.tabs.setObjectName(f"{STEM}Tabs")
        self.tabs.setAccessibleName("Metrics tool sections")
        self.tabs.tabBar().setObjectName(f"{STEM}TabBar")
        self.tabs.tabBar().setAccessibleName("Files, preview, problems and upload")
        self.tabs.setDocumentMode(True)
        outer.addWidget(self.tabs, 1)
        self._build_files_tab()
        self._build_preview_tab()
        self._build_problems_tab()
        self._build_upload_tab()

        paste = QShortcut(QKeySequence(QKeySequence.StandardKey.Paste), self)
        paste.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        paste.activated.connect(self.on_paste_button_clicked)
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.sources.view)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.on_remove_button_clicked)

        m = self.model
        self.add_button.clicked.connect(self.on_add_button_clicked)
        self.paste_button.clicked.connect(self.on_paste_button_clicked)
        self.remove_button.clicked.connect(self.on_remove_button_clicked)
        self.clear_button.clicked.connect(self.on_clear_button_clicked)
        # not `start_model()`: the files part's states show reading with its progress, and
        # Retry reads the files again (`reload`), none of it waiting for a connection
        m.phase_changed.connect(self.on_model_phase_changed)
        m.inputs_changed.connect(self.on_model_inputs_changed)
        m.load_progress.connect(self.on_model_load_progress)
        m.status_changed.connect(self.on_model_status_changed)
        m.notice_changed.connect(self.on_model_notice_changed)
        m.preview_changed.connect(self.on_model_preview_changed)
        m.problems_changed.connect(self.on_model_problems_changed)
        m.upload_state_changed.connect(self.on_model_upload_state_changed)
        m.upload_progress.connect(self.on_model_upload_progress)
        m.report_changed.connect(self.on_model_report_changed)
        m.unfinished_changed.connect(self.on_model_unfinished_changed)
        self.sources.view.selectionModel().selectionChanged.connect(self._update_buttons)
        m.start()
        self.on_model_phase_changed()
        self.on_model_inputs_changed()
        self.on_model_preview_changed()
        self.on_model_problems_changed()
        self.on_model_unfinished_changed()
        self.on_model_report_changed()

    # ------------------------------------------------------------------ building

    def _build_files_tab(self) -> None:
        body = QWidget()
        body.setObjectName(f"{STEM}FilesBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 6, 0, 0)
        self.sources = DataTable(
            f"{STEM}Sources", self.model.sources, noun="files", stretch_column=0,
            count_text=counted("file"),
        )  # fmt: skip
        layout.addWidget(self.sources, 1)
        hint = _label(
            f"{STEM}FilesHint",
            "Drop more files here, or paste a batch with Ctrl+V. Each file is read and checked "
            "on its own; the preview and the upload take them all together.",
            quiet=True,
        )
        layout.addWidget(hint)
        self.files_states = StatePanel(f"{STEM}Files", body)
        # the loading page counts bytes and can be cancelled
        self.files_states.loading_bar.setRange(0, 1000)
        self.load_cancel_button = _button(
            f"{STEM}LoadCancelButton", "Cancel", "Cancel reading the files"
        )
        loading = self.files_states.loading_page.layout()
        assert isinstance(loading, QVBoxLayout)
        loading.insertWidget(3, self.load_cancel_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self.load_cancel_button.clicked.connect(self.model.cancel_load)
        self.files_states.retry_requested.connect(self.on_states_retry_requested)
        self.tabs.addTab(self.files_states, "Files")

    def _build_preview_tab(self) -> None:
        body = QWidget()
        body.setObjectName(f"{STEM}PreviewBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        figures = QGridLayout()
        figures.setHorizontalSpacing(18)
        figures.setVerticalSpacing(0)
        self.figure_labels: dict[str, QLabel] = {}
        titles = ["Metrics", "Yes", "No", "Variants", "Applications", "Features", "Hour windows"]
        for column, title in enumerate(titles):
            name = title.replace(" ", "")
            caption = _label(f"{STEM}{name}Caption", title, wrap=False, quiet=True)
            value = _label(f"{STEM}{name}Figure", "0", wrap=False)
            bold = QFont(value.font())
            bold.setBold(True)
            bold.setPointSizeF(bold.pointSizeF() * 1.15)
            value.setFont(bold)
            figures.addWidget(caption, 0, column)
            figures.addWidget(value, 1, column)
            self.figure_labels[title] = value
        figures.setColumnStretch(len(titles), 1)
        layout.addLayout(figures)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName(f"{STEM}PreviewSplitter")
        splitter.setChildrenCollapsible(False)
        charts = QWidget()
        charts.setObjectName(f"{STEM}Charts")
        row = QHBoxLayout(charts)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(16)
        self.feature_chart = BarChart(
            f"{STEM}FeatureChart", f"Per feature (top {TOP_FEATURES})", horizontal=True
        )
        self.window_chart = BarChart(
            f"{STEM}WindowChart", "Per hour window (UTC)", horizontal=False
        )
        row.addWidget(self.feature_chart, 1)
        row.addWidget(self.window_chart, 1)
        splitter.addWidget(charts)
        # under the rows, the application items: a short table as high as its rows need (up
        # to APPLICATION_ROWS, then it scrolls), or one line saying there are none
        lower = QWidget()
        lower.setObjectName(f"{STEM}PreviewTables")
        tables = QVBoxLayout(lower)
        tables.setContentsMargins(0, 0, 0, 0)
        tables.setSpacing(8)
        self.rows = DataTable(f"{STEM}Rows", self.model.rows, noun="rows", stretch_column=0)
        tables.addWidget(self.rows, 1)
        self.applications = DataTable(
            f"{STEM}Applications", self.model.applications, noun="application items",
            stretch_column=None, count_text=counted("application item"),
        )  # fmt: skip
        # the nine columns are often wider than the window: each keeps its fitted width (the
        # table scrolls), and the last one takes what room is left
        self.applications.view.horizontalHeader().setStretchLastSection(True)
        tables.addWidget(self.applications, 0)
        self.no_applications_label = _label(
            f"{STEM}NoApplications", NO_APPLICATIONS_TEXT, wrap=False, quiet=True
        )
        self.no_applications_label.hide()
        tables.addWidget(self.no_applications_label, 0)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        header = self.applications.view.horizontalHeader()
        header.sectionResized.connect(self._fit_applications_height)
        header.geometriesChanged.connect(self._fit_applications_height)
        layout.addWidget(splitter, 1)
        self.preview_states = StatePanel(f"{STEM}Preview", body)
        self.tabs.addTab(self.preview_states, "Preview")

    def _build_problems_tab(self) -> None:
        page = QWidget()
        page.setObjectName(f"{STEM}ProblemsPage")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 6, 0, 0)
        self.problems = DataTable(
            f"{STEM}Problems", self.model.problems, noun="problems", stretch_column=5,
            count_text=counted("problem"),
        )  # fmt: skip
        layout.addWidget(self.problems, 1)
        self.problem_detail = _label(f"{STEM}ProblemDetail")
        self.problem_detail.hide()
        layout.addWidget(self.problem_detail)
        self.problems.current_changed.connect(self.on_problems_current_changed)
        row = QHBoxLayout()
        self.checks_label = _label(f"{STEM}ChecksNote", quiet=True)
        row.addWidget(self.checks_label, 1)
        self.save_invalid_button = _button(
            f"{STEM}SaveInvalidButton", "Save invalid items…",
            "Save the invalid items to a file",
            "Save the items left out of the upload, with their problems, one JSON object a line",
        )  # fmt: skip
        row.addWidget(self.save_invalid_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(row)
        self.save_invalid_button.clicked.connect(self.on_save_invalid_button_clicked)
        self.tabs.addTab(page, "Problems")

    def _build_upload_tab(self) -> None:
        page = QWidget()
        page.setObjectName(f"{STEM}UploadPage")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.setSpacing(8)
        self.server_label = _label(f"{STEM}Server")
        layout.addWidget(self.server_label)

        # ---- the client token, asked for when the connection has none that works
        self.token_box = QFrame()
        self.token_box.setObjectName(f"{STEM}TokenBox")
        self.token_box.setFrameShape(QFrame.Shape.StyledPanel)
        token = QVBoxLayout(self.token_box)
        token.setContentsMargins(10, 8, 10, 8)
        self.token_reason = _label(f"{STEM}TokenReason")
        token.addWidget(self.token_reason)
        token_row = QHBoxLayout()
        caption = QLabel("Client token:")
        caption.setObjectName(f"{STEM}ClientTokenCaption")
        self.token_edit = QLineEdit()
        self.token_edit.setObjectName(f"{STEM}ClientTokenEdit")
        self.token_edit.setAccessibleName("Client token")
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setPlaceholderText("project:environment.secret")
        caption.setBuddy(self.token_edit)
        token_row.addWidget(caption)
        token_row.addWidget(self.token_edit, 1)
        self.save_token_button = _button(
            f"{STEM}SaveTokenButton", "Save in profile", "Save the client token in the profile"
        )
        token_row.addWidget(self.save_token_button)
        token.addLayout(token_row)
        self.token_note = _label(
            f"{STEM}TokenNote",
            "Kept in memory for this run only, unless you save it in the connection's profile.",
            quiet=True,
        )
        token.addWidget(self.token_note)
        layout.addWidget(self.token_box)

        # ---- how to send
        form = QHBoxLayout()
        settings = QFormLayout()
        settings.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.max_body_spin = _spin(
            f"{STEM}MaxBodySpin",
            "Largest request body in bytes",
            MIN_MAX_BODY,
            64 << 20,
            BULK_METRICS_BODY_LIMIT,
        )
        self.max_body_spin.setSuffix(" bytes")
        self.max_body_spin.setToolTip(
            f"Each request body stays within this many bytes (Unleash refuses more than "
            f"{BULK_METRICS_BODY_LIMIT:,} with 413)"
        )
        self.concurrency_spin = _spin(
            f"{STEM}ConcurrencySpin", "Requests at a time", 1, MAX_CONCURRENCY, DEFAULT_CONCURRENCY
        )
        self.environment_combo = QComboBox()
        self.environment_combo.setObjectName(f"{STEM}EnvironmentCombo")
        self.environment_combo.setAccessibleName("Environment of SDK payloads that name none")
        self.environment_combo.setEditable(True)
        self.environment_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.environment_combo.setMinimumContentsLength(16)
        line = self.environment_combo.lineEdit()
        assert line is not None
        line.setPlaceholderText("the client token's")
        line.setObjectName(f"{STEM}EnvironmentEdit")
        line.setAccessibleName("Environment of SDK payloads that name none")
        self.environment_combo.setToolTip(
            "The environment SDK payloads without one are sent for (as flagdesk metrics upload "
            "--environment NAME); empty: the client token's, where Unleash counts the SDK's own "
            "posts"
        )
        self.send_dropped_check = QCheckBox("Send metrics the server would drop")
        self.send_dropped_check.setObjectName(f"{STEM}SendDroppedCheck")
        self.send_dropped_check.setToolTip(
            "As --send-dropped: metrics for another environment than the client token's, or "
            "with yes and no both 0, are sent once you confirm (the server answers 202 and does "
            "not count them)"
        )
        settings.addRow("Largest body:", self.max_body_spin)
        settings.addRow("Requests at a time:", self.concurrency_spin)
        settings.addRow("SDK payload environment:", self.environment_combo)
        settings.addRow("", self.send_dropped_check)
        form.addLayout(settings)
        form.addStretch(1)
        buttons = QVBoxLayout()
        self.upload_button = _button(
            f"{STEM}UploadButton", "Upload", "Upload the metrics",
            "Split the batch into bodies and send them; a ledger keeps track of each",
        )  # fmt: skip
        self.upload_button.setDefault(True)
        self.cancel_button = _button(
            f"{STEM}CancelButton", "Cancel", "Cancel the upload",
            "Start no new request; the ones in flight get their answers. Resume sends the rest.",
        )  # fmt: skip
        buttons.addWidget(self.upload_button)
        buttons.addWidget(self.cancel_button)
        form.addLayout(buttons)
        layout.addLayout(form)
        self.upload_reason = _label(f"{STEM}UploadReason", quiet=True)
        layout.addWidget(self.upload_reason)

        # ---- progress and the end report
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName(f"{STEM}UploadProgress")
        self.progress_bar.setAccessibleName("Requests done")
        self.progress_bar.setFormat("%v of %m requests")
        layout.addWidget(self.progress_bar)
        self.progress_label = _label(f"{STEM}ProgressText", wrap=False)
        layout.addWidget(self.progress_label)
        self.report_label = _label(f"{STEM}Report")
        layout.addWidget(self.report_label)
        report_buttons = QHBoxLayout()
        self.retry_button = _button(f"{STEM}UploadRetryButton", "Retry", "Try the upload again")
        self.open_folder_button = _button(
            f"{STEM}OpenFolderButton", "Open folder", "Open the upload's folder",
            "The ledger, the copy of the bodies, and the invalid and rejected items",
        )  # fmt: skip
        self.again_button = _button(
            f"{STEM}UploadAgainButton", "Upload again", "Upload this batch again",
            "This server accepted this batch before: sending it again makes it count the "
            "metrics twice",
        )  # fmt: skip
        self.resume_offer_button = _button(
            f"{STEM}ResumeOfferButton", "Resume it", "Resume the unfinished upload of this batch",
            "Send the bodies of the earlier upload that have no answer yet",
        )  # fmt: skip
        self.resend_button = _button(
            f"{STEM}ResendInDoubtButton", RESEND_BUTTON, "Send the bodies in doubt again",
            "flagdesk cannot tell whether the server counted them: it may count them twice",
        )  # fmt: skip
        self.resend_flow = ConfirmationFlow(self, self.make_resend_box, self.on_resend_confirmed)
        self.dropped_flow = ConfirmationFlow(self, self.make_dropped_box, self.on_dropped_confirmed)
        report_buttons.addWidget(self.retry_button)
        report_buttons.addWidget(self.resume_offer_button)
        report_buttons.addWidget(self.again_button)
        report_buttons.addWidget(self.resend_button)
        report_buttons.addWidget(self.open_folder_button)
        report_buttons.addStretch(1)
        layout.addLayout(report_buttons)
        self.rejections = DataTable(
            f"{STEM}Rejections", self.model.rejections, noun="rejected bodies", stretch_column=3,
            count_text=counted("rejected body", "rejected bodies"),
        )  # fmt: skip
        layout.addWidget(self.rejections, 1)
        self.upload_spacer = QWidget()
        self.upload_spacer.setObjectName(f"{STEM}UploadSpacer")
        self.upload_spacer.setSizePolicy(QSizePolicy.Policy.Preferred,
                                         QSizePolicy.Policy.Expanding)  # fmt: skip
        layout.addWidget(self.upload_spacer, 1)

        # ---- unfinished uploads
        resume = QHBoxLayout()
        caption = QLabel("Unfinished:")
        caption.setObjectName(f"{STEM}UnfinishedCaption")
        self.unfinished_combo = QComboBox()
        self.unfinished_combo.setObjectName(f"{STEM}UnfinishedCombo")
        self.unfinished_combo.setAccessibleName("Unfinished uploads")
        self.unfinished_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.unfinished_combo.setMinimumContentsLength(30)
        caption.setBuddy(self.unfinished_combo)
        self.resume_button = _button(
            f"{STEM}ResumeButton", "Resume", "Resume the chosen upload",
            "Send the bodies of this upload that have no answer yet",
        )  # fmt: skip
        resume.addWidget(caption)
        resume.addWidget(self.unfinished_combo, 1)
        resume.addWidget(self.resume_button)
        layout.addLayout(resume)
        self.resume_reason = _label(f"{STEM}ResumeReason", quiet=True)
        layout.addWidget(self.resume_reason)

        self.token_edit.textChanged.connect(self.model.set_typed_token)
        self.environment_combo.editTextChanged.connect(self.model.set_environment_override)
        self.save_token_button.clicked.connect(self.model.save_token_to_profile)
        self.upload_button.clicked.connect(self.on_upload_button_clicked)
        self.cancel_button.clicked.connect(self.model.cancel_upload)
        self.retry_button.clicked.connect(self.model.retry_upload)
        self.again_button.clicked.connect(self.model.upload_again)
        self.resume_offer_button.clicked.connect(self.model.resume_offered)
        self.resend_button.clicked.connect(self.on_resend_button_clicked)
        self.open_folder_button.clicked.connect(self.on_open_folder_button_clicked)
        self.resume_button.clicked.connect(self.on_resume_button_clicked)
        self.unfinished_combo.currentIndexChanged.connect(self.on_model_upload_state_changed)
        self.tabs.addTab(page, "Upload")

    # ------------------------------------------------------------------ input

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_files(event) and not self.model.loading:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        files = self._dropped_files(event)
        if files:
            event.acceptProposedAction()
            self.add_files(files)

    @staticmethod
    def _dropped_files(event: QDropEvent | QDragEnterEvent) -> list[str]:
        mime = event.mimeData()
        if not mime.hasUrls():
            return []
        return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]

    def add_files(self, paths: list[str]) -> None:
        """Add these files (as Add files… and a drop do)."""
        if self.model.add_files(paths) is not None:
            self.tabs.setCurrentIndex(0)

    def on_add_button_clicked(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            "Add metrics files",
            "",
            "Metrics (*.json *.ndjson *.jsonl *.txt);;All files (*)",
        )
        if paths:
            self.add_files(paths)

    def on_paste_button_clicked(self) -> None:
        if self.model.loading:
            return
        text = QGuiApplication.clipboard().text()
        if self.model.add_text(text) is not None:
            self.tabs.setCurrentIndex(0)

    def selected_inputs(self) -> list[Any]:
        rows = self.sources.view.selected_rows()
        return [self.model.sources.row_at(r).input for r in rows]

    def on_remove_button_clicked(self) -> None:
        self.model.remove(self.selected_inputs())

    def on_clear_button_clicked(self) -> None:
        self.model.clear()

    def on_states_retry_requested(self) -> None:
        self.model.reload()

    def on_save_invalid_button_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save invalid items", INVALID_NAME, "NDJSON (*.ndjson);;All files (*)"
        )
        if path:
            self.model.save_invalid(path)

    # ------------------------------------------------------------------ upload

    def on_upload_button_clicked(self) -> None:
        question = self.model.dropped_question
        if self.send_dropped_check.isChecked() and question:
            self.dropped_flow.ask(question)  # sent once confirmed
            return
        self.model.upload(self.max_body_spin.value(), self.concurrency_spin.value())

    def _send_anyway_box(self, name: str, title: str, question: str, note: str) -> ConfirmationBox:
        """A question before something is sent that may not count as the person expects."""
        box = ConfirmationBox(f"{STEM}{name}", title, question, [note], "Send anyway", self)
        box.plan = question
        return box

    def make_dropped_box(self, question: str) -> ConfirmationBox:
        return self._send_anyway_box(
            "SendDroppedBox",
            "Send metrics the server will drop?",
            question,
            "Set the environment of SDK payloads above, or fix the files, to have them counted.",
        )

    def on_dropped_confirmed(self, _question: object) -> None:
        self.model.upload(
            self.max_body_spin.value(), self.concurrency_spin.value(), send_dropped=True
        )

    def on_resume_button_clicked(self) -> None:
        item = self._chosen_unfinished()
        if item is not None:
            self.model.resume(item, self.concurrency_spin.value())

    def _chosen_unfinished(self) -> Any:
        index = self.unfinished_combo.currentIndex()
        items = self.model.unfinished
        return items[index] if 0 <= index < len(items) else None

    def on_open_folder_button_clicked(self) -> None:
        folder = self.model.report_folder
        if folder is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        phase = self.model.phase
        if phase == LOADING:
            # the phase is said again on busy, error and connection changes: the bar goes on
            if self.files_states.state != StatePanel.LOADING:
                self.files_states.show_loading(self.model.status or "Reading…")
                self.files_states.loading_bar.setValue(0)
        elif phase == FAILED:
            self.files_states.show_error("Could not read the files", self.model.load_error)
        elif phase == EMPTY:
            self.files_states.show_empty("No metrics files yet", EMPTY_TEXT)
        else:
            assert phase == CONTENT
            self.files_states.show_content()
        self._update_buttons()

    def on_model_load_progress(self, done: int, total: int) -> None:
        bar = self.files_states.loading_bar
        bar.setValue(int(1000 * done / total) if total else 1000)
        status = self.model.status or "Reading…"
        self.files_states.loading_label.setText(
            f"{status}\n{megabytes(done)} of {megabytes(total)}"
        )

    def on_model_status_changed(self, text: str) -> None:
        if text and self.files_states.state == StatePanel.LOADING:
            done, total = self.model.loaded_bytes
            self.files_states.loading_label.setText(
                f"{text}\n{megabytes(done)} of {megabytes(total)}" if total else text
            )

    def on_model_notice_changed(self, text: str) -> None:
        self.notice_label.setText(text)
        self.notice_label.setVisible(bool(text))

    def on_model_inputs_changed(self) -> None:
        m = self.model
        self.summary_label.setText(m.summary())
        count = len(m.inputs)
        self.tabs.setTabText(0, f"Files ({count})" if count else "Files")
        if count:
            first = Path(m.inputs[0].name).name or m.inputs[0].name
            self.title_changed.emit(first if count == 1 else f"{first} and {count - 1} more")
        else:
            self.title_changed.emit("")
        self._update_buttons()

    def _update_buttons(self, *_: object) -> None:
        m = self.model
        idle = not m.loading
        self.add_button.setEnabled(idle)
        self.paste_button.setEnabled(idle)
        self.remove_button.setEnabled(idle and bool(self.sources.view.selected_rows()))
        self.clear_button.setEnabled(idle and bool(m.inputs))

    def on_model_preview_changed(self) -> None:
        preview = self.model.preview
        if preview is None or not self.model.inputs:
            self.preview_states.show_empty(
                "Nothing to preview", "Add metrics files, or paste a batch, to see their totals."
            )
            return
        for title, value, explanation in preview.figures:
            label = self.figure_labels[title]
            label.setText(f"{value:,}")
            label.setToolTip(explanation)
            label.setAccessibleName(f"{title}: {value:,}")
        self.feature_chart.set_bars(preview.features)
        self.window_chart.set_bars(preview.windows)
        has_applications = self.model.applications.total_count > 0
        self.applications.setVisible(has_applications)
        self.no_applications_label.setVisible(not has_applications)
        self._fit_applications_height()
        self.preview_states.show_content()
        self.summary_label.setText(self.model.summary())

    def _fit_applications_height(self, *_: object) -> None:
        """The applications table as high as its rows need (at most APPLICATION_ROWS, then it
        scrolls), so that a batch of two registrations leaves the metric rows their room."""
        view = self.applications.view
        header = view.horizontalHeader()
        count = self.model.applications.total_count  # not the filter's: typing keeps the height
        rows = min(max(count, 1), APPLICATION_ROWS)
        height = header.sizeHint().height() + rows * view.verticalHeader().defaultSectionSize()
        height += 2 * view.frameWidth()
        scroll = view.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, view)
        width = view.width() - 2 * view.frameWidth() - (scroll if count > APPLICATION_ROWS else 0)
        if header.length() > width:  # the horizontal scroll bar takes a row's place
            height += scroll
        if view.height() != height or view.minimumHeight() != height:
            view.setFixedHeight(height)

    def on_model_problems_changed(self) -> None:
        m = self.model
        errors, warnings = m.error_count, m.warning_count
        total = errors + warnings
        self.tabs.setTabText(2, f"Problems ({total:,})" if total else "Problems")
        self.checks_label.setText(m.checks_note)
        self.save_invalid_button.setEnabled(m.invalid_count > 0)
        self.summary_label.setText(m.summary())

    def on_problems_current_changed(self, problem: object) -> None:
        """The chosen problem in full (a long message does not fit its cell)."""
        text = f"{problem.severity}: {problem}" if isinstance(problem, InputProblem) else ""
        self.problem_detail.setText(text)
        self.problem_detail.setVisible(bool(text))

    def on_model_upload_state_changed(self, *_: object) -> None:
        m = self.model
        s = m.session
        if s.ready:
            source = m.token_source
            self.server_label.setText(
                f"Sends to <b>{s.url}</b>" + (f" with {source}." if source else ".")
            )
        else:
            self.server_label.setText("Not connected.")
        self.token_box.setVisible(m.needs_token)
        self.token_reason.setText(m.token_reason)
        if self.token_edit.text().strip() != m.typed_token:
            self.token_edit.blockSignals(True)
            self.token_edit.setText(m.typed_token)
            self.token_edit.blockSignals(False)
        profile = m.profile_name
        self.save_token_button.setVisible(profile is not None)
        self.save_token_button.setEnabled(bool(m.typed_token) and not m.uploading)
        if profile is not None:
            self.save_token_button.setToolTip(f"Keep it in the profile {profile!r}")
        self.token_note.setText(
            m.token_message
            or "Kept in memory for this run only"
            + (", unless you save it in the profile." if profile else ".")
        )
        reason = m.upload_reason
        notes = []
        if not reason and m.report is None and m.invalid_count:
            notes.append(
                f"{m.invalid_count:,} invalid items will be left out, and saved as {INVALID_NAME} "
                "in the upload's folder."
            )
        if not reason and m.report is None and m.warning_count:
            notes.append(f"{m.warning_count:,} warnings: see Problems.")
        text = reason or " ".join(notes)
        self.upload_reason.setText(text)
        self.upload_reason.setVisible(bool(text))
        self.upload_button.setEnabled(not reason)
        self.cancel_button.setEnabled(m.uploading)
        self.max_body_spin.setEnabled(not m.uploading)
        self.concurrency_spin.setEnabled(not m.uploading)
        self.environment_combo.setEnabled(not m.uploading)
        self.send_dropped_check.setEnabled(not m.uploading)
        self._offer_environments()
        item = self._chosen_unfinished()
        why = m.resume_reason(item) if m.unfinished else ""
        self.resume_button.setEnabled(item is not None and not why)
        self.resume_reason.setText(why)
        self.resume_reason.setVisible(bool(why) and item is not None)
        uploading = m.uploading
        self.resend_button.setVisible(bool(m.resend_question))
        self.progress_bar.setVisible(uploading or m.progress is not None)
        self.progress_label.setVisible(uploading or m.progress is not None)

    def _offer_environments(self) -> None:
        """The environment field's choices (the token's, the batch's), keeping what is typed."""
        combo = self.environment_combo
        choices = self.model.environment_choices
        if [combo.itemText(i) for i in range(combo.count())] == choices:
            return
        text = combo.currentText()
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(choices)
        combo.setEditText(text)
        combo.blockSignals(False)

    def on_model_upload_progress(self, progress: Progress) -> None:
        self.progress_bar.setVisible(True)
        self.progress_label.setVisible(True)
        self.progress_bar.setRange(0, max(1, progress.requests_total))
        self.progress_bar.setValue(progress.requests_done)
        self.progress_label.setText(progress_text(progress))

    def on_model_report_changed(self) -> None:
        m = self.model
        if m.upload_error:
            self.report_label.setText(
                f"<b>The upload could not start.</b> {html.escape(m.upload_error)}"
            )
        elif m.again_question:
            choice = (
                "Resume it, or Upload again to start anew."
                if m.resume_offer is not None
                else "Upload again to send it anyway."
            )
            self.report_label.setText(
                f"<b>{html.escape(m.again_heading)}</b> {html.escape(m.again_question)} {choice}"
            )
        elif m.report is not None:
            lines = [html.escape(line) for line in m.report_lines()]
            self.report_label.setText(f"<b>{m.report_heading}</b><br>" + "<br>".join(lines))
        else:
            self.report_label.setText("")
        self.report_label.setTextFormat(Qt.TextFormat.RichText)
        self.report_label.setVisible(bool(self.report_label.text()))
        if m.progress is not None:
            self.on_model_upload_progress(m.progress)
        else:
            self.progress_bar.reset()
            self.progress_label.setText("")
        self.retry_button.setVisible(bool(m.upload_error))
        self.again_button.setVisible(bool(m.again_question))
        self.resume_offer_button.setVisible(bool(m.again_question) and m.resume_offer is not None)
        self.open_folder_button.setVisible(m.report is not None)
        has_rejections = m.rejections.total_count > 0
        self.rejections.setVisible(has_rejections)
        self.upload_spacer.setVisible(not has_rejections)
        if m.report is not None or m.upload_error or m.again_question:
            self.tabs.setCurrentIndex(3)
        self.on_model_upload_state_changed()

    def on_resend_button_clicked(self) -> None:
        self.resend_flow.ask(self.model.resend_question or None)

    def make_resend_box(self, question: str) -> ConfirmationBox:
        return self._send_anyway_box(
            "ResendInDoubtBox",
            "Send the bodies in doubt again?",
            question,
            "Resume checks the server's totals again first and sends only what it lacks; "
            "this sends the bodies it cannot decide as well.",
        )

    def on_resend_confirmed(self, _question: object) -> None:
        self.model.resend_in_doubt()

    def on_model_unfinished_changed(self) -> None:
        combo = self.unfinished_combo
        chosen = self._chosen_unfinished()
        combo.blockSignals(True)
        combo.clear()
        for item in self.model.unfinished:
            combo.addItem(item.label)
            combo.setItemData(combo.count() - 1, str(item.folder), Qt.ItemDataRole.ToolTipRole)
        if not self.model.unfinished:
            combo.addItem("None")
        elif chosen is not None:
            for n, item in enumerate(self.model.unfinished):
                if item.folder == chosen.folder:
                    combo.setCurrentIndex(n)
        combo.blockSignals(False)
        combo.setEnabled(bool(self.model.unfinished))
        self.on_model_upload_state_changed()

    # for tests and screenshots: the row objects of the sources table
    def source_rows(self) -> list[SourceRow]:
        return self.model.sources.rows

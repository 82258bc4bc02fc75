"""`BannersView`: the server's banners (Unleash Enterprise) in a `DataTable` (message's first
line as plain text, on or off, variant, sticky, link, created; filter as you type, sort,
Ctrl+C, Export CSV…) over the selected banner's message as its users see it (Markdown, through
the safe `MarkdownView`). New banner… and Edit… open `BannerDialog`: the message as Markdown
with a preview, the variant, on, sticky, the link and its text, and for a link "dialog" the
dialog's title and Markdown; Save… asks the confirmation over the form, which stays open until
the server took it, and shows what is wrong under the field it is about, keeping what was
typed. Switch on / Switch off and Delete… ask first too, naming the server. On open-source
Unleash the page says why there are none. Everything comes from `BannersModel`: this window
shows and forwards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.api.models import Banner
from app.viewmodels.banners import (
    CREATED_COLUMN,
    DIALOG,
    MESSAGE_COLUMN,
    VARIANTS,
    BannerForm,
    BannerPlan,
    BannersModel,
    banners_count_text,
)
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome
from ui.form_dialog import FormDialog, FormFlow, error_label
from ui.markdown import MarkdownView
from ui.palette import quiet
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing


def _buddy(text: str, field: QWidget) -> QLabel:
    """A form's label whose mnemonic goes to `field` (a row of a layout gets none by itself)."""
    label = QLabel(text)
    label.setBuddy(field)
    return label


def _with_error(field: QWidget, error: QLabel) -> QVBoxLayout:
    box = QVBoxLayout()
    box.setSpacing(2)
    box.addWidget(field)
    box.addWidget(error)
    return box


class BannerDialog(FormDialog):
    """A banner's form: a new one (`banner` None) or `banner` changed. Save… asks the
    view-model for the plan (a form it refuses shows why under the field, what was typed kept)
    and hands it to `ask`, the window's confirmation; the form stays open until the save ends:
    `saved()` closes it, `show_error(field, text)` puts the server's refusal under its field.
    Enter in a one-line field saves (the default button), Escape cancels; in the Markdown boxes
    Enter is a new line."""

    def __init__(
        self,
        model: BannersModel,
        banner: Banner | None,
        ask: Callable[[BannerPlan], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(ask, parent)
        self.model = model
        self.banner = banner
        self.setObjectName("bannersDialog")
        self.setWindowTitle("New banner" if banner is None else f"Edit banner {banner.id}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        start = BannerForm.of(banner)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.message_edit = QPlainTextEdit(start.message)
        self.message_edit.setObjectName("bannersMessageEdit")
        self.message_edit.setTabChangesFocus(True)
        self.message_edit.setPlaceholderText(
            "What every user of the server's UI reads, in Markdown: **bold**, [a link](https://…)"
        )
        self.message_edit.setFixedHeight(96)
        self.message_error = error_label("bannersMessageError")
        form.addRow(_buddy("&Message:", self.message_edit),
                    _with_error(self.message_edit, self.message_error))  # fmt: skip
        self.preview = MarkdownView(model.session.url)
        self.preview.setObjectName("bannersMessagePreview")
        self.preview.setAccessibleName("The message as the server's users see it")
        form.addRow(QLabel("Preview:"), self.preview)

        self.variant_combo = QComboBox()
        self.variant_combo.setObjectName("bannersVariantCombo")
        self.variant_combo.addItems(list(VARIANTS))
        if start.variant not in VARIANTS:  # one Unleash's form does not offer: kept
            self.variant_combo.addItem(start.variant)
        self.variant_combo.setCurrentText(start.variant)
        self.variant_error = error_label("bannersVariantError")
        form.addRow(_buddy("&Variant:", self.variant_combo),
                    _with_error(self.variant_combo, self.variant_error))  # fmt: skip

        switches = QHBoxLayout()
        self.enabled_check = QCheckBox("&On: shown to every user")
        self.enabled_check.setObjectName("bannersEnabledCheck")
        self.enabled_check.setChecked(start.enabled)
        switches.addWidget(self.enabled_check)
        self.sticky_check = QCheckBox("S&ticky: stays on top as the page scrolls")
        self.sticky_check.setObjectName("bannersStickyCheck")
        self.sticky_check.setChecked(start.sticky)
        switches.addWidget(self.sticky_check)
        switches.addStretch(1)
        form.addRow("", switches)

        self.link_edit = QLineEdit(start.link)
        self.link_edit.setObjectName("bannersLinkEdit")
        self.link_edit.setPlaceholderText("https://…, a path such as /projects, or “dialog”")
        self.link_error = error_label("bannersLinkError")
        form.addRow(_buddy("&Link:", self.link_edit), _with_error(self.link_edit, self.link_error))
        self.link_text_edit = QLineEdit(start.linkText)
        self.link_text_edit.setObjectName("bannersLinkTextEdit")
        self.link_text_edit.setPlaceholderText("More info")
        self.link_text_error = error_label("bannersLinkTextError")
        form.addRow(_buddy("Link te&xt:", self.link_text_edit),
                    _with_error(self.link_text_edit, self.link_text_error))  # fmt: skip
        self.dialog_title_edit = QLineEdit(start.dialogTitle)
        self.dialog_title_edit.setObjectName("bannersDialogTitleEdit")
        self.dialog_title_error = error_label("bannersDialogTitleError")
        form.addRow(_buddy("Dialog t&itle:", self.dialog_title_edit),
                    _with_error(self.dialog_title_edit, self.dialog_title_error))  # fmt: skip
        self.dialog_edit = QPlainTextEdit(start.dialog)
        self.dialog_edit.setObjectName("bannersDialogEdit")
        self.dialog_edit.setTabChangesFocus(True)
        self.dialog_edit.setPlaceholderText("What the dialog says, in Markdown")
        self.dialog_edit.setFixedHeight(96)
        self.dialog_error = error_label("bannersDialogError")
        form.addRow(_buddy("Dialo&g text:", self.dialog_edit),
                    _with_error(self.dialog_edit, self.dialog_error))  # fmt: skip
        self.dialog_note = QLabel("The dialog's fields are sent when the link is “dialog”: a "
                                  "click on the link opens it in Unleash's UI.")  # fmt: skip
        self.dialog_note.setObjectName("bannersDialogNote")
        self.dialog_note.setWordWrap(True)
        quiet(self.dialog_note)
        form.addRow("", self.dialog_note)
        self._form = form

        self.form_error = error_label("bannersFormError")
        self.status_label.setObjectName("bannersDialogStatus")
        quiet(self.status_label)
        buttons = QDialogButtonBox()
        self.save_button = buttons.addButton("&Create…" if banner is None else "&Save…",
                                             QDialogButtonBox.ButtonRole.AcceptRole)  # fmt: skip
        self.save_button.setObjectName("bannersSaveButton")
        self.save_button.setDefault(True)
        self.cancel_button = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_save_button_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.form_error)
        layout.addWidget(self.status_label)
        layout.addStretch(1)  # the rows keep their height when the form is taller
        layout.addWidget(buttons)
        self.errors = {
            "message": self.message_error,
            "variant": self.variant_error,
            "link": self.link_error,
            "linkText": self.link_text_error,
            "dialogTitle": self.dialog_title_error,
            "dialog": self.dialog_error,
        }
        self.focus = {
            "message": self.message_edit, "variant": self.variant_combo,
            "link": self.link_edit, "linkText": self.link_text_edit,
            "dialogTitle": self.dialog_title_edit, "dialog": self.dialog_edit,
        }  # fmt: skip
        self.message_edit.textChanged.connect(self.on_message_edit_text_changed)
        self.link_edit.textChanged.connect(self.on_link_edit_text_changed)
        self.on_message_edit_text_changed()
        self.on_link_edit_text_changed(self.link_edit.text())
        self.resize(640, self.sizeHint().height())

    def form(self) -> BannerForm:
        """What the form holds now, as typed."""
        return BannerForm(
            self.message_edit.toPlainText(), self.variant_combo.currentText(),
            self.enabled_check.isChecked(), self.sticky_check.isChecked(),
            self.link_edit.text(), self.link_text_edit.text(), self.dialog_title_edit.text(),
            self.dialog_edit.toPlainText(),
        )  # fmt: skip

    def on_message_edit_text_changed(self) -> None:
        self.preview.set_markdown(self.message_edit.toPlainText())

    def on_link_edit_text_changed(self, text: str) -> None:
        """The link's text asks for a link, the dialog's fields for the link "dialog" (what
        they hold stays, shown, whatever the link)."""
        link = text.strip()
        self.link_text_edit.setEnabled(bool(link))
        for widget in (self.dialog_title_edit, self.dialog_edit):
            widget.setEnabled(link == DIALOG)

    def plan(self) -> BannerPlan:
        return self.model.plan_save(self.banner, self.form())


class SaveBannerConfirmation(ConfirmationBox):
    def __init__(self, plan: BannerPlan, parent: QWidget | None = None) -> None:
        button = "C&reate banner" if plan.before is None else "&Save banner"
        super().__init__("bannersSaveConfirmation", "Save banner", plan.question, plan.lines(),
                         button, parent, destructive=False, enter_confirms=True)  # fmt: skip
        self.plan = plan


class SwitchBannerConfirmation(ConfirmationBox):
    def __init__(self, plan: BannerPlan, parent: QWidget | None = None) -> None:
        on = plan.after is not None and plan.after.enabled
        super().__init__("bannersSwitchConfirmation", "Switch banner", plan.question,
                         plan.lines(), "Switch &on" if on else "Switch o&ff", parent,
                         destructive=False)  # fmt: skip
        self.plan = plan


class DeleteBannerConfirmation(ConfirmationBox):
    def __init__(self, plan: BannerPlan, parent: QWidget | None = None) -> None:
        super().__init__("bannersDeleteConfirmation", "Delete banner", plan.question,
                         plan.lines(), "&Delete banner", parent)  # fmt: skip
        self.plan = plan


class BannersView(ToolContent):
    model: BannersModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("bannersView")
        self.model = BannersModel(session, self)
        #: the banner's form, one at a time (`dialog`: the one open)
        self.forms: FormFlow[BannerDialog] = FormFlow(
            self, lambda banner: BannerDialog(self.model, banner, self.saves.ask, self)
        )

        body = QWidget()
        body.setObjectName("bannersBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("bannersSplitter")
        self.table = DataTable("banners", self.model.table, noun="banners",
                               count_text=banners_count_text,
                               stretch_column=MESSAGE_COLUMN)  # fmt: skip
        if not self.table.restored:
            self.table.sort_by(CREATED_COLUMN)  # the server's order: oldest first
        self.splitter.addWidget(self.table)
        details = QWidget()
        details.setObjectName("bannersDetails")
        side = QVBoxLayout(details)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(4)
        self.current_label = QLabel()
        self.current_label.setObjectName("bannersCurrent")
        self.current_label.setWordWrap(True)
        self.current_label.setTextFormat(Qt.TextFormat.PlainText)
        side.addWidget(self.current_label)
        self.message_view = MarkdownView()
        self.message_view.setObjectName("bannersMessage")
        self.message_view.setAccessibleName("The selected banner's message")
        side.addWidget(self.message_view)
        side.addStretch(1)
        self.splitter.addWidget(details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        layout.addWidget(self.splitter, 1)

        actions = QHBoxLayout()
        self.create_button = QPushButton("&New banner…")
        self.create_button.setObjectName("bannersCreateButton")
        actions.addWidget(self.create_button)
        self.edit_button = QPushButton("&Edit…")
        self.edit_button.setObjectName("bannersEditButton")
        self.edit_button.setAccessibleName("Edit the selected banner")
        actions.addWidget(self.edit_button)
        self.switch_button = QPushButton("Switch o&ff")
        self.switch_button.setObjectName("bannersSwitchButton")
        self.switch_button.setAccessibleName("Switch the selected banner on or off")
        actions.addWidget(self.switch_button)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("bannersDeleteButton")
        self.delete_button.setAccessibleName("Delete the selected banner")
        actions.addWidget(self.delete_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("bannersOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)

        self.saves = ConfirmationFlow(
            self,
            lambda plan: SaveBannerConfirmation(plan, self.dialog or self),
            self.on_save_confirmed,
        )
        self.switches = ConfirmationFlow(
            self, lambda plan: SwitchBannerConfirmation(plan, self), self.model.save
        )
        self.deletions = ConfirmationFlow(
            self, lambda plan: DeleteBannerConfirmation(plan, self), self.model.delete
        )
        self.states = StatePanel("banners", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.delete_button)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.table.row_activated.connect(self.on_table_row_activated)
        self.create_button.clicked.connect(self.on_create_button_clicked)
        self.edit_button.clicked.connect(self.on_edit_button_clicked)
        self.switch_button.clicked.connect(self.on_switch_button_clicked)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.current_changed.connect(self.on_model_current_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.model.action_finished.connect(self.on_model_outcome_changed)
        self.model.save_finished.connect(self.forms.saved)
        self.model.save_failed.connect(self.forms.failed)
        self.on_model_actions_changed()
        self.on_model_current_changed()
        self.start_model()

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.table, self.model.busy)

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)
        elif text and self.model.acting:
            self.outcome_label.setStyleSheet("")
            self.outcome_label.setText(text)
            self.forms.busy(text)

    def on_table_selection_changed(self, *_: object) -> None:
        self.model.select(self.table.selected_items())

    def on_table_row_activated(self, _row: object) -> None:
        if not self.model.edit_reason:
            self.on_edit_button_clicked()

    def on_model_actions_changed(self) -> None:
        self.switch_button.setText(self.model.switch_text)
        for button, reason, tip in (
            (self.create_button, self.model.create_reason, "Make a banner every user sees"),
            (self.edit_button, self.model.edit_reason, "Change the selected banner"),
            (self.switch_button, self.model.switch_reason,
             "Show the selected banner to every user, or stop showing it"),
            (self.delete_button, self.model.delete_reason, "Delete the selected banner (Delete)"),
        ):  # fmt: skip
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)

    def on_model_current_changed(self) -> None:
        self.current_label.setText(self.model.current_text)
        row = self.model.current
        self.message_view.base_url = self.model.session.url  # its relative links' server
        self.message_view.set_markdown(row.banner.message if row is not None else "")
        self.message_view.setVisible(row is not None)

    @property
    def dialog(self) -> BannerDialog | None:
        """The banner's form open, if any."""
        return self.forms.dialog

    def on_create_button_clicked(self) -> None:
        if not self.model.create_reason:
            self.forms.open(None)

    def on_edit_button_clicked(self) -> None:
        banner = self.model.form_banner()
        if banner is not None:
            self.forms.open(banner)

    def on_save_confirmed(self, plan: BannerPlan) -> None:
        self.forms.busy("Saving…")
        self.model.save(plan)

    def on_switch_button_clicked(self) -> None:
        plan = self.model.plan_switch()
        if plan is not None:
            self.switches.ask(plan)

    def on_delete_button_clicked(self) -> None:
        plan = self.model.plan_delete()
        if plan is not None:
            self.deletions.ask(plan)

    @property
    def confirmation(self) -> QDialog | None:
        """The confirmation open now, if any."""
        return self.saves.box or self.switches.box or self.deletions.box

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def close_content(self) -> None:
        self.forms.close()
        super().close_content()

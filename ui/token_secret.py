"""`SecretDialog`: a token's secret just created, shown once. It starts masked (`••••••••3f9a`),
"Show" shows it whole while pressed down (and masks it again when let go), Copy puts it on the
clipboard and says so, "Use for …" hands it to the view-model (which puts it into the
connection's profile) and shows what came of it (no such button where `NewSecret.use_title` is
empty: a service account's token), and a line says plainly that it will not be
shown again. The dialog is the secret's one holder: closing it empties the field and forgets
the `NewSecret` (`NewSecret.forget`). Shared by the API tokens', the personal access tokens' and
the service accounts' windows; it only shows and forwards."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.token_secrets import NewSecret, masked
from ui.palette import quiet


class SecretDialog(QDialog):
    """Object names: `<stem>SecretDialog`, `…SecretField`, `…ShowButton`, `…CopyButton`,
    `…UseButton`, `…SecretStatus`."""

    def __init__(
        self,
        stem: str,
        new: NewSecret,
        use: Callable[[NewSecret], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.new: NewSecret | None = new
        self._use = use
        self.setObjectName(f"{stem}SecretDialog")
        self.setWindowTitle("The new token's secret")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        layout = QVBoxLayout(self)
        said = QLabel(f"Created the {new.label}.")
        said.setWordWrap(True)
        said.setObjectName(f"{stem}SecretSaid")
        layout.addWidget(said)
        once = QLabel(
            "<b>Copy the secret now: you will not see it again.</b> flagdesk keeps only its "
            "last four characters."
        )
        once.setObjectName(f"{stem}SecretOnce")
        once.setWordWrap(True)
        layout.addWidget(once)

        row = QHBoxLayout()
        self.secret_field = QLineEdit(masked(new.secret))
        self.secret_field.setObjectName(f"{stem}SecretField")
        self.secret_field.setAccessibleName("The new token's secret (masked until Show)")
        self.secret_field.setReadOnly(True)
        self.secret_field.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.secret_field.setMinimumWidth(360)
        row.addWidget(self.secret_field, 1)
        self.show_button = QPushButton("&Show")
        self.show_button.setObjectName(f"{stem}ShowButton")
        self.show_button.setCheckable(True)
        self.show_button.setToolTip("Show the whole secret (press again to mask it)")
        row.addWidget(self.show_button)
        self.copy_button = QPushButton("&Copy")
        self.copy_button.setObjectName(f"{stem}CopyButton")
        self.copy_button.setToolTip("Put the secret on the clipboard")
        row.addWidget(self.copy_button)
        layout.addLayout(row)

        self.use_button = QPushButton(new.use_title)
        self.use_button.setObjectName(f"{stem}UseButton")
        self.use_button.setEnabled(not new.use_reason)
        self.use_button.setToolTip(new.use_reason or f"{new.use_title}: kept in its profile")
        use_row = QHBoxLayout()
        use_row.addWidget(self.use_button)
        use_row.addStretch(1)
        layout.addLayout(use_row)
        # no "Use for …" where the token has no use in this connection's profile (a service
        # account's: it is for the machine that acts as the account)
        self.use_button.setVisible(bool(new.use_title))
        self.status = QLabel(new.use_reason)
        self.status.setObjectName(f"{stem}SecretStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        quiet(self.status)
        layout.addWidget(self.status)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        self.close_button.setObjectName(f"{stem}SecretCloseButton")
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        self.show_button.toggled.connect(self.on_show_button_toggled)
        self.copy_button.clicked.connect(self.on_copy_button_clicked)
        self.use_button.clicked.connect(self.on_use_button_clicked)

    @property
    def secret(self) -> str:
        return self.new.secret if self.new is not None else ""

    def on_show_button_toggled(self, shown: bool) -> None:
        secret = self.secret
        self.secret_field.setText(secret if shown else masked(secret))
        self.show_button.setText("&Hide" if shown else "&Show")

    def on_copy_button_clicked(self) -> None:
        if not self.secret:
            return
        QGuiApplication.clipboard().setText(self.secret)
        self.status.setText("Copied to the clipboard.")

    def on_use_button_clicked(self) -> None:
        if self.new is None:
            return
        self.use_button.setEnabled(False)
        self.status.setText("Saving…")
        self._use(self.new)

    def show_use_result(self, text: str) -> None:
        """What "Use for …" did (or why it did not)."""
        self.status.setText(text)
        if text.startswith("The token was not saved") and self.new is not None:
            self.use_button.setEnabled(not self.new.use_reason)

    def done(self, result: int) -> None:
        """Closing forgets the secret: the field is emptied and the `NewSecret` let go."""
        self.secret_field.clear()
        if self.new is not None:
            self.new.forget()
        self.new = None
        super().done(result)


class SecretShown:
    """A window's one `SecretDialog` at a time: opened for each new secret (`show`, from the
    view-model's `secret_created`; the one before closed), told how "Use for ..." went
    (`use_finished`), closed with the window (`close`). `dialog` is the one open, if any."""

    def __init__(self, stem: str, use: Callable[[NewSecret], object], parent: QWidget) -> None:
        self.stem, self.use, self.parent = stem, use, parent
        self.dialog: SecretDialog | None = None

    def show(self, new: NewSecret) -> None:
        self.close()
        dialog = SecretDialog(self.stem, new, self.use, self.parent)
        self.dialog = dialog
        dialog.finished.connect(self._on_finished)
        dialog.open()

    def _on_finished(self, _result: int) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.deleteLater()

    def use_finished(self, text: str) -> None:
        if self.dialog is not None:
            self.dialog.show_use_result(text)

    def close(self) -> None:
        if self.dialog is not None:
            self.dialog.done(0)

"""File > Connections: add, edit, duplicate and remove profiles, test one, and switch to it.

Shows and forwards only: `ConnectionsModel` validates, saves and tests.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.connections import (
    NOT_SET,
    ConnectionsModel,
    NoKeyring,
    ProfileError,
    ProfileForm,
    TokenStore,
)
from app.viewmodels.session import SANDBOX_NAME, Session
from ui.confirmation import ConfirmationBox, ConfirmationFlow

#: the list's key of local sandbox n: this, then n for those after the first ("\x00sandbox2")
SANDBOX_ITEM = "\x00sandbox"
NEW_ITEM = "\x00new"
CLIENT_TOKEN_HINT = "optional: for metrics uploads"


def sandbox_number(key: str | None) -> int:
    """The local sandbox a list key stands for (1 and up), or 0 for a profile or none."""
    if key is None or not key.startswith(SANDBOX_ITEM):
        return 0
    return int(key[len(SANDBOX_ITEM) :] or 1)


class RemoveConfirmation(ConfirmationBox):
    """Asks before the saved connection `plan` (its name) is removed, saying what goes with it
    and what stays; Cancel is the default."""

    def __init__(self, name: str, url: str, parent: QWidget | None = None) -> None:
        where = f" ({url})" if url else ""
        super().__init__("removeConnectionConfirmation", "Remove connection",
                         f"Remove the connection “{name}”?",
                         [f"“{name}”{where} is removed from the saved connections, and its "
                          "tokens from where they are kept.",
                          "Nothing changes on the server, and the journal of the changes made "
                          "through it stays on this computer."],
                         "&Remove", parent)  # fmt: skip
        self.plan = name


class ConnectionDialog(QDialog):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model = ConnectionsModel(session, self)
        self.setObjectName("connectionDialog")
        self.setWindowTitle("Connections")
        self.resize(820, 520)
        #: the saved profile being edited (None: a new one, or the sandbox)
        self.editing: str | None = None

        outer = QHBoxLayout(self)
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.setObjectName("profileList")
        self.list.setAccessibleName("Connections")
        self.list.currentItemChanged.connect(self.on_list_current_item_changed)
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        self.add_button = self._button("addButton", "Add", row)
        self.duplicate_button = self._button("duplicateButton", "Duplicate", row)
        self.remove_button = self._button("removeButton", "Remove", row)
        self.add_button.clicked.connect(self.on_add_clicked)
        self.duplicate_button.clicked.connect(self.on_duplicate_clicked)
        self.remove_button.clicked.connect(self.on_remove_clicked)
        left.addLayout(row)
        self.another_sandbox_button = QPushButton("Start another local sandbox")
        self.another_sandbox_button.setObjectName("anotherSandboxButton")
        self.another_sandbox_button.setToolTip(
            "A second server on this computer, with data of its own kept between runs: to "
            "compare with and promote to (Tools > Compare) when no Unleash is at hand. It runs "
            "until flagdesk exits."
        )
        self.another_sandbox_button.setVisible(session.can_start_more)
        self.another_sandbox_button.clicked.connect(self.on_another_sandbox_clicked)
        left.addWidget(self.another_sandbox_button)
        outer.addLayout(left, 1)

        right = QVBoxLayout()
        self.form_widget = QWidget()
        self.form_widget.setObjectName("profileForm")
        form = QFormLayout(self.form_widget)
        self.name_edit = self._edit("nameEdit", "Name", form, "Production")
        self.url_edit = self._edit("urlEdit", "Server URL", form, "https://unleash.example.com")
        self.token_edit = self._edit(
            "tokenEdit", "Token", form, "admin API token or personal access token", secret=True
        )
        self.client_token_edit = self._edit(
            "clientTokenEdit", "Client token", form, CLIENT_TOKEN_HINT, secret=True
        )
        #: where the saved profile's tokens are kept (hidden for a new one)
        self.token_places = QLabel()
        self.token_places.setObjectName("tokenPlaces")
        self.token_places.setWordWrap(True)
        self.token_places.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.token_places.hide()
        form.addRow("", self.token_places)
        self.verify_box = QCheckBox("Verify TLS certificates (turn off only for a test server)")
        self.verify_box.setObjectName("verifyTlsBox")
        self.verify_box.setChecked(True)
        form.addRow("", self.verify_box)
        ca_row = QHBoxLayout()
        self.ca_edit = QLineEdit()
        self.ca_edit.setObjectName("caBundleEdit")
        self.ca_edit.setPlaceholderText("optional: a CA bundle (PEM) for a private CA")
        self.ca_edit.setAccessibleName("CA bundle")
        ca_row.addWidget(self.ca_edit, 1)
        browse = self._button("caBrowseButton", "Browse…", ca_row)
        browse.clicked.connect(self.on_ca_browse_clicked)
        form.addRow("CA bundle", ca_row)
        self.problems = QLabel()
        self.problems.setObjectName("formProblems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: palette(link);")
        form.addRow("", self.problems)
        right.addWidget(self.form_widget)
        self.sandbox_note = QLabel(
            "The local sandbox is flagdesk's own server with demo data, started on this "
            "computer and stopped when flagdesk exits. There is nothing to set up: choose "
            "Connect. To work on a real Unleash, choose Add. Start another local sandbox "
            "gives a second server (with data of its own, kept between runs) to compare with "
            "and promote to."
        )
        self.sandbox_note.setObjectName("sandboxNote")
        self.sandbox_note.setWordWrap(True)
        right.addWidget(self.sandbox_note)

        buttons = QHBoxLayout()
        self.test_button = self._button("testButton", "Test connection", buttons)
        self.save_button = self._button("saveButton", "Save", buttons)
        buttons.addStretch(1)
        self.connect_button = self._button("connectButton", "Connect", buttons)
        self.close_button = self._button("closeButton", "Close", buttons)
        self.connect_button.setDefault(True)
        self.test_button.clicked.connect(self.on_test_clicked)
        self.save_button.clicked.connect(self.on_save_clicked)
        self.connect_button.clicked.connect(self.on_connect_clicked)
        self.close_button.clicked.connect(self.reject)
        right.addLayout(buttons)
        self.report = QPlainTextEdit()
        self.report.setObjectName("testReport")
        self.report.setReadOnly(True)
        self.report.setAccessibleName("Test report")
        self.report.setPlaceholderText(
            "Test connection shows here what this server and token allow."
        )
        right.addWidget(self.report, 1)
        outer.addLayout(right, 2)

        #: the question before a saved connection is removed
        self.removals = ConfirmationFlow(
            self, lambda name: RemoveConfirmation(name, self._url_of(name), self), self.remove
        )
        self.model.tested.connect(self.on_model_tested)
        self.model.busy_changed.connect(self.on_model_busy_changed)
        self.model.profiles_changed.connect(self.reload)
        reveal = QAction("Show", self)
        reveal.setCheckable(True)
        reveal.toggled.connect(self.on_reveal_toggled)
        self.token_edit.addAction(reveal, QLineEdit.ActionPosition.TrailingPosition)
        self.reload()

    # ------------------------------------------------------------------ building

    def _button(self, name: str, text: str, row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        row.addWidget(button)
        return button

    def _edit(
        self, name: str, label: str, form: QFormLayout, hint: str, *, secret: bool = False
    ) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setPlaceholderText(hint)
        edit.setAccessibleName(label)
        if secret:
            edit.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow(label, edit)
        return edit

    # ------------------------------------------------------------------ the list

    def reload(self, select: str | None = None) -> None:
        current = select or self._current_key()
        self.list.blockSignals(True)
        self.list.clear()
        sandbox = QListWidgetItem(f"{SANDBOX_NAME} (demo data)")
        sandbox.setData(Qt.ItemDataRole.UserRole, SANDBOX_ITEM)
        self.list.addItem(sandbox)
        for number, name in self.session.running_sandboxes():
            if number > 1:
                more = QListWidgetItem(f"{name} (running)")
                more.setData(Qt.ItemDataRole.UserRole, f"{SANDBOX_ITEM}{number}")
                self.list.addItem(more)
        for profile in self.model.profiles():
            item = QListWidgetItem(profile.name)
            item.setData(Qt.ItemDataRole.UserRole, profile.name)
            item.setToolTip(profile.url)
            self.list.addItem(item)
        self.list.blockSignals(False)
        number = self.session.sandbox_number
        open_now = f"{SANDBOX_ITEM}{number if number > 1 else ''}" if number else self.session.name
        target = current or open_now
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == target:
                self.list.setCurrentRow(row)
                break
        else:
            self.list.setCurrentRow(0)
        self.on_list_current_item_changed(self.list.currentItem(), None)

    def _current_key(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def on_list_current_item_changed(
        self, current: QListWidgetItem | None, _previous: QListWidgetItem | None
    ) -> None:
        key = str(current.data(Qt.ItemDataRole.UserRole)) if current is not None else None
        is_sandbox = sandbox_number(key) > 0
        self.form_widget.setVisible(not is_sandbox)
        self.sandbox_note.setVisible(is_sandbox)
        self.report.setVisible(not is_sandbox)
        self.remove_button.setEnabled(not is_sandbox and key not in (NEW_ITEM, None))
        self.duplicate_button.setEnabled(not is_sandbox and key not in (NEW_ITEM, None))
        self.save_button.setEnabled(not is_sandbox)
        self.test_button.setEnabled(not is_sandbox)
        self.problems.clear()
        self.report.clear()
        if key is None or is_sandbox or key == NEW_ITEM:
            self.editing = None
            self._fill(ProfileForm())
            return
        self.editing = key
        try:
            self._fill(self.model.form_of(key))
        except ProfileError as exc:
            self.problems.setText(str(exc))
        try:
            admin, client = self.model.token_places(key)
        except ProfileError as exc:
            self.problems.setText(str(exc))
            return
        self.token_edit.setPlaceholderText(
            f"Kept {admin}; leave empty to keep it" if admin != NOT_SET else f"{admin}: give it"
        )
        self.client_token_edit.setPlaceholderText(
            f"Kept {client}; leave empty to keep it"
            if client != NOT_SET
            else f"{client} (optional: for metrics uploads)"
        )
        self.token_places.setText(f"Token: {admin}.\nClient token: {client}.")
        self.token_places.show()

    def _fill(self, form: ProfileForm) -> None:
        self.name_edit.setText(form.name)
        self.url_edit.setText(form.url)
        self.token_edit.clear()
        self.client_token_edit.clear()
        self.token_edit.setPlaceholderText("admin API token or personal access token")
        self.client_token_edit.setPlaceholderText(CLIENT_TOKEN_HINT)
        self.token_places.clear()
        self.token_places.hide()
        self.verify_box.setChecked(form.verify_tls)
        self.ca_edit.setText(form.ca_bundle)

    def form(self) -> ProfileForm:
        return ProfileForm(
            name=self.name_edit.text(),
            url=self.url_edit.text(),
            token=self.token_edit.text(),
            client_token=self.client_token_edit.text(),
            verify_tls=self.verify_box.isChecked(),
            ca_bundle=self.ca_edit.text(),
        )

    # ------------------------------------------------------------------ buttons

    def on_add_clicked(self) -> None:
        item = QListWidgetItem("New connection")
        item.setData(Qt.ItemDataRole.UserRole, NEW_ITEM)
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self.name_edit.setFocus()

    def on_duplicate_clicked(self) -> None:
        if self.editing is None:
            return
        form = self.model.form_of(self.editing)
        form.name = self.model.duplicate_name(self.editing)
        self.on_add_clicked()
        self._fill(form)
        self.problems.setText("Give the copy its token, then Save.")

    def on_remove_clicked(self) -> None:
        self.removals.ask(self.editing)

    @property
    def confirmation(self) -> RemoveConfirmation | None:
        """The confirmation open now, if any."""
        box = self.removals.box
        return box if isinstance(box, RemoveConfirmation) else None

    def _url_of(self, name: str) -> str:
        try:
            return self.model.form_of(name).url
        except ProfileError:
            return ""

    def remove(self, name: str) -> None:
        """Remove the saved connection `name` (confirmed)."""
        try:
            self.model.remove(name)
        except ProfileError as exc:
            self.problems.setText(str(exc))

    def on_ca_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "CA bundle", "", "Certificates (*.pem *.crt);;All files (*)"
        )
        if path:
            self.ca_edit.setText(path)

    def on_reveal_toggled(self, shown: bool) -> None:
        mode = QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        self.token_edit.setEchoMode(mode)

    def save(self) -> str | None:
        """Save the form; the saved name, or None (the problems are shown, the form kept)."""
        form = self.form()
        problems = self.model.validate(form, editing=self.editing)
        if problems:
            self.problems.setText("\n".join(problems.values()))
            return None
        try:
            saved = self.model.save(form, editing=self.editing)
        except NoKeyring as exc:
            # asked once per run: the answer holds for every connection saved afterwards
            choice = self.session.no_keyring_choice or self.ask_token_store(exc)
            if choice is None:
                self.problems.setText("Not saved: no place to keep the token was chosen.")
                return None
            self.session.no_keyring_choice = choice
            form.token_store = choice
            try:
                saved = self.model.save(form, editing=self.editing)
            except (ProfileError, ValueError) as again:
                self.problems.setText(str(again))
                return None
        except (ProfileError, ValueError) as exc:
            self.problems.setText(str(exc))
            return None
        self.problems.clear()
        self.reload(select=saved.name)
        return saved.name

    def ask_token_store(self, exc: NoKeyring) -> TokenStore | None:
        box = QMessageBox(self)
        box.setObjectName("noKeyringBox")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("No keyring")
        box.setText("There is no OS keyring to keep the token safely.")
        box.setInformativeText(
            f"{exc.reason}.\n\nKeep it in memory until flagdesk exits (you will type it again "
            f"next time), or save it in a plain-text file readable only by you:\n{exc.file_path}"
        )
        memory = box.addButton("Keep in memory", QMessageBox.ButtonRole.AcceptRole)
        memory.setObjectName("keepInMemoryButton")
        in_file = box.addButton("Save in plain-text file", QMessageBox.ButtonRole.DestructiveRole)
        in_file.setObjectName("saveInFileButton")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        if clicked is memory:
            return "memory"
        if clicked is in_file:
            return "file"
        return None

    def on_save_clicked(self) -> None:
        self.save()

    def on_test_clicked(self) -> None:
        self.report.setPlainText("Testing…")
        self.model.test(self.form(), editing=self.editing)

    def on_model_tested(self, text: str, ok: bool) -> None:
        self.report.setPlainText(text if ok else f"The connection failed.\n\n{text}")

    def on_model_busy_changed(self, busy: bool) -> None:
        self.test_button.setEnabled(not busy and not sandbox_number(self._current_key()))

    def on_connect_clicked(self) -> None:
        key = self._current_key()
        if sandbox_number(key):
            self.session.open_sandbox(sandbox_number(key))
            self.accept()
            return
        name = self.save() if (self.editing is None or self._form_changed()) else self.editing
        if name is None:
            return
        self.session.open_profile(name)
        self.accept()

    def on_another_sandbox_clicked(self) -> None:
        """One step: the next local sandbox started, and connected to."""
        self.session.start_another_sandbox()
        self.accept()

    def _form_changed(self) -> bool:
        if self.editing is None:
            return True
        saved = self.model.form_of(self.editing)
        now = self.form()
        return bool(now.token or now.client_token) or (
            (saved.name, saved.url, saved.verify_tls, saved.ca_bundle)
            != (now.name.strip(), now.url.strip().rstrip("/"), now.verify_tls, now.ca_bundle)
        )

    def done(self, result: int) -> None:
        self.model.close()
        super().done(result)

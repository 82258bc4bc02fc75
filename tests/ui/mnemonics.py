"""What the mnemonic tests look for: a label showing its "&" (a QLabel interprets "&X" as the
mnemonic of its buddy, and without a buddy shows the ampersand as it is)."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtGuiNamespace  # where mightBeRichText lives
from PySide6.QtWidgets import QLabel, QWidget

#: an ampersand that is not doubled ("&&" is a literal one) and marks a character
MNEMONIC = re.compile(r"(?<!&)&(?!&)(?=\S)")


def shown_ampersands(root: QWidget) -> list[str]:
    """Each label under `root` (and `root` itself) whose plain text marks a mnemonic but has
    no buddy to give it to: it shows the "&" instead."""
    labels = [root] if isinstance(root, QLabel) else []
    labels += root.findChildren(QLabel)
    out = []
    for label in labels:
        text = label.text()
        rich = label.textFormat() == Qt.TextFormat.RichText or (
            label.textFormat() == Qt.TextFormat.AutoText and QtGuiNamespace.mightBeRichText(text)
        )
        if rich or not MNEMONIC.search(text.replace("&&", "")):
            continue
        if label.buddy() is None:
            out.append(f"{label.objectName() or type(label).__name__}: {text!r} has no buddy")
    return out

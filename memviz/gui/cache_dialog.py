"""Picker for models already in the local Hugging Face cache (nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from memviz.core.importers.hf_cache import CachedModel, cached_models
from memviz.core.units import format_bytes


class CacheDialog(QDialog):
    def __init__(self, parent=None, cache_dir: str | Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models in the Hugging Face cache")
        self.resize(760, 420)
        layout = QVBoxLayout(self)
        self.models: list[CachedModel] = cached_models(cache_dir)
        layout.addWidget(QLabel(f"{len(self.models)} model repositories found locally (no network access)."))
        self.table = QTableWidget(len(self.models), 4)
        self.table.setHorizontalHeaderLabels(("Model", "Size on disk", "config.json", "weights"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for r, m in enumerate(self.models):
            for c, text in enumerate((m.repo_id, format_bytes(m.size_on_disk), "yes" if m.has_config else "no",
                                      "yes" if m.has_weights else "no")):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.doubleClicked.connect(self.accept)
        layout.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def selected(self) -> CachedModel | None:
        row = self.table.currentRow()
        return self.models[row] if 0 <= row < len(self.models) else None

"""Architecture panel: searchable presets, editable fields with validation, imports, derived facts.

An edit is validated by building the new Architecture in the core; an invalid
value is marked at its field with the reason and the session (and the last
valid estimate on screen) stays as it was.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.formats import get_kv_format
from memviz.core.inventory import active_parameter_count, parameter_count
from memviz.core.kv import KVLayout, kv_bytes_per_token
from memviz.core.presets import all_presets
from memviz.core.towers import describe

#: (field, label, unit shown next to it); all are integers, optional ones may be empty.
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("decoder_layers", "Layers (L)", ""),  # decoder layers as the config counts them (LongCat-Flash: 2 sublayers each)
    ("hidden_size", "Hidden size", "elements"),
    ("num_heads", "Attention heads", ""),
    ("num_kv_heads", "KV heads (Hkv)", ""),
    ("head_dim", "Head dim (D)", "elements"),
    ("v_head_dim", "V head dim", "elements"),
    ("intermediate_size", "MLP intermediate", "elements"),
    ("vocab_size", "Vocabulary", "tokens"),
    ("max_position_embeddings", "Max context", "tokens"),
    ("sliding_window", "Sliding window", "tokens"),
    ("num_experts", "Experts (E)", ""),
    ("experts_per_token", "Experts per token", ""),
    ("moe_intermediate_size", "Expert intermediate", "elements"),
    ("kv_lora_rank", "MLA kv_lora_rank", "elements"),
    ("qk_rope_head_dim", "MLA rope head dim", "elements"),
)
OPTIONAL = {"sliding_window", "kv_lora_rank"}
#: fields whose 0 means none (a model that states no context limit: Mamba's configs): shown empty, cleared to 0
ZERO_IS_NONE = {"max_position_embeddings": "no limit"}
#: fields of the attention layers and of the MLP: left empty and disabled for a model without them (Mamba's blocks)
ATTENTION_FIELDS = frozenset({"num_heads", "num_kv_heads", "head_dim", "v_head_dim"})


def unused_fields(a: Architecture) -> dict[str, str]:
    """The fields `a` has no use for, with the reason shown at them."""
    unused = dict.fromkeys(ATTENTION_FIELDS, "no attention layers") if not a.attends else {}
    if not a.has_ffn:
        unused["intermediate_size"] = "no MLP"
    return unused
ERROR_STYLE = "QLineEdit { border: 2px solid #D55E00; }"


def derived_facts(a: Architecture) -> str:
    """Read-only facts: parameters, KV bytes per token, attention kinds per layer group."""
    kv = kv_bytes_per_token(a, get_kv_format("bf16"), KVLayout(latent_mla=True))
    kv_hf = kv_bytes_per_token(a, get_kv_format("bf16"))
    lines = [
        f"Parameters: {parameter_count(a):,d}",
        f"Active per token: {active_parameter_count(a):,d}",
        f"KV per token (bf16, all layers): {kv:,.0f} bytes" + (f" latent; {kv_hf:,.0f} expanded" if a.is_mla else ""),
        f"Layers: {a.layer_kinds_text()}",
    ]
    if a.encoders:
        lines.append(f"Encoders (loaded by transformers and vLLM): {describe(a.encoders)}")
    if a.is_moe:
        lines.append(f"MoE: {a.num_experts} experts, top-{a.experts_per_token}, {sum(a.moe_layers)} MoE layers")
    lines += [f"⚠ {w}" for w in a.warnings]
    return "\n".join(lines)


class ArchitecturePanel(QWidget):
    """Emits `sig_preset(key)`, `sig_changed(Architecture)` for a valid edit, and import requests."""

    sig_preset = Signal(str)
    sig_changed = Signal(object)
    sig_import_config = Signal()
    sig_import_folder = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._arch: Architecture | None = None
        layout = QVBoxLayout(self)

        presets = QGroupBox("Presets")
        pl = QVBoxLayout(presets)
        self.search = QLineEdit(placeholderText="Search presets…")
        self.search.setClearButtonEnabled(True)
        self.preset_list = QListWidget()
        self.preset_list.setMinimumHeight(120)
        for key, p in all_presets().items():
            item = QListWidgetItem(p.name)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setToolTip(f"{p.source}\n{p.note}".strip())
            self.preset_list.addItem(item)
        self.search.textChanged.connect(self._filter)
        self.search.returnPressed.connect(self._pick_only_match)
        self.preset_list.itemActivated.connect(self._pick)
        self.preset_list.itemClicked.connect(self._pick)
        pl.addWidget(self.search)
        pl.addWidget(self.preset_list)
        buttons = QHBoxLayout()
        self.import_config_button = QPushButton("Import file…")
        self.import_config_button.setToolTip("config.json, .safetensors (or its index) or .gguf")
        self.import_folder_button = QPushButton("Import model folder…")
        self.import_config_button.clicked.connect(self.sig_import_config)
        self.import_folder_button.clicked.connect(self.sig_import_folder)
        buttons.addWidget(self.import_config_button)
        buttons.addWidget(self.import_folder_button)
        pl.addLayout(buttons)
        layout.addWidget(presets)

        fields = QGroupBox("Architecture")
        form = QFormLayout(fields)
        self.name_edit = QLineEdit()
        self.name_edit.editingFinished.connect(lambda: self._commit("name", self.name_edit.text().strip() or "model"))
        form.addRow("Name", self.name_edit)
        self.edits: dict[str, QLineEdit] = {}
        for key, label, unit in FIELDS:
            edit = QLineEdit()
            edit.setAlignment(Qt.AlignmentFlag.AlignRight)
            edit.editingFinished.connect(lambda k=key: self._edited(k))
            row = QHBoxLayout()
            row.addWidget(edit)
            if unit:
                row.addWidget(QLabel(unit))
            form.addRow(label, row)
            self.edits[key] = edit
        self.tied = QCheckBox("Tied input/output embeddings")
        self.tied.toggled.connect(lambda v: self._commit("tie_word_embeddings", bool(v)))
        form.addRow(self.tied)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #D55E00")
        form.addRow(self.error_label)
        layout.addWidget(fields)

        facts = QGroupBox("Derived (read-only)")
        fl = QVBoxLayout(facts)
        self.facts = QLabel()
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        fl.addWidget(self.facts)
        layout.addWidget(facts)
        layout.addStretch(1)

    def _filter(self, text: str) -> None:
        t = text.strip().lower()
        for i in range(self.preset_list.count()):
            item = self.preset_list.item(i)
            key = item.data(Qt.ItemDataRole.UserRole)
            item.setHidden(bool(t) and t not in item.text().lower() and t not in key)

    def _pick(self, item: QListWidgetItem) -> None:
        self.sig_preset.emit(item.data(Qt.ItemDataRole.UserRole))

    def set_architecture(self, a: Architecture) -> None:
        """Show `a` (after a preset, an import, undo/redo); clears field errors."""
        self._arch = a
        self.name_edit.setText(a.name)
        unused = unused_fields(a)
        for key, edit in self.edits.items():
            value = None if key in unused else getattr(a, key)
            if key in ZERO_IS_NONE and value == 0:
                value = None
            edit.blockSignals(True)
            edit.setText("" if value is None else str(value))
            edit.setEnabled(key not in unused)
            edit.setPlaceholderText("none" if key in unused else ZERO_IS_NONE.get(key, ""))
            edit.setStyleSheet("")
            edit.setToolTip(unused.get(key, ""))
            edit.blockSignals(False)
        self.tied.blockSignals(True)
        self.tied.setChecked(a.tie_word_embeddings)
        self.tied.blockSignals(False)
        self.error_label.clear()
        self.facts.setText(derived_facts(a))

    def _edited(self, key: str) -> None:
        text = self.edits[key].text().strip().replace(",", "").replace("_", "")
        if key in OPTIONAL and text == "":
            self._commit(key, None)
            return
        if key in ZERO_IS_NONE and text == "":
            self._commit(key, 0)
            return
        try:
            value = int(text)
        except ValueError:
            self._mark(key, f"{text!r} is not a whole number")
            return
        self._commit(key, value)

    def _commit(self, key: str, value) -> None:
        if self._arch is None:
            return
        if getattr(self._arch, key) == value:  # the valid value typed back: its earlier error goes
            self._clear_marks()
            return
        try:
            new = self._arch.with_changes(**{key: value})
        except InputError as exc:
            self._mark(key, str(exc))
            return
        self._clear_marks()
        self.sig_changed.emit(new)

    def _clear_marks(self) -> None:
        for edit in self.edits.values():
            edit.setStyleSheet("")
            edit.setToolTip("")
        self.error_label.clear()

    def select_preset(self, key: str | None) -> None:
        """Highlight the preset the model came from; none after New with another model, or an import."""
        self.preset_list.blockSignals(True)
        self.preset_list.clearSelection()
        self.preset_list.setCurrentRow(-1)
        for i in range(self.preset_list.count()):
            if key is not None and self.preset_list.item(i).data(Qt.ItemDataRole.UserRole) == key:
                self.preset_list.setCurrentRow(i)
        self.preset_list.blockSignals(False)

    def _pick_only_match(self) -> None:
        """Enter in the search field picks the preset when exactly one matches."""
        shown = [self.preset_list.item(i) for i in range(self.preset_list.count())
                 if not self.preset_list.item(i).isHidden()]
        if len(shown) == 1:
            self._pick(shown[0])

    def _mark(self, key: str, reason: str) -> None:
        edit = self.edits.get(key)
        label = dict((k, lbl) for k, lbl, _ in FIELDS).get(key, key)
        if edit is not None:
            edit.setStyleSheet(ERROR_STYLE)
            edit.setToolTip(reason)
        self.error_label.setText(f"{label}: {reason} — the last valid estimate stays on screen.")

"""Quality evidence: published quality deltas of weight and KV-cache formats against 16 bit.

The records (`memviz/data/quality_evidence.json`) hold only figures read in their
cited source: llama.cpp's perplexity scoreboards (`tools/perplexity/README.md`),
llama.cpp PR #7412 for quantized KV caches, the Qwen documentation's benchmark of
its GPTQ / AWQ releases, and Neural Magic's model cards of FP8 / INT8 / INT4
checkpoints. A format without a record has *no evidence*; nothing is interpolated.

Every record reduces to one number, the **relative loss in %** against its own
16-bit baseline: perplexity (PPL_q / PPL_16 − 1) × 100, or a benchmark score
(score_16 − score_q) / score_16 × 100. The two kinds are not the same scale; the
metric stays with the figure wherever it is shown. For a model, the record of the
same model is used, else the same family of the nearest size, else the nearest
size of any family, and the match is said. Weights and KV cache losses are added
(a first-order assumption, stated with the result); 16- and 32-bit formats are
the reference, loss 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from memviz.core.arch import Architecture
from memviz.core.errors import InputError

REFERENCE_FORMATS = frozenset({"bf16", "fp16", "fp32"})
KINDS = ("weights", "kv")


@dataclass(frozen=True)
class Evidence:
    """One published figure: `format` on `model`, `value` against `baseline` by `metric`, from `source_url`."""

    format: str
    kind: str  # "weights" | "kv"
    model: str
    family: str
    parameters_b: float
    metric: str
    higher_is_better: bool
    baseline: float
    value: float
    source_title: str
    source_url: str
    note: str = ""
    kld: float | None = None

    @property
    def loss_pct(self) -> float:
        """Relative loss against the record's own 16-bit baseline, in % (negative: better than baseline)."""
        if self.higher_is_better:
            return (self.baseline - self.value) / self.baseline * 100
        return (self.value / self.baseline - 1) * 100


@dataclass(frozen=True)
class Match:
    """The evidence used for one format of one model, and how close the record's model is."""

    evidence: Evidence | None  # None: the reference format (loss 0) or no evidence
    closeness: str  # "reference" | "this model" | "same family" | "another model" | "no evidence"

    @property
    def loss_pct(self) -> float | None:
        if self.closeness == "reference":
            return 0.0
        return None if self.evidence is None else self.evidence.loss_pct

    def describe(self) -> str:
        if self.evidence is None:
            return self.closeness
        e = self.evidence
        where = "" if self.closeness == "this model" else f" ({self.closeness})"
        return f"{e.loss_pct:+.2f} % {e.metric} on {e.model}{where}"


def _record(d: dict) -> Evidence:
    try:
        src = d["source"]
        ev = Evidence(format=str(d["format"]), kind=str(d["kind"]), model=str(d["model"]), family=str(d["family"]),
                      parameters_b=float(d["parameters_b"]), metric=str(d["metric"]),
                      higher_is_better=bool(d["higher_is_better"]), baseline=float(d["baseline"]),
                      value=float(d["value"]), source_title=str(src["title"]), source_url=str(src["url"]),
                      note=str(d.get("note", "")), kld=None if d.get("kld") is None else float(d["kld"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"quality evidence record {d!r:.120} is incomplete: {exc}") from None
    if ev.kind not in KINDS or not ev.source_url.startswith("https://") or not ev.source_title:
        raise InputError(f"quality evidence record for {ev.format} on {ev.model} needs a kind and an https source")
    if not (math.isfinite(ev.baseline) and math.isfinite(ev.value) and ev.baseline > 0 and ev.value > 0
            and ev.parameters_b > 0):
        raise InputError(f"quality evidence record for {ev.format} on {ev.model} has impossible numbers")
    return ev


def parse_evidence(text: str) -> tuple[Evidence, ...]:
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("schema") != "memviz.quality-evidence/1":
        raise InputError("not a memviz quality evidence file (schema memviz.quality-evidence/1)")
    return tuple(_record(d) for d in doc["records"])


@lru_cache(maxsize=1)
def evidence() -> tuple[Evidence, ...]:
    """Every bundled record."""
    return parse_evidence(resources.files("memviz.data").joinpath("quality_evidence.json").read_text(encoding="utf-8"))


def _size_distance(e: Evidence, parameters_b: float) -> float:
    return abs(math.log(e.parameters_b / max(parameters_b, 1e-3)))


def match(fmt: str, kind: str, a: Architecture, parameters_b: float) -> Match:
    """The record for `fmt` ("Q4_K_M", "awq-int4", KV "q8_0") that fits model `a` best."""
    if fmt in REFERENCE_FORMATS or fmt.lower() in REFERENCE_FORMATS or (kind == "weights" and fmt == a.native_format):
        return Match(None, "reference")  # 16 bit, or the checkpoint as its authors released it
    records = [e for e in evidence() if e.kind == kind and e.format.lower() == fmt.lower()]
    if not records:
        return Match(None, "no evidence")
    same_model = [e for e in records if _same_name(e.model, a.name)]
    if same_model:
        return Match(same_model[0], "this model")
    family = [e for e in records if e.family == a.model_type]
    pool, closeness = (family, "same family") if family else (records, "another model")
    return Match(min(pool, key=lambda e: _size_distance(e, parameters_b)), closeness)


def _same_name(record_model: str, name: str) -> bool:
    def norm(s: str) -> str:
        return s.lower().replace("meta-", "").replace("_", "-")

    return bool(name) and norm(record_model) == norm(name)


@dataclass(frozen=True)
class Quality:
    """The quality evidence of one weight format + KV format on one model."""

    weights: Match
    kv: Match

    @property
    def loss_pct(self) -> float | None:
        """Weights + KV loss in %, or None when either has no evidence."""
        w, k = self.weights.loss_pct, self.kv.loss_pct
        return None if w is None or k is None else w + k

    @property
    def tier(self) -> int:
        """Evidence strength: 0 reference / this model / same family, 1 another family, 2 no evidence."""
        closeness = {self.weights.closeness, self.kv.closeness}
        return 2 if "no evidence" in closeness else 1 if "another model" in closeness else 0

    def describe(self) -> str:
        return f"weights: {self.weights.describe()}; KV: {self.kv.describe()}"


def quality(a: Architecture, weight_format: str, kv_format: str, parameters_b: float) -> Quality:
    return Quality(match(weight_format, "weights", a, parameters_b), match(kv_format, "kv", a, parameters_b))

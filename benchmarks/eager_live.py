"""transformers' attention workspace against the live tensors of real prefills: each family of
tests/probe/test_eager_live.py (8 heads of 32, one sequence) with eager attention at 1,024 and 2,048 tokens in fp32
and bf16, and the sliding-window families with SDPA at 2 x 2,048 tokens (their bool mask). Prints memviz's
activations against the most bytes of tensors alive at once, as the table in docs/engines.md shows them.

    PYTHONPATH=. python benchmarks/eager_live.py
"""

from __future__ import annotations

from pathlib import Path

from memviz.core.arch import load_config
from tests.probe.live_tensors import estimated, live_prefill
from tests.probe.test_eager_live import EAGER_FAMILIES


def _error(cfg: dict, dtype: str, attention: str, batch: int, prompt: int) -> str:
    measured, _ = live_prefill(cfg, dtype, attention, batch, prompt)
    return f"{estimated(cfg, dtype, attention, batch, prompt)['activations'] / measured - 1:+.1%}"


def main() -> None:
    print("| family | fp32, 1,024 / 2,048 tokens | bf16, 1,024 / 2,048 tokens |")
    print("|---|---|---|")
    for family in sorted(EAGER_FAMILIES):
        cfg = {"model_type": family, **EAGER_FAMILIES[family]}
        cells = [" / ".join(_error(cfg, dtype, "eager", 1, prompt) for prompt in (1024, 2048))
                 for dtype in ("fp32", "bf16")]
        print(f"| {family} | {cells[0]} | {cells[1]} |", flush=True)
    mistral = load_config(Path(__file__).parents[1] / "tests" / "data" / "probe" / "mistral_swa.json")
    for name, cfg in (("mistral (64-token window)", mistral), ("ergo", {"model_type": "ergo", **EAGER_FAMILIES["ergo"]}),
                      ("falcon", {"model_type": "falcon", **EAGER_FAMILIES["falcon"]})):
        print(f"SDPA, 2 x 2,048 tokens, {name}: fp32 {_error(cfg, 'fp32', 'sdpa', 2, 2048)}, "
              f"bf16 {_error(cfg, 'bf16', 'sdpa', 2, 2048)}", flush=True)


if __name__ == "__main__":
    main()

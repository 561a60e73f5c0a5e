"""Core speed benchmark (prints figures; no assertions).

- one `estimate` call (warm caches: the inventory and per-tensor bytes are cached
  per architecture and format, as in the app where the model rarely changes);
- a cold estimate (caches cleared);
- a sweep of 8 scenarios x 4,096 context points (target: under 10 ms in total);
- an Ollama estimate that llama-server's --fit places (the search over trial placements, uncached).

Run: python benchmarks/bench_core.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from memviz.core.engines.llamacpp import weight_tensors
from memviz.core.engines.llamacpp_fit import fit_placement
from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import sweep
from memviz.core.formats import tensor_bytes
from memviz.core.inventory import build_inventory
from memviz.core.presets import get_preset


def timeit(fn, repeat: int = 50) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def main() -> None:
    a = get_preset("llama-3.1-8b").architecture()
    sc = Scenario(context_tokens=8192, batch=4)
    estimate(a, sc)
    med, best = timeit(lambda: estimate(a, sc), 200)
    print(f"estimate (warm), Llama-3.1-8B: median {med * 1e3:.3f} ms, best {best * 1e3:.3f} ms")

    def cold():
        build_inventory.cache_clear()
        tensor_bytes.cache_clear()
        weight_tensors.cache_clear()
        estimate(get_preset("deepseek-v3").architecture(), Scenario(weight_format="Q4_K_M", engine="llamacpp"))

    med, best = timeit(cold, 10)
    print(f"estimate (cold caches), DeepSeek-V3 Q4_K_M: median {med * 1e3:.2f} ms, best {best * 1e3:.2f} ms")

    formats = ["bf16", "fp8", "int8", "gptq-int4", "awq-int4", "bnb-nf4", "Q4_K_M", "Q8_0"]
    scenarios = [Scenario(weight_format=f, engine="llamacpp" if f.startswith("Q") else "vllm", batch=4) for f in formats]
    contexts = np.linspace(256, 131072, 4096).astype(np.int64)
    for s in scenarios:
        sweep(a, s, contexts)
    med, best = timeit(lambda: [sweep(a, s, contexts) for s in scenarios], 50)
    print(f"sweep 8 scenarios x {contexts.size} contexts: median {med * 1e3:.2f} ms, best {best * 1e3:.2f} ms "
          f"(target < 10 ms)")

    moe = get_preset("qwen3-30b-a3b").architecture()
    placed = Scenario(engine="ollama", weight_format="Q8_0", kv_format="fp16", context_tokens=32768, gpu="rtx4090")

    def fitted():
        fit_placement.cache_clear()
        estimate(moe, placed)

    med, best = timeit(fitted, 20)
    print(f"estimate placed by --fit (search uncached), Qwen3-30B-A3B Q8_0 on an RTX 4090: median {med * 1e3:.1f} ms, "
          f"best {best * 1e3:.1f} ms")


if __name__ == "__main__":
    main()

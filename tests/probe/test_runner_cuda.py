"""Real probe runs on a CUDA GPU (skipped without one): random-initialised tiny models of four families
in bf16, measured through torch.cuda's allocator and NVML and compared with the core's estimate.
Acceptance as on the CPU: KV exact, weights within 1 %, the components add up to the peak; on CUDA the
non-torch memory (CUDA context, cuBLAS workspace) is measured and must be positive."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.probe.test_runner_cpu import DATA, FAMILIES, probe  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.parametrize("family", FAMILIES)
def test_cuda_run_against_estimate(family, tmp_path):
    r, msgs = probe("--config", str(DATA / f"{family}.json"), "--dtype", "bf16", "--device", "cuda", "--batch", "2",
                    "--prompt", "512", "--new", "16", env_extra={"MEMVIZ_DATA_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-3000:]
    res = next(m for m in msgs if m["event"] == "result")
    m, e = res["measured"], res["estimate"]
    assert res["scenario"]["device"] == "cuda"
    assert m["kv_cache"] == e["kv_cache"]
    assert abs(m["weights"] - e["weights"]) <= 0.01 * m["weights"]
    assert sum(m[k] for k in ("weights", "kv_cache", "activations", "overhead")) == m["peak"]
    assert res["details"]["nontorch"] > 0
    assert res["timings"]["ttft_s"] > 0 and res["timings"]["decode_tokens_per_s"] > 0

"""Every tensor's ggml type in memviz's GGUF mixes equals what llama.cpp's own quantizer writes (llama-cpp-python
0.3.36, llama.cpp 0c1e570): files of eighteen shapes (GQA 4 and 2, tied output, 8-expert MoE, sliding window, MLA with
its per-head attn_k_b / attn_v_b and a dense lead layer, gpt-oss with its biases, sinks and MXFP4 experts, Qwen3.5's
gated delta-nets dense and MoE, BitNet's sub-norms with its tied token table, dots3, Granite-4.0-H's Mamba2 layers
with experts, Kimi Linear's delta attention beside MLA, Mamba / Mamba2 / Jamba, MiniCPM3's whole attn_kv_b, Qwen3-VL's
language model, and a row length of 384 that forces fallbacks)
built at every mix that needs no importance matrix (the ternary TQ2_0 / TQ1_0 included), read back with
gguf. Gemma 3n's files, whose attn_v tensors are counted over the KV-sharing layers' K / V the file holds, are
checked from recorded quantizer output (tests/core/test_gguf_mixes.py)."""

import shutil
from pathlib import Path

import gguf
import pytest

from memviz.core.arch import from_hf_config, load_config
from memviz.core.formats import get_weight_format
from memviz.core.gguf_mixes import IMATRIX_MIXES
from memviz.core.gguf_names import gguf_name, gguf_tensors
from tests.conftest import needs_llamacpp

pytestmark = pytest.mark.slow
CONFIGS = Path(__file__).parents[1] / "data" / "llamacpp" / "configs"
MIXES = ["MXFP4_MOE", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q5_0", "Q4_K_M", "Q4_K_S", "Q4_0", "Q4_1", "IQ4_XS", "IQ4_NL",
         "Q3_K_L", "Q3_K_M", "Q3_K_S", "IQ3_M", "IQ3_S", "Q2_K", "TQ2_0", "TQ1_0"]


def _shapes():
    def arch(name, **changes):
        a = from_hf_config(load_config(CONFIGS / f"{name}.json"), name=name)
        return a.with_changes(**changes) if changes else a

    return {
        "llama-gqa4-16L": arch("llama-gqa", num_layers=16),
        "qwen2-tied-16L": arch("qwen2-tied", num_layers=16),
        "qwen3moe-8experts-8L": arch("qwen3moe", num_layers=8),
        "gemma2-swa-8L": arch("gemma2-swa", num_layers=8),
        "deepseek2-mla-3L": arch("deepseek2-mla"),
        "gpt-oss-4L": arch("gpt-oss-swa-moe"),
        "qwen35-deltanet-8L": arch("qwen35-deltanet"),
        "qwen35moe-deltanet-8L": arch("qwen35moe-deltanet"),
        "bitnet-tied-4L": arch("bitnet"),
        "dots3-6L": arch("dots3"),
        # per-layer KV heads, 0 in a recurrent layer 0: llama.cpp's n_gqa() is 0 there (the IQ4 attn_v rule)
        "granite-hybrid-moe-8L": arch("granite-hybrid-moe"),
        # the delta layers' attn_q / attn_k / attn_v / attn_output typed by name beside MLA's attn_k_b / attn_v_b
        "kimi-linear-8L": arch("kimi-linear"),
        # Mamba blocks only: x_proj and dt_proj quantized as other matrices, dt_proj's 48-wide rows falling back
        "mamba-tied-6L": arch("mamba"),
        "mamba2-4L": arch("mamba2"),
        "jamba-4L": arch("jamba"),
        # MiniCPM3's MLA weights with attn_kv_b whole (never split, unlike DeepSeek's); Qwen3-VL's language model
        "minicpm3-4L": arch("minicpm3"),
        "qwen3vl-deepstack-4L": arch("qwen3vl-deepstack"),
        "llama-rows-384": arch("llama-gqa", num_layers=8, hidden_size=384, num_heads=6, num_kv_heads=2, head_dim=64,
                               v_head_dim=64, intermediate_size=768),
    }


SHAPES = _shapes()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    needs_llamacpp()
    from memviz.probe import gguf_build

    folder = tmp_path_factory.mktemp("gguf")
    cache: dict = {}

    def get(shape: str, mix: str) -> dict[str, str]:
        if (shape, mix) not in cache:
            path = gguf_build.build(SHAPES[shape], mix, folder)
            cache[shape, mix] = {t.name: t.tensor_type.name for t in gguf.GGUFReader(str(path)).tensors}
            path.unlink()  # 200 files would hold 3 GB; each shape's F16 source stays for its other mixes
        return cache[shape, mix]

    yield get
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_tensor_type_is_llamacpps(built, shape, mix):
    a = SHAPES[shape]
    written = built(shape, mix)
    fmt = get_weight_format(mix)
    ours = {gguf_name(t, a): fmt.storage_for(t, a).name for t in gguf_tensors(a)}
    differ = {n: (ours[n], written[n]) for n in written if n in ours and ours[n].upper() != written[n].upper()}
    assert not differ, differ
    assert set(written) == set(ours)


def test_imatrix_mixes_are_marked():
    assert {"IQ2_XXS", "IQ3_XXS", "IQ1_S", "Q2_K_S"} <= IMATRIX_MIXES and "IQ4_XS" not in IMATRIX_MIXES

"""vLLM 0.34's quantized cache dtypes beyond fp8: the per-token-head caches (`TritonAttentionBackend.customize_spec`:
a head's values, then one fp32 scale for K and one for V) and NVFP4 (`FlashInferBackend.customize_spec`,
`nvfp4_kv_cache_full_dim`), their --kv-cache-dtype names, the backend each forces and what vLLM refuses. Bytes
worked by hand for Llama-3.1-8B: 32 layers x 8 KV heads of 128."""

import pytest

from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.importers.vllm_log import vllm_scenario
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()


def run(kv="bf16", gpu="h100-80g", a=LLAMA8, **options):
    return estimate(a, Scenario(engine="vllm", gpu=gpu, kv_format=kv, context_tokens=8192, options=options))


@pytest.mark.parametrize(("kv", "vector_bytes", "name"), [
    ("int8", 128 + 4, "int8_per_token_head"), ("fp8_pth", 128 + 4, "fp8_per_token_head"),
    ("int4_pth", 64 + 4, "int4_per_token_head"), ("nvfp4", 64 + 128 // 16, "nvfp4"),
])
def test_a_blocks_bytes_and_the_dtype_the_launch_command_names(kv, vector_bytes, name):
    """A 64-token block holds 32 layers x 8 heads x K and V of `vector_bytes`; the command names vLLM's dtype (0.34
    has no plain "int8", which memviz's command used to print)."""
    est = run(kv)
    assert est.engine_facts["kv_block_bytes"] == 64 * 32 * 8 * 2 * vector_bytes
    assert est.launch_command("meta-llama/Llama-3.1-8B").endswith(f"--kv-cache-dtype {name}")


def test_the_backend_each_dtype_runs_on():
    """Per-token-head caches run TRITON_ATTN, so a Hopper GPU captures no FlashAttention 3 split buffers; NVFP4 runs
    FlashInfer, with its workspaces."""
    bf16, int8, nvfp4 = run(), run("int8"), run("nvfp4")
    assert bf16.engine_facts["cudagraph_split_kv_bytes"] > 0 and not bf16.engine_facts["attention_workspace_bytes"]
    assert int8.engine_facts["cudagraph_split_kv_bytes"] == 0 and not int8.engine_facts["attention_workspace_bytes"]
    assert nvfp4.engine_facts["cudagraph_split_kv_bytes"] == 0 and nvfp4.engine_facts["attention_workspace_bytes"] > 0


@pytest.mark.parametrize(("preset", "kv", "gpu", "options", "message"), [
    ("deepseek-v2-lite", "int8", "h100-80g", {}, "MLA backends take no int8_per_token_head"),
    ("llama-3.1-8b", "int8", "h100-80g", {"attention_backend": "FLASH_ATTN"}, "takes no int8_per_token_head"),
    ("llama-3.1-8b", "nvfp4", "h100-80g", {"attention_backend": "TRITON_ATTN"}, "FLASHINFER does"),
    ("llama-3.1-8b", "nvfp4", "v100-32g", {}, "compute capability 8.0 or more"),
    ("qwen2.5-0.5b", "nvfp4", "rtx4090", {}, "64-wide heads"),
    ("gpt-oss-20b", "nvfp4", "h100-80g", {}, "64-wide heads"),
])
def test_what_vllm_refuses(preset, kv, gpu, options, message):
    with pytest.raises(InputError, match=message):
        run(kv, gpu, get_preset(preset).architecture(), **options)


def test_nvfp4_runs_flashinfer_which_takes_16_bit_activations_only():
    """The backend a cache dtype forces is checked as a named one is: FlashInfer refuses float32 activations."""
    sc = Scenario(engine="vllm", gpu="b200", kv_format="nvfp4", weight_format="fp32", context_tokens=8192)
    with pytest.raises(InputError, match="FLASHINFER backend takes float16 and bfloat16"):
        estimate(LLAMA8, sc)
    assert estimate(LLAMA8, Scenario(engine="vllm", gpu="b200", kv_format="int8", weight_format="fp32",
                                     context_tokens=8192)).total > 0  # Triton takes float32


def test_nvfp4_with_64_wide_heads_runs_on_blackwell():
    """FlashInfer's TRT-LLM path on compute capability 10 reads it (the refusal is the fa2 prefill's)."""
    assert run("nvfp4", "b200", get_preset("qwen2.5-0.5b").architecture()).engine_facts["kv_pool_bytes"] > 0


@pytest.mark.parametrize(("logged", "kv"), [("int8_per_token_head", "int8"), ("fp8_per_token_head", "fp8_pth"),
                                            ("int4_per_token_head", "int4_pth"), ("nvfp4", "nvfp4"),
                                            ("fp8_e5m2", "fp8"), ("auto", "bf16")])
def test_the_log_reader_takes_vllms_dtype_names(logged, kv):
    args = f"non-default args: {{'model': '/m', 'kv_cache_dtype': '{logged}'}}\n"
    assert vllm_scenario(args, LLAMA8, "h100-80g").kv_format == kv
    with pytest.raises(InputError, match="'octave_k3v4' is not one memviz models"):
        vllm_scenario(args.replace(logged, "octave_k3v4"), LLAMA8, "h100-80g")

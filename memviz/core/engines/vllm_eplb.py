"""vLLM 0.33's expert-parallel load balancer (`--enable-eplb`, `--eplb-config '{"num_redundant_experts": R}'`):
what it adds to each GPU while the model loads, so inside "Model loading took".

- Redundant experts (model_executor/layers/fused_moe/layer.py `determine_expert_counts`): E + R physical experts
  spread evenly over the EP ranks, (E + R) / ep whole experts a GPU; vLLM refuses an uneven spread ("EPLB currently
  only supports even distribution of experts across ranks", `FusedMoEFactory`).
- The balancer's state (distributed/eplb/eplb_state.py `EplbState.add_model`), per MoE layer on the rank: the
  logical-to-physical map with room for MAX_EXPERT_REDUNDANCY + 1 replicas of every logical expert (int64), the load
  window of window_size steps (EPLBConfig's 1,000, option eplb_window_size) over the physical experts (int32), the
  physical-to-logical map (int64), this pass's load (int32), the replica counts and the last load of the logical
  experts (int64); and one receive buffer for a layer's expert weights (`torch.empty_like` of
  `model.expert_weights[0]`). NIXL registers the weights themselves; the Gloo fallback stages through host memory.
- EPLB needs expert parallelism (config/parallel.py: "enable_expert_parallel must be True to use EPLB") over more
  than one GPU, and redundant experts need EPLB. It acts on models whose vLLM class implements `MixtureOfExperts`
  (models/interfaces.py; `get_mixture_of_experts_model` also takes a multimodal model's language model); vLLM runs
  others without it. DeepSeek-V3's FP8 release as DP 8 + EP on H200s: EPLB adds a 1.41 GB buffer and 0.18 GB of
  state a GPU; with 32 redundant experts, 36 experts a GPU instead of 32: 10.22 GB more expert weights, a 1.59 GB
  buffer and 0.19 GB of state.
"""

from __future__ import annotations

from memviz.core.arch import Architecture
from memviz.core.errors import InputError

MAX_EXPERT_REDUNDANCY = 1023  # eplb_state.py: the maps' replica slots, and the most redundant experts it takes
WINDOW_STEPS = 1000  # EPLBConfig.window_size's default
#: the model types whose vLLM 0.33 class implements MixtureOfExperts (deepseek_v2.py for DeepSeek-V2 and V3, the
#: V3.2 classes built on it, glm4_moe*.py, qwen3_moe.py, qwen3_next.py, qwen3_5.py, mixtral.py, llama4.py,
#: ernie45_moe.py, gemma4.py, lfm2_moe.py, nemotron_h.py, step3p5.py, mimo_v2.py, afmoe.py, AXK1.py, hy_v3.py);
#: gpt-oss, Qwen2-MoE, MiniMax-M2, dots1, Hunyuan-MoE, Granite MoE, OLMoE and Phi-MoE do not
MODEL_TYPES = frozenset({
    "deepseek_v2", "deepseek_v3", "deepseek_v32", "glm4_moe", "glm4_moe_lite", "glm_moe_dsa", "qwen3_moe",
    "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text", "mixtral", "llama4_text", "ernie4_5_moe", "gemma4",
    "gemma4_text", "lfm2_moe", "nemotron_h", "step3p5", "mimo_v2_flash", "afmoe", "axk1", "hy_v3",
})


def balances(a: Architecture, options: dict) -> bool:
    """Whether EPLB acts on this model with these options."""
    return bool(options["enable_eplb"] and a.num_experts and a.model_type in MODEL_TYPES)


def physical_experts(a: Architecture, options: dict) -> int:
    """Experts in every MoE layer across the EP ranks: the checkpoint's and the redundant copies."""
    return a.num_experts + (options["num_redundant_experts"] if balances(a, options) else 0)


def state_bytes(a: Architecture, moe_layers: int, options: dict) -> int:
    """The balancer's maps and load records on one GPU for `moe_layers` MoE layers (module docstring)."""
    if not balances(a, options):
        return 0
    logical, physical = a.num_experts, physical_experts(a, options)
    per_layer = (logical * (MAX_EXPERT_REDUNDANCY + 1) * 8 + options["eplb_window_size"] * physical * 4 + physical * 8
                 + physical * 4 + logical * 8 + logical * 8)
    return moe_layers * per_layer


def check(a: Architecture, options: dict, ep: int) -> None:
    """vLLM's refusals (config/parallel.py `ParallelConfig.__post_init__`, fused_moe/layer.py `FusedMoEFactory`)."""
    redundant = options["num_redundant_experts"]
    if redundant and not options["enable_eplb"]:
        raise InputError(f"num_redundant_experts is set to {redundant} but EPLB is not enabled (vLLM: enable_eplb, "
                         "or unset num_redundant_experts)")
    if options["eplb_window_size"] != WINDOW_STEPS and not options["enable_eplb"]:
        raise InputError("eplb_window_size is set but EPLB is not enabled (enable_eplb)")
    if not options["enable_eplb"]:
        return
    if not options["enable_expert_parallel"]:
        raise InputError("vLLM's EPLB needs enable_expert_parallel")
    if ep <= 1:
        raise InputError("vLLM's EPLB needs more than one GPU in the expert-parallel group (tp x data_parallel_size)")
    if balances(a, options) and physical_experts(a, options) % ep:
        raise InputError(f"vLLM's EPLB spreads experts evenly: {physical_experts(a, options)} experts "
                         f"({a.num_experts} + {redundant} redundant) over {ep} EP ranks do not divide")

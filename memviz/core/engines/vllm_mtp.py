"""Multi-token-prediction (MTP) speculative decoding in vLLM 0.33 (`--speculative-config '{"method": "mtp",
"num_speculative_tokens": k}'`, option `num_speculative_tokens`): what the draft layers add on the last pipeline
stage.

`vllm/config/speculative.py` `SpeculativeConfig.hf_config_override` turns the model's config into its MTP model's
config; `v1/worker/gpu/spec_decode/eagle/utils.py` `load_eagle_model` loads that model beside the target and shares
the target's embedding and LM head with it (`maybe_share_target_embed`, `_should_share`: the copies a checkpoint holds
are loaded, found equal and freed, so only the draft's own layers stay):

- DeepSeek and GLM style (`model_executor/models/deepseek_mtp.py` `DeepSeekMultiTokenPredictorLayer` for DeepSeek-V3,
  V3.2 and GLM-5, `glm4_moe_mtp.py`, `glm4_moe_lite_mtp.py`): per MTP layer a decoder layer like the model's last
  (`mtp_block`), `eh_proj` (a plain `nn.Linear` of 2H x H in the model dtype, whole on every tensor-parallel rank) and
  three RMSNorms (enorm, hnorm, shared_head.norm); `num_nextn_predict_layers` of them (`n_predict`).
- Qwen3-Next and Qwen3.5 style (`qwen3_next_mtp.py`, `qwen3_5_mtp.py` `Qwen3_5MultiTokenPredictor`): `fc` (2H x H, a
  `ColumnParallelLinear`, split over the ranks; counted in 16 bits, as NVFP4 checkpoints store it), three RMSNorms
  (pre_fc_norm_hidden, pre_fc_norm_embedding, norm) and `mtp_num_hidden_layers` full-attention decoder layers
  (`getattr(config, "mtp_num_hidden_layers", 1)`).
- Every draft layer's attention caches in the same pool as one more full-attention layer of the model's shape
  (`get_kv_cache_spec` collects the drafter's Attention layers too), which for a hybrid model also changes the group
  size (`vllm_kv.kv_groups`: Qwen3.5-35B-A3B's 10 + 1 full layers beside 30 delta-net layers make groups of 11).
- The V2 runner's grammar bit mask holds 1 + k rows a request (`StructuredOutputsWorker(max_num_logits=max_num_reqs
  x decode_query_len)`): `vllm_sampler.v2_state_bytes`.

Not modelled: the drafter's pass in the profile run (its layer's workspace after the model's forward, the model's
per-layer one, and a bf16 row of draft logits per dummy request), the draft's own CUDA graphs, kernel padding of the
draft layer's weights, `draft_sample_method="probabilistic"` (the V2 speculator then keeps max_num_seqs x k x
vocabulary draft logits, `v1/worker/gpu/spec_decode/speculator.py`; the default "greedy" keeps none), the rejection
sampler's fp32 verification buffer (at most 1 GiB a chunk, `rejection_sampler.py` `MAX_CHUNK_BYTES`, allocated while
serving, not in the profile), and other speculative methods (EAGLE-1, DFlash, n-gram, draft models; EAGLE-3:
`vllm_eagle3`).
"""

from __future__ import annotations

from memviz.core.arch import FULL, Architecture
from memviz.core.errors import InputError

#: model types whose vLLM MTP model has `eh_proj` (whole on every rank) and `num_nextn_predict_layers` layers
EH_PROJ_TYPES = frozenset({"deepseek_v3", "deepseek_v32", "glm_moe_dsa", "glm4_moe", "glm4_moe_lite"})
#: model types whose vLLM MTP model has `fc` (split over the ranks) and `mtp_num_hidden_layers` layers (default 1)
FC_TYPES = frozenset({"qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"})
#: types whose checkpoints carry MTP layers vLLM 0.34 has no drafter class for (Ling 2.0's, BailingMoeV2)
NO_MTP_MODEL = frozenset({"bailing_moe_v2"})
NORMS = 3  # enorm, hnorm, shared_head.norm / pre_fc_norm_hidden, pre_fc_norm_embedding, norm


def draft_layers(a: Architecture) -> int:
    """The MTP layers vLLM loads for `a` (0: none)."""
    if a.model_type in FC_TYPES:
        return a.mtp_layers or 1
    return a.mtp_layers if a.model_type in EH_PROJ_TYPES else 0


def check(a: Architecture, num_speculative_tokens: int) -> None:
    """A clear error where MTP is asked of a model vLLM has no MTP drafter for, as memviz models them."""
    if num_speculative_tokens and not draft_layers(a):
        why = ("vLLM 0.34 registers no MTP model for it: registry.py has BailingMoeV25MTPModel and "
               "BailingMoeV3MTPModel only" if a.model_type in NO_MTP_MODEL and a.mtp_layers else
               "no num_nextn_predict_layers / mtp_num_hidden_layers")
        raise InputError(f"vLLM's MTP speculative decoding needs the model's own MTP layers; memviz models them for "
                         f"DeepSeek-V3 / V3.2, GLM-4.5 / 5, Qwen3-Next and Qwen3.5, not {a.model_type} ({why})")


def last_full_layer(a: Architecture) -> int | None:
    """The model's last full-attention layer, the shape of a draft layer's cache (None: it has none, which the
    drafters' checks refuse before any draft layer is sized)."""
    return max((i for i in range(a.num_layers) if a.layer_types[i] == FULL and a.layer_caches_kv(i)), default=None)


def head_bytes(a: Architecture, tp: int, act_bytes: int) -> float:
    """One rank's share of what an MTP model holds besides its decoder layers: the fusion projection (2H x H in the
    model dtype, whole on every rank for eh_proj, split for fc) and its RMSNorms."""
    h = a.hidden_size
    fusion = 2 * h * h * act_bytes / (tp if a.model_type in FC_TYPES else 1)
    norms = NORMS * h * act_bytes
    per_layer = a.model_type in EH_PROJ_TYPES
    return (fusion + norms) * (draft_layers(a) if per_layer else 1)

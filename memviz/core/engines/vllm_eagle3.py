"""EAGLE-3 speculative decoding in vLLM 0.34 (`--speculative-config '{"method": "eagle3", "model": DRAFTER,
"num_speculative_tokens": k}'`, options `speculative_method` eagle3, `num_speculative_tokens`): the drafter vLLM
loads beside the target, read from the 0.34.0 wheel.

`model_executor/models/llama_eagle3.py` `Eagle3LlamaForCausalLM` builds the drafter from its checkpoint's config
(`LlamaModel`, `LlamaDecoderLayer`), and `v1/worker/gpu/spec_decode/eagle/utils.py` `load_eagle_model` loads it on
the last pipeline stage:

- `num_hidden_layers` decoder layers (the released drafters have one) whose qkv_proj takes the token's embedding and
  the hidden state side by side (a `QKVParallelLinear` of input 2H), an o_proj, a gated MLP of `intermediate_size`,
  and three RMSNorms (input_layernorm, post_attention_layernorm, hidden_norm), split over the TP ranks as the
  target's layers are;
- `fc`, a `ReplicatedLinear` of 3H x H (the three auxiliary hidden states the target hands over: layers 2, L / 2 and
  L - 3 by default, `get_eagle3_default_aux_hidden_state_layers`), whole on every rank; the final norm;
- its own LM head over `draft_vocab_size` tokens (a `ParallelLMHead`, split over the ranks, padded to 64), kept
  because the checkpoint holds one (`process_eagle_weight` sets has_own_lm_head), and with a reduced vocabulary the
  `draft_id_to_target_id` map (int64, one a draft token, whole on every rank);
- no embedding of its own: the drafter's `embed_tokens` is freed and the target's shared (`maybe_share_target_embed`,
  unless the checkpoint carries a different one).

The released drafters take the target's hidden size and head layout, one layer and draft_vocab_size 32,000
(sgl-project/SpecForge `configs/*-eagle3*.json`, tests/data/published/eagle3_drafters.json); a dense target's
drafter its intermediate_size too (Llama-3.1-8B's: ~811 MiB), an MoE target's a width of its own (gpt-oss-20b's
17,280, Qwen3-30B-A3B's 12,288), which `draft_intermediate_size` (or a drafter config, `drafter_options`) must give;
`draft_vocab_size` takes another vocabulary. The `fc_norm` variant's three norms over the auxiliary states (3H
values) are not counted. Its layer caches in the pool as one more full-attention layer of the target's shape (the drafter's
Attention layers are among the KV cache spec's, as the MTP layers are: `vllm_mtp`); the capture sizes and sampler
rows take 1 + k tokens a request as for MTP.

vLLM needs the target class to implement SupportsEagle3 (`eagle/eagle3_utils.py` `set_eagle3_aux_hidden_state_layers`:
"Model does not support EAGLE3 interface"): `NO_EAGLE3` lists the model types memviz reads whose class does not
(scripts/vllm_interface_classes.py over the 0.34.0 wheel; the classes that do: tests/data/published/
vllm_registry.json "eagle3"; the Transformers backend's `Base` does).

Not modelled, as for MTP: the drafter's pass in the profile run (the target's three auxiliary hidden states, the
drafter's forward and its draft logits), its own CUDA graphs, the speculator's input buffers (two max_num_batched_tokens
x H rows); pipeline parallelism (refused here; vLLM takes it for the classes whose decoder relays the auxiliary
states across stages); drafters for MLA models (refused here: DeepSeek's `Eagle3DeepseekV2ForCausalLM` has an MLA
layer, and the Llama-style ones trained for them take widths of their own).
"""

from __future__ import annotations

from typing import Any

from memviz.core.arch import Architecture
from memviz.core.engines.vllm_mtp import last_full_layer
from memviz.core.errors import InputError

#: the drafters `speculative_method` names: the model's own MTP layers (`vllm_mtp`), an EAGLE-3 drafter (here)
SPECULATIVE_METHODS = ("mtp", "eagle3")
#: each method's drafter, as the CLI and the Breakdown name it, and what it is
DRAFTERS = {"mtp": "MTP draft layers", "eagle3": "EAGLE-3 drafter"}
DRAFTER_SOURCES = {"mtp": "the model's own MTP layers",
                   "eagle3": "an EAGLE-3 drafter checkpoint, one layer of the target's widths and its own head "
                             "(draft_intermediate_size, draft_vocab_size)"}
#: the reduced vocabulary the released EAGLE-3 drafters predict over (their configs' draft_vocab_size)
DRAFT_VOCAB = 32_000
AUX_HIDDEN_STATES = 3  # `num_aux_hidden_states` when the config names no eagle_aux_hidden_state_layer_ids
NORMS = 4  # input_layernorm, post_attention_layernorm, hidden_norm, model.norm
VOCAB_PADDING = 64  # `ParallelLMHead`'s DEFAULT_VOCAB_PADDING_SIZE
#: model types memviz reads whose vLLM 0.34 class implements no SupportsEagle3, with that class
NO_EAGLE3 = {
    "axk1": "AXK1ForCausalLM", "bailing_moe": "BailingMoeForCausalLM", "bailing_moe_v2": "BailingMoeV2ForCausalLM",
    "bloom": "BloomForCausalLM", "cohere": "CohereForCausalLM",
    "cohere2": "Cohere2ForCausalLM", "dbrx": "DbrxForCausalLM", "dots3_note_text": "Dots3NoteForCausalLM",
    "ernie4_5_moe": "Ernie4_5_MoeForCausalLM", "exaone4": "Exaone4ForCausalLM",
    "exaone_moe": "ExaoneMoeForCausalLM", "falcon": "FalconForCausalLM", "falcon_h1": "FalconH1ForCausalLM",
    "flint": "FlintForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForConditionalGeneration",
    "gemma3_text": "Gemma3ForCausalLM", "gemma3n": "Gemma3nForConditionalGeneration",
    "gemma3n_text": "Gemma3nForCausalLM", "glm4": "Glm4ForCausalLM", "glm4_moe": "Glm4MoeForCausalLM",
    "glm4_moe_lite": "Glm4MoeLiteForCausalLM", "gpt2": "GPT2LMHeadModel", "gptj": "GPTJForCausalLM",
    "granitemoehybrid": "GraniteMoeHybridForCausalLM", "hy_v3": "HYV3ForCausalLM", "hy_v4": "HYV4ForCausalLM",
    "hyperclovax": "HyperCLOVAXForCausalLM", "lfm2": "Lfm2ForCausalLM", "lfm2_moe": "Lfm2MoeForCausalLM",
    "lfm3": "Lfm3ForCausalLM", "longcat_flash": "LongcatFlashForCausalLM",
    "falcon_mamba": "FalconMambaForCausalLM", "jamba": "JambaForCausalLM", "mamba": "MambaForCausalLM",
    "mamba2": "Mamba2ForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "nemotron": "NemotronForCausalLM",
    "olmo_hybrid": "OlmoHybridForCausalLM", "opt": "OPTForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM",
    "step3p5": "Step3p5ForCausalLM",
}


def check(a: Architecture, options: dict[str, Any], pp: int) -> None:
    """What vLLM refuses (a target class without SupportsEagle3) and what memviz does not model (pipeline
    parallelism, MLA targets, whose drafters take their own shapes, targets without a full-attention layer to size
    the drafter's cache by), in one line each."""
    if a.model_type in NO_EAGLE3:
        raise InputError(f"vLLM 0.34 runs no EAGLE-3 drafter beside {a.model_type}: {NO_EAGLE3[a.model_type]} does "
                         "not support the EAGLE3 interface")
    if pp > 1:
        raise InputError("memviz models an EAGLE-3 drafter on one pipeline stage (pp 1)")
    if last_full_layer(a) is None:
        raise InputError("memviz counts an EAGLE-3 drafter's cache as the target's full-attention layer; "
                         f"{a.model_type} here has none (a sliding window on every layer)")
    if a.is_mla:
        raise InputError("memviz models Llama-style EAGLE-3 drafters; an MLA model's (deepseek_eagle3.py "
                         "Eagle3DeepseekV2ForCausalLM, or a Llama-style one of its own widths) is not modelled")
    if a.is_moe and not options["draft_intermediate_size"]:
        raise InputError("an MoE model's EAGLE-3 drafters take an MLP width of their own (SpecForge's: 17,280 for "
                         "gpt-oss-20b, 12,288 for Qwen3-30B-A3B): give draft_intermediate_size or --draft-config")
    if options["draft_vocab_size"] > a.output_rows:
        raise InputError(f"draft_vocab_size {options['draft_vocab_size']:,d} exceeds the target's vocabulary "
                         f"({a.output_rows:,d})")


def drafter_options(cfg: dict[str, Any], a: Architecture) -> dict[str, str]:
    """The options that stand for an EAGLE-3 drafter's config.json beside target `a` (the fields
    `Eagle3LlamaForCausalLM` reads: intermediate_size, draft_vocab_size, else vocab_size); InputError for a config that
    is not an EAGLE-3 drafter's or one memviz's drafter cannot stand for (another hidden size, head layout or layer
    count than the one-layer drafter of the target's widths)."""
    names = [str(n) for n in cfg.get("architectures") or ()]
    if not any("eagle3" in n.lower() for n in names):
        raise InputError(f"not an EAGLE-3 drafter's config (architectures {names or 'missing'}: vLLM's EAGLE-3 "
                         "drafters are Eagle3*ForCausalLM / LlamaForCausalLMEagle3)")
    want = {"hidden_size": a.hidden_size, "num_attention_heads": a.num_heads,
            "num_key_value_heads": a.num_kv_heads, "head_dim": a.head_dim, "num_hidden_layers": 1}
    for key, value in want.items():
        if cfg.get(key, value) != value:
            raise InputError(f"the drafter's {key} is {cfg.get(key)!r}; memviz models one-layer EAGLE-3 drafters of "
                             f"the target's widths ({key} {value})")
    out = {"speculative_method": "eagle3"}
    for option, keys in (("draft_intermediate_size", ("intermediate_size",)),
                         ("draft_vocab_size", ("draft_vocab_size", "vocab_size"))):
        value = next((cfg[k] for k in keys if cfg.get(k) is not None), None)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise InputError(f"the drafter's config has no positive {' / '.join(keys)}")
        out[option] = str(value)
    return out


def draft_vocab(a: Architecture, options: dict[str, Any]) -> int:
    """The drafter's vocabulary: the option, or `DRAFT_VOCAB` (the target's where that is smaller)."""
    return options["draft_vocab_size"] or min(DRAFT_VOCAB, a.output_rows)


def draft_bytes(a: Architecture, options: dict[str, Any], tp: int, act_bytes: int) -> float:
    """One TP rank's bytes of the drafter's weights (see the module docstring), in the model dtype."""
    h, hd = a.hidden_size, a.head_dim
    inter = options["draft_intermediate_size"] or a.intermediate_size
    q, kv = a.num_heads * hd / tp, max(a.num_kv_heads * hd / tp, hd)  # fewer KV heads than ranks: one a rank
    layer = 2 * h * (q + 2 * kv) + q * h + 3 * h * inter / tp  # qkv_proj over 2H, o_proj, gate_up and down
    vocab = draft_vocab(a, options)
    head = -(-vocab // VOCAB_PADDING) * VOCAB_PADDING * h / tp
    values = layer + NORMS * h + AUX_HIDDEN_STATES * h * h + head
    return values * act_bytes + (8 * vocab if vocab != a.output_rows else 0)

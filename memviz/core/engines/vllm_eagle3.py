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

The released drafters take the target's widths (SpecForge's and the EAGLE authors' configs: hidden_size, heads,
KV heads and intermediate_size equal to the target's, one layer, draft_vocab_size 32,000: ~811 MB for
Llama-3.1-8B's), which are the defaults here; `draft_intermediate_size` and `draft_vocab_size` take another
drafter's. Its layer caches in the pool as one more full-attention layer of the target's shape (the drafter's
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
    "axk1": "AXK1ForCausalLM", "bloom": "BloomForCausalLM", "cohere": "CohereForCausalLM",
    "cohere2": "Cohere2ForCausalLM", "dbrx": "DbrxForCausalLM", "dots3_note_text": "Dots3NoteForCausalLM",
    "ernie4_5_moe": "Ernie4_5_MoeForCausalLM", "exaone4": "Exaone4ForCausalLM",
    "exaone_moe": "ExaoneMoeForCausalLM", "falcon": "FalconForCausalLM", "falcon_h1": "FalconH1ForCausalLM",
    "flint": "FlintForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForConditionalGeneration",
    "gemma3_text": "Gemma3ForCausalLM", "gemma3n": "Gemma3nForConditionalGeneration",
    "gemma3n_text": "Gemma3nForCausalLM", "glm4": "Glm4ForCausalLM", "glm4_moe": "Glm4MoeForCausalLM",
    "glm4_moe_lite": "Glm4MoeLiteForCausalLM", "gpt2": "GPT2LMHeadModel", "gptj": "GPTJForCausalLM",
    "granitemoehybrid": "GraniteMoeHybridForCausalLM", "hy_v3": "HYV3ForCausalLM", "hy_v4": "HYV4ForCausalLM",
    "hyperclovax": "HyperCLOVAXForCausalLM", "lfm2": "Lfm2ForCausalLM", "lfm2_moe": "Lfm2MoeForCausalLM",
    "lfm3": "Lfm3ForCausalLM", "mixtral": "MixtralForCausalLM", "nemotron": "NemotronForCausalLM",
    "olmo_hybrid": "OlmoHybridForCausalLM", "opt": "OPTForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM",
    "step3p5": "Step3p5ForCausalLM",
}


def check(a: Architecture, options: dict[str, Any], pp: int) -> None:
    """What vLLM refuses (a target class without SupportsEagle3) and what memviz does not model (pipeline
    parallelism, MLA targets, whose drafters take their own shapes), in one line each."""
    if a.model_type in NO_EAGLE3:
        raise InputError(f"vLLM 0.34 runs no EAGLE-3 drafter beside {a.model_type}: {NO_EAGLE3[a.model_type]} does "
                         "not support the EAGLE3 interface")
    if pp > 1:
        raise InputError("memviz models an EAGLE-3 drafter on one pipeline stage (pp 1)")
    if a.is_mla:
        raise InputError("memviz models Llama-style EAGLE-3 drafters; an MLA model's (deepseek_eagle3.py "
                         "Eagle3DeepseekV2ForCausalLM, or a Llama-style one of its own widths) is not modelled")
    if options["draft_vocab_size"] > a.output_rows:
        raise InputError(f"draft_vocab_size {options['draft_vocab_size']:,d} exceeds the target's vocabulary "
                         f"({a.output_rows:,d})")


def draft_vocab(a: Architecture, options: dict[str, Any]) -> int:
    """The drafter's vocabulary: the option, or `DRAFT_VOCAB` (the target's where that is smaller)."""
    return options["draft_vocab_size"] or min(DRAFT_VOCAB, a.output_rows)


def draft_bytes(a: Architecture, options: dict[str, Any], tp: int, act_bytes: int) -> float:
    """One TP rank's bytes of the drafter's weights (see the module docstring), in the model dtype."""
    h, hd = a.hidden_size, a.head_dim
    inter = options["draft_intermediate_size"] or a.intermediate_size
    q, kv = a.num_heads * hd / tp, max(a.num_kv_heads * hd / tp, hd)  # fewer KV heads than ranks: one a rank
    layer = 2 * h * (q + 2 * kv) + q * h + 3 * h * inter / tp + (NORMS - 1) * h
    vocab = draft_vocab(a, options)
    head = -(-vocab // VOCAB_PADDING) * VOCAB_PADDING * h / tp
    values = layer + AUX_HIDDEN_STATES * h * h + h + head
    return values * act_bytes + (8 * vocab if vocab != a.output_rows else 0)

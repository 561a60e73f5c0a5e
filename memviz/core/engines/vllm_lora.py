"""LoRA serving in vLLM (--enable-lora), as vllm-project/vllm 0.34.0 allocates it (read from its PyPI wheel).

At load vLLM wraps the language model's layers in LoRA layers (`lora/model_manager.py` `_create_lora_modules`: with
no --lora-target-modules every module `lora/utils.py` `get_supported_lora_modules` names: every `LinearBase` and the
MoE runner, and the modules the model class lists in `embedding_modules`; with it, the modules whose own name or one
of the names packed into them it lists, `is_in_target_modules`: q_proj selects the whole qkv_proj) and gives each
slots for max_loras
adapters of max_lora_rank, zeros in lora_dtype (the model's by default), kept for the server's life; "Model loading
took" includes them. Per slot:

- a column-parallel layer (q / k / v, gate / up and their merged forms: a slice each; MLA's q_b and kv_b, the
  delta-net projections): A rank x input, B (output / tp) x rank (`lora/layers/base_linear.py`
  `create_lora_weights`, `column_parallel_linear.py`); K and V with fewer KV heads than ranks one head's rows;
- a row-parallel layer (o, down, the mixers' output projections): A rank x (input / tp), B output x rank
  (`row_parallel_linear.py`: input_size_per_partition);
- a replicated layer (the router, MLA's q_a / kv_a): A rank x input, B output x rank;
- with --fully-sharded-loras a column layer's A rank / tp, a row layer's B output / tp;
- the MoE experts (`lora/layers/fused_moe.py` `FusedMoEWithLoRA`): for each expert the rank holds, gate and up A
  rank x hidden and B (intermediate / moe tp) x rank, down A rank x (intermediate / moe tp) and B hidden x rank;
- embed_tokens (`vocab_parallel_embedding.py`): A vocab x rank, B hidden x rank; lm_head (`logits_processor.py`
  `LogitsProcessorWithLoRA`, which refuses vocabularies beyond 258,048): A rank x hidden, B vocab x rank; for the
  classes that list them (`EMBEDDING_LORA`).

The dummy adapters of the profile run are made on the CPU and copied into the slots; the LoRA kernels' own
buffers in the forward (a few MiB: tokens x rank x slices in fp32) are not counted. CUDA graphs are captured once
without and once with active adapters (`v1/worker/gpu/lora_utils.py` `get_lora_capture_cases`, [0, max_loras + 1]
with cudagraph_specialize_lora, its default). The vision and audio towers are not wrapped
(enable_tower_connector_lora off).
"""

from __future__ import annotations

from memviz.core.arch import Architecture
from memviz.core.errors import InputError
from memviz.core.inventory import Role, build_inventory

#: the ranks --max-lora-rank takes (`config/lora.py` `MaxLoRARanks`)
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
#: the largest vocabulary `LogitsProcessorWithLoRA` takes
LORA_VOCAB_LIMIT = 258_048
#: model types memviz reads whose vLLM class lists `embedding_modules` (vLLM 0.34 models/*.py; a multimodal class's
#: language model inherits them): both embed_tokens and lm_head, or embed_tokens alone (commandr.py's
#: CohereForCausalLM, which runs Command R and R7B)
EMBEDDING_LORA: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("llama", "qwen3", "qwen3_moe", "qwen3_5_text", "qwen3_5_moe_text", "mixtral", "granite",
                     "granitemoe", "granitemoeshared", "granitemoehybrid", "nemotron", "nemotron_h", "phimoe",
                     "exaone", "exaone4", "exaone_moe", "lfm2", "lfm2_moe", "lfm3", "falcon_h1", "apertus"),
                    ("embed_tokens", "lm_head")),
    **dict.fromkeys(("cohere", "cohere2"), ("embed_tokens",)),
}
#: model types memviz reads whose vLLM 0.34 class implements no SupportsLoRA, with that class: vLLM refuses
#: --enable-lora for them (`v1/worker/lora_model_runner_mixin.py` `load_lora_model`: "<class> does not support LoRA
#: yet."). Found by walking the 0.34.0 wheel's model classes and their bases (scripts/vllm_interface_classes.py; the
#: classes that do: tests/data/published/vllm_registry.json "lora"); types vLLM runs on its Transformers backend
#: support it (`models/transformers/base.py` `Base`)
NO_LORA = {"beam": "BeamForCausalLM", "bloom": "BloomForCausalLM", "cohere2_moe": "Cohere2MoeForCausalLM",
           "dbrx": "DbrxForCausalLM", "dots3_note_text": "Dots3NoteForCausalLM", "falcon": "FalconForCausalLM",
           "kimi_linear": "KimiLinearForCausalLM", "mamba": "MambaForCausalLM", "falcon_mamba": "FalconMambaForCausalLM",
           "mamba2": "Mamba2ForCausalLM",
           "flint": "FlintForCausalLM", "gemma3n": "Gemma3nForConditionalGeneration",
           "gemma3n_text": "Gemma3nForCausalLM", "gpt2": "GPT2LMHeadModel", "gptj": "GPTJForCausalLM",
           "mimo_v2_flash": "MiMoV2FlashForCausalLM", "minimax_m3_vl_text": "MiniMaxM3SparseForCausalLM",
           "mistral_large4_text": "MistralLarge4ForCausalLM", "step3p5": "Step3p5ForCausalLM"}
#: memviz's projection kinds that vLLM builds packed: its module and the names packed into it (the model classes'
#: `packed_modules_mapping`: llama.py qkv_proj / gate_up_proj, qwen3_5.py in_proj_qkvz / in_proj_ba, deepseek_v2.py
#: fused_qkv_a_proj (with q_lora_rank))
PACKED = {**dict.fromkeys(("q", "k", "v"), ("qkv_proj", ("q_proj", "k_proj", "v_proj"))),
          **dict.fromkeys(("gate", "up"), ("gate_up_proj", ("gate_proj", "up_proj"))),
          **dict.fromkeys(("ssm_in_qkv", "ssm_in_z"), ("in_proj_qkvz", ("in_proj_qkv", "in_proj_z"))),
          **dict.fromkeys(("ssm_beta", "ssm_alpha"), ("in_proj_ba", ("in_proj_b", "in_proj_a"))),
          **dict.fromkeys(("q_a", "kv_a"), ("fused_qkv_a_proj", ("q_a_proj", "kv_a_proj_with_mqa")))}
#: LFM2's own names (lfm2.py, lfm2_moe.py: `w13` packs w1 and w3, `w2`, the attention's `out_proj`)
LFM2_NAMES = {**dict.fromkeys(("gate", "up"), ("w13", ("w1", "w3"))), "down": ("w2", ()), "o": ("out_proj", ())}
#: Ling's (bailing_moe.py `BailingAttention`: one `query_key_value`, the output `dense`)
BAILING_NAMES = {**dict.fromkeys(("q", "k", "v"), ("query_key_value", ())), "o": ("dense", ())}
#: kinds vLLM builds as RowParallelLinear (their input split over the ranks)
ROW_KINDS = frozenset({"o", "down", "ssm_out", "shortconv_out"})
#: one projection of the gated experts' w13 (gate, up) or their w2 (down)
W13_KINDS, W2_KINDS = frozenset({"gate_exps", "up_exps"}), frozenset({"down_exps"})


def check(a: Architecture, max_loras: int, rank: int, tp: int, fully_sharded: bool,
          targets: frozenset[str] = frozenset()) -> None:
    """What vLLM refuses: a model class without LoRA support (`NO_LORA`), a rank it does not take, a fully sharded
    rank tp does not divide, an output layer's LoRA over a vocabulary beyond `LORA_VOCAB_LIMIT`; and a target module
    that names nothing of the model (vLLM would wrap nothing for it: a typo memviz reports)."""
    names = target_names(a) if targets else []
    if unknown := sorted(targets - set(names)):
        raise InputError(f"lora_target_modules: {', '.join(unknown)} names no module of {a.name}; its vLLM modules "
                         f"are {', '.join(names)}")
    if a.model_type in NO_LORA:
        raise InputError(f"vLLM 0.34 serves no LoRA adapters on {a.model_type}: {NO_LORA[a.model_type]} does not "
                         "support LoRA yet (turn enable_lora off)")
    if rank not in LORA_RANKS:
        raise InputError(f"vLLM's max_lora_rank is one of {', '.join(map(str, LORA_RANKS))}, not {rank}")
    if max_loras < 1:
        raise InputError("max_loras must be at least 1")
    if fully_sharded and rank % tp:
        raise InputError(f"fully_sharded_loras splits the rank ({rank}) over the {tp} tensor-parallel ranks: "
                         "it must divide it")
    if "lm_head" in EMBEDDING_LORA.get(a.model_type, ()) and a.output_rows > LORA_VOCAB_LIMIT and (
            not targets or "lm_head" in targets):
        raise InputError(f"vLLM's LoRA on the output layer takes vocabularies up to {LORA_VOCAB_LIMIT:,d} tokens; "
                         f"this model has {a.output_rows:,d}")


def slot_values(a: Architecture, layers: range, rank: int, tp: int, moe_tp: int, local_experts: float,
                fully_sharded: bool, first: bool, last: bool, targets: frozenset[str] = frozenset()) -> float:
    """Values one adapter slot holds on a rank of the stage `layers` (module docstring); `local_experts`: the
    experts of a MoE layer the rank holds; `targets`: --lora-target-modules (empty: every module)."""
    total = 0.0
    for t in _lora_tensors(a):
        if t.layer not in layers or (targets and not _targeted(module_of(a, t), targets)):
            continue
        if t.role is Role.EXPERT:
            total += local_experts * _expert_values(t.kind, t.shape, rank, tp, moe_tp, fully_sharded)
        else:
            total += _linear_values(a, t, rank, tp, fully_sharded)
    modules = EMBEDDING_LORA.get(a.model_type, ())
    if first and "embed_tokens" in modules and (not targets or "embed_tokens" in targets):
        total += (a.vocab_size + a.hidden_size) * rank
    if last and "lm_head" in modules and (not targets or "lm_head" in targets):
        total += (a.hidden_size + a.output_rows) * rank
    return total


def module_of(a: Architecture, t) -> tuple[str, tuple[str, ...]]:
    """(the vLLM module holding tensor `t`, the names packed into it) as --lora-target-modules matches them
    (`lora/utils.py` `is_in_target_modules`: a module's own name, or one of the names packed into it)."""
    if t.role is Role.EXPERT:
        return "experts", ()
    leaf = t.name.split(".")[-2]
    if t.role is Role.ROUTER and leaf == "router":  # GateLinear: `gate`, gpt-oss's `router`
        return ("router" if a.model_type == "gpt_oss" else "gate"), ()
    if a.model_type in ("lfm2", "lfm2_moe", "lfm3") and t.kind in LFM2_NAMES:
        return LFM2_NAMES[t.kind]
    if a.model_type in ("bailing_moe", "bailing_moe_v2") and t.kind in BAILING_NAMES:
        return BAILING_NAMES[t.kind]
    packed = PACKED.get(t.kind)
    if packed and not (t.kind == "up" and not a.mlp_gated) and not (t.kind == "q" and a.is_mla):
        return packed
    return leaf, ()


def target_names(a: Architecture) -> list[str]:
    """Every name --lora-target-modules may give for `a`: its modules, the names packed into them, the embeddings
    its class lists."""
    names = dict.fromkeys(n for t in _lora_tensors(a) for module, packed in [module_of(a, t)]
                          for n in (module, *packed))
    return [*names, *EMBEDDING_LORA.get(a.model_type, ())]


def parse_targets(text: str) -> frozenset[str]:
    """--lora-target-modules as the option gives it: names apart by spaces or "+"."""
    return frozenset(text.replace("+", " ").split())


def _targeted(module: tuple[str, tuple[str, ...]], targets: frozenset[str]) -> bool:
    name, packed = module
    return name in targets or any(p in targets for p in packed)


def _lora_tensors(a: Architecture) -> list:
    """The inventory's matrices vLLM wraps in LoRA layers: the linear layers and the experts."""
    return [t for t in build_inventory(a) if t.layer is not None and t.is_matrix and (
        (t.role is Role.EXPERT and len(t.shape) == 3)
        or (t.role in (Role.ATTENTION, Role.MLP, Role.ROUTER) and len(t.shape) == 2))]


def _linear_values(a: Architecture, t, rank: int, tp: int, fully_sharded: bool) -> float:
    out, inp = t.shape
    if t.role is Role.ROUTER or t.kind in ("q_a", "kv_a"):  # ReplicatedLinear
        return rank * inp + out * rank
    if t.kind in ROW_KINDS:
        return rank * inp / tp + (out / tp if fully_sharded else out) * rank
    kv_heads = a.layer_kv_heads(t.layer)
    rows = out / kv_heads if t.kind in ("k", "v") and kv_heads < tp else out / tp  # one KV head a rank
    return (rank / tp if fully_sharded else rank) * inp + rows * rank


def _expert_values(kind: str, shape: tuple[int, ...], rank: int, tp: int, moe_tp: int, fully_sharded: bool) -> float:
    """One expert's gate / up (out = intermediate, in = hidden) or down (out = hidden, in = intermediate)."""
    _, out, inp = shape
    if kind in W13_KINDS:
        return (rank / tp if fully_sharded else rank) * inp + out / moe_tp * rank
    if kind in W2_KINDS:
        return rank * inp / moe_tp + (out / tp if fully_sharded else out) * rank
    return 0.0

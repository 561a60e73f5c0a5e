"""The architecture of a decoder-only model, read from a Hugging Face `config.json`.

Every field that changes memory is kept, per layer where models differ per layer
(sliding-window vs full attention, dense vs MoE blocks). The field meanings follow
the `transformers` configuration classes of each `model_type`; the quirks handled
here are cited where they are applied.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from memviz.core.errors import InputError, reject_unknown_fields
from memviz.core.towers import AUDIO, VISION, Encoder, encoders, mllama_image_tokens

FULL = "full"
SLIDING = "sliding"
LINEAR = "linear"  # a linear-attention layer (gated delta-net or Mamba2): a fixed state per sequence, no KV cache
NO_MIXER = "none"  # a layer of only a feed-forward block (Nemotron-H's MLP and MoE layers): no cache, no state
CROSS = "cross"  # a cross-attention layer (Llama 3.2 Vision): K/V of an image's vision tokens, none of the text's
#: what a LINEAR layer's mixer is (`Architecture.linear_mixer`)
DELTANET = "gated_deltanet"
MAMBA2 = "mamba2"
SHORTCONV = "short_conv"  # LFM2's gated short convolution: the last kernel inputs over hidden channels, no recurrence
KIMI_DELTA = "kimi_delta"  # Kimi Linear's delta attention: a gated delta-net whose decay is per channel, not per head
MAMBA = "mamba"  # Mamba's selective scan (S6): d_state values per channel, dt from a low-rank projection
LINEAR_MIXER_NAMES = {DELTANET: "gated delta-net", MAMBA2: "Mamba2", SHORTCONV: "short convolution",
                      KIMI_DELTA: "Kimi delta attention", MAMBA: "Mamba"}

#: model_types whose config fields memviz reads with their own quirks.
KNOWN_MODEL_TYPES = (
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
    "gemma3_text", "gemma3", "phi3", "gpt2", "gpt_neox", "opt", "falcon", "deepseek_v2", "deepseek_v3", "gpt_oss",
    "glm4", "glm4_moe", "glm4_moe_lite", "starcoder2", "phi", "arcee", "apertus", "ernie4_5", "ernie4_5_moe",
    "llama4_text", "gemma4_text", "gemma4", "gemma4_unified_text", "gemma4_unified", "deepseek_v32", "glm_moe_dsa",
    "qwen3_5_text", "qwen3_5", "qwen3_5_moe_text", "qwen3_5_moe", "qwen3_next", "kimi_linear", "granitemoehybrid", "nemotron_h",
    "bamba", "gpt_bigcode", "gptj", "codegen", "gpt_neo", "bloom", "solar_open", "exaone4", "exaone_moe", "hy_v3",
    "afmoe", "mimo_v2_flash", "flint", "persimmon", "lfm2", "lfm2_moe", "falcon_h1", "deepseek_v4", "jais2", "nanochat",
    "minimax_m3_vl_text", "hy_v4", "laguna", "axk1", "kolibri1", "beam", "cohere", "cohere2", "olmo", "olmo2", "olmo3",
    "olmoe", "flex_olmo", "seed_oss", "glm", "stablelm", "nemotron", "hunyuan_v1_dense", "phimoe", "minimax_m2",
    "hyperclovax", "hunyuan_v1_moe", "cohere2_moe", "lfm3", "olmo_hybrid", "dots1", "muse_glimmer_text",
    "cosmos3_edge_text", "mllama_text_model", "aria_text", "molmo2_text", "gemma3n_text", "gemma3n",
    *("granite", "granitemoe", "granitemoeshared", "smollm3", "ministral3", "exaone", "internlm3", "helium",
      "vaultgemma", "cwm", "minicpm3", "youtu", "iquestcoder",
      "emu3_text_model"),  # Llama's layout (Emu3DecoderLayer: LlamaDecoderLayer with a dropout): LLAMA_LAYOUT_TIED
    "dbrx", "mpt", "mamba", "falcon_mamba", "mamba2", "jamba",
    "granite_swa", "granitemoe_swa", "mellum",  # Llama's layout with attention sinks; with q/k norms and experts
    "muse_spark_text", "ministral",  # MinistralForCausalLM: Mistral's decoder, its window in every layer
    "modernbert-decoder", "chameleon", "dots3_note_text",
    "step3p5",  # Step 3.5 / 3.7's language model (Step3p7TextConfig)
    "mistral_large4_text",
    "axk2",  # A.X-K2: DeepSeek-V3.2's attention with a query-made output gate, gated norms
    "diffllama",  # DiffLlama: Llama's layout with differential attention's four lambdas a layer
    "bitnet",  # BitNet b1.58: Llama's layout, a norm before o_proj and one before down_proj, relu² gated MLP
    "voxtral_realtime_text",  # Voxtral Realtime's language model: Mistral's layout, a time-conditioned norm MLP
    "minicpm5_moe",  # MiniCPM5-MoE: Llama's attention with a query-made output gate, DeepSeek-V3's experts
    "ergo",  # Ergo: sliding and NoPE full layers, relu2 MLPs, experts with a norm each, float32 residual stream
    "longcat_flash",  # LongCat-Flash: two MLA attentions and MLPs a decoder layer beside one shortcut MoE
    "bailing_moe_v2",  # Ling 2.0 / Ring 2.0 (BailingMoeV2ForCausalLM): GLM-4.5-style experts, fused q/k/v, q/k norms
    "bailing_moe",  # Ling-lite / -plus (BailingMoeForCausalLM): V2's blocks without q/k norms or a score bias
    "kolibri1_1",  # Kolibri 1.1: Kolibri-1's layers, indexed full layers reading earlier layers' K/V, dense leaders
)
#: of the known types of Llama's layout (two RMSNorms, q/k/v/o, a gated MLP; a window, MLA or experts read from the
#: usual fields; each checked against transformers 5.24's build and a tiny real run, tests/core/engines/
#: test_llama_families_run.py), those whose config class ties the embeddings unless the config says otherwise
#: (SmolLM3Config, MiniCPM3Config, VaultGemmaConfig, YoutuConfig: tie_word_embeddings=True)
LLAMA_LAYOUT_TIED = frozenset({"smollm3", "minicpm3", "vaultgemma", "youtu"})
#: known types whose config class ties the embeddings unless the config says otherwise (GemmaConfig and its
#: successors, MptConfig, GraniteSWAConfig, and LLAMA_LAYOUT_TIED's)
TIED_BY_DEFAULT = LLAMA_LAYOUT_TIED | {"gemma", "gemma2", "gemma3_text", "gemma3n_text", "gemma4_text", "mpt",
                                       "granite_swa"}
#: model types read as the decoders they are built of. The language models of Qwen's VL wrappers
#: (Qwen2_5_VLTextModel: Qwen2's decoder with q/k/v biases; Qwen3VLTextModel / Qwen3VLMoeTextModel: Qwen3's, q/k norms
#: included; Glm4vTextModel / Glm4vMoeTextModel: GLM-4's and GLM-4.5's); Sarvam's models, which transformers 5.24
#: builds with Glm4MoeForCausalLM and DeepseekV3ForCausalLM themselves (models/auto/modeling_auto.py); HY-V4-VL's
#: language model (modular_hy_v4_vl.py: HYV4VLTextModel is HYV4Model, its config HYV4Config's); Mistral 4
#: (modular_mistral4.py: DeepSeek-V3's MLA and experts routed by DeepSeek-V2's bias-free softmax router, whose weight
#: the model's dtype takes, not float32 as memviz gives DeepSeek-V2's in transformers: 0.02 % of its bytes); GLM-OCR's
#: (GlmOcrTextAttention: GLM-4's with q/k/v biased only per attention_bias), GLM-Image's (GlmImageTextModel: GLM-4's
#: decoder, its LM head over the image tokens' vision_vocab_size); Phi-4-multimodal's (Phi4MultimodalConfig
#: is Phi3Config, its decoder layers Phi3DecoderLayer: modular_phi4_multimodal.py); the Qwen2.5-Omni and Qwen3-Omni
#: thinkers' (Qwen2_5OmniThinkerTextModel: Qwen2's decoder, q/k/v biased; Qwen3OmniMoeThinkerTextModel: Qwen3-MoE's);
#: DeepSeek-OCR 2's and Unlimited-OCR's (modular_deepseek_ocr2.py DeepseekOcr2TextDecoderLayer: DeepSeek-V2's experts
#: and router under LlamaAttention's plain multi-head attention, as vLLM 0.33 builds them: deepseek_v2.py
#: `DeepseekAttention` when qk_nope_head_dim == qk_rope_head_dim == 0); Cohere Compass's (CohereCompassDecoderLayer:
#: Cohere2's, one LayerNorm a layer, sliding and full layers), Granite Docling's (GraniteDoclingTextConfig: Granite's
#: decoder, its multipliers weightless) and PaddleOCR-VL's (PaddleOCRDecoderLayer: ERNIE 4.5's, its 3D rotary weightless)
_ALIASES = {"qwen2_vl": "qwen2", "qwen2_vl_text": "qwen2", "qwen2_5_vl": "qwen2", "qwen2_5_vl_text": "qwen2",
            "qwen3_vl_text": "qwen3", "qwen3_vl_moe_text": "qwen3_moe", "glm4v_text": "glm4",
            "glm4v_moe_text": "glm4_moe", "sarvam_moe": "glm4_moe", "sarvam_mla": "deepseek_v3",
            "apertus1p5_text": "apertus", "cohere_compass_text": "cohere2", "granite_docling_text": "granite",
            "paddleocr_vl_text": "ernie4_5", "hy_v4_vl_text": "hy_v4", "longcat_flash_ngram": "longcat_flash",
            "mistral4": "deepseek_v2", "glm_ocr_text": "glm4",
            "glm_image_text": "glm4", "granite4_vision_text": "granite", "hunyuan_vl_text": "hunyuan_v1_dense",
            "phi4_multimodal": "phi3", "qwen2_5_omni_text": "qwen2", "qwen3_omni_moe_text": "qwen3_moe",
            "deepseek_ocr2_text": "deepseek_v2", "unlimited_ocr_text": "deepseek_v2",
            "dots3_note": "dots3_note_text",  # dots3's releases keep the text model's fields at the top level
            "param2moe": "glm4_moe"}  # Param2MoeConfig(Glm4MoeConfig), built by Glm4MoeForCausalLM (transformers 5.25)
_MOSAIC_NAMES = {"d_model": "hidden_size", "n_heads": "num_attention_heads", "n_layers": "num_hidden_layers",
                 "max_seq_len": "max_position_embeddings"}
#: fields under other names, read as memviz's (a field already under memviz's name wins): the released Sarvam
#: configs' (SarvamMoEConfig / SarvamMLAConfig `attribute_map`), DBRX's and MPT's own (DbrxConfig, MptConfig), and the
#: shared MLP's width of a GraniteMoeShared GGUF file (memviz's importer names it shared_expert_intermediate_size)
_RENAMED = {"sarvam_moe": {"num_shared_experts": "n_shared_experts", "use_qkv_bias": "attention_bias"},
            "sarvam_mla": {"num_shared_experts": "n_shared_experts"}, "dbrx": _MOSAIC_NAMES, "mpt": _MOSAIC_NAMES,
            "granitemoeshared": {"shared_expert_intermediate_size": "shared_intermediate_size"},
            # Step3p7TextConfig.attribute_map: the released Step 3.5 / 3.7 configs' names
            "ergo": {"local_attention_window": "sliding_window"},  # ErgoConfig.attribute_map (transformers 5.25)
            # Param2MoeConfig.attribute_map (transformers 5.25): the released Param2 configs' names
            "param2moe": {"num_experts": "n_routed_experts", "num_shared_experts": "n_shared_experts",
                          "use_qkv_bias": "attention_bias", "num_mtp_layers": "num_nextn_predict_layers"},
            "step3p5": {"num_attention_groups": "num_key_value_heads", "moe_num_experts": "n_routed_experts",
                        "moe_top_k": "num_experts_per_tok", "share_expert_dims": "share_expert_dim",
                        "num_mtp_layers": "num_nextn_predict_layers"},
            # KimiLinearConfig.attribute_map (transformers 5.25): the released Kimi Linear configs' names
            "kimi_linear": {"num_experts_per_token": "num_experts_per_tok", "num_shared_experts": "n_shared_experts",
                            "model_max_length": "max_position_embeddings", "moe_renormalize": "norm_topk_prob",
                            "num_expert_group": "n_group"}}
#: defaults of a config class memviz would read otherwise, for fields a config leaves out: MiniCPM5MoeConfig
#: (transformers 5.25) has 128-wide heads whatever hidden_size / num_attention_heads is, and a shared expert;
#: Param2MoeConfig (modular_param2moe.py) ties the embeddings, normalises q and k and has 64-wide heads, a dense
#: first layer of 9,216, 64 routed experts of 2,048 (6 a token), two shared ones and no MTP layer, where
#: Glm4MoeConfig, the type it is read as, unties, has no q/k norms, heads of hidden_size / num_attention_heads,
#: 128 experts of 1,408 (8 a token), one shared one and one MTP layer; ErgoConfig a 512-token window and 256
#: experts of 4,096 (8 a token); Kolibri1_1Config 128-wide heads and a 513-token window; LongcatFlashConfig
#: (transformers 5.25) LongCat-Flash-Chat's shapes: 28 decoder layers of 6,144, 64 heads, MLA latents of 512 (+64
#: rope), queries through a rank of 1,536, 512 experts of 2,048 and 256 zero experts (12 a token)
_CLASS_DEFAULTS = {"param2moe": {"tie_word_embeddings": True, "use_qk_norm": True, "head_dim": 64,
                                 "intermediate_size": 9216, "first_k_dense_replace": 1, "n_routed_experts": 64,
                                 "moe_intermediate_size": 2048, "n_shared_experts": 2, "num_experts_per_tok": 6,
                                 "num_nextn_predict_layers": 0},
                   "minicpm5_moe": {"head_dim": 128, "n_shared_experts": 1},
                   "kolibri1_1": {"head_dim": 128, "sliding_window": 513},
                   "ergo": {"sliding_window": 512, "num_experts": 256, "moe_intermediate_size": 4096,
                            "num_experts_per_tok": 8},
                   "longcat_flash": {"vocab_size": 131072, "hidden_size": 6144, "num_layers": 28,
                                     "num_attention_heads": 64, "max_position_embeddings": 131072, "q_lora_rank": 1536,
                                     "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                                     "v_head_dim": 128, "rope_theta": 10_000_000.0}}
#: the transformers / vLLM class each text model type is built by (transformers 5.24 MODEL_FOR_CAUSAL_LM_MAPPING_NAMES):
#: a config whose model_type memviz does not know but whose `architectures` names one of these is read as that type,
#: as vLLM resolves a model by its architecture (vllm/model_executor/models/registry.py): Kimi-K2's "kimi_k2" is
#: DeepseekV3ForCausalLM
_BY_ARCHITECTURE = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2", "Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "GPTBigCodeForCausalLM": "gpt_bigcode", "GPTJForCausalLM": "gptj",
    "CodeGenForCausalLM": "codegen", "GPTNeoForCausalLM": "gpt_neo", "BloomForCausalLM": "bloom",
    "GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
    "Phi3ForCausalLM": "phi3", "GPT2LMHeadModel": "gpt2", "GPTNeoXForCausalLM": "gpt_neox", "OPTForCausalLM": "opt",
    "FalconForCausalLM": "falcon", "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3",
    "GptOssForCausalLM": "gpt_oss", "Glm4ForCausalLM": "glm4", "Glm4MoeForCausalLM": "glm4_moe",
    "Glm4MoeLiteForCausalLM": "glm4_moe_lite", "Starcoder2ForCausalLM": "starcoder2", "PhiForCausalLM": "phi",
    "ArceeForCausalLM": "arcee", "ApertusForCausalLM": "apertus", "Ernie4_5ForCausalLM": "ernie4_5",
    "Ernie4_5_MoeForCausalLM": "ernie4_5_moe", "DeepseekV32ForCausalLM": "deepseek_v32",
    "GlmMoeDsaForCausalLM": "glm_moe_dsa", "Qwen3NextForCausalLM": "qwen3_next",
    "GraniteMoeHybridForCausalLM": "granitemoehybrid", "NemotronHForCausalLM": "nemotron_h",
    "BambaForCausalLM": "bamba", "SolarOpenForCausalLM": "solar_open", "Exaone4ForCausalLM": "exaone4",
    "ExaoneMoeForCausalLM": "exaone_moe", "ExaoneMoEForCausalLM": "exaone_moe", "HYV3ForCausalLM": "hy_v3",
    "AfmoeForCausalLM": "afmoe", "MiMoV2FlashForCausalLM": "mimo_v2_flash", "FlintForCausalLM": "flint",
    "PersimmonForCausalLM": "persimmon", "Lfm2ForCausalLM": "lfm2", "Lfm2MoeForCausalLM": "lfm2_moe",
    "FalconH1ForCausalLM": "falcon_h1", "DeepseekV4ForCausalLM": "deepseek_v4", "Jais2ForCausalLM": "jais2",
    "NanoChatForCausalLM": "nanochat", "Apertus1p5TextForCausalLM": "apertus",
    "MiniMaxM3SparseForCausalLM": "minimax_m3_vl_text", "HYV4ForCausalLM": "hy_v4", "LagunaForCausalLM": "laguna",
    "MiniCPM5MoeForCausalLM": "minicpm5_moe", "MiniCPM5MoEForCausalLM": "minicpm5_moe",
    "AXK1ForCausalLM": "axk1", "AXK2ForCausalLM": "axk2", "Kolibri1ForCausalLM": "kolibri1",
    "Kolibri1_1ForCausalLM": "kolibri1_1", "BeamForCausalLM": "beam",
    "CohereForCausalLM": "cohere", "Cohere2ForCausalLM": "cohere2", "OlmoForCausalLM": "olmo",
    "Olmo2ForCausalLM": "olmo2", "Olmo3ForCausalLM": "olmo3", "OlmoeForCausalLM": "olmoe",
    "FlexOlmoForCausalLM": "flex_olmo", "SeedOssForCausalLM": "seed_oss", "GlmForCausalLM": "glm",
    "StableLmForCausalLM": "stablelm", "NemotronForCausalLM": "nemotron", "HunYuanDenseV1ForCausalLM": "hunyuan_v1_dense",
    "PhimoeForCausalLM": "phimoe", "MiniMaxM2ForCausalLM": "minimax_m2", "HyperCLOVAXForCausalLM": "hyperclovax",
    "GraniteSWAForCausalLM": "granite_swa", "GraniteMoeSWAForCausalLM": "granitemoe_swa", "MellumForCausalLM": "mellum",
    "MinistralForCausalLM": "ministral",
    "HunYuanMoEV1ForCausalLM": "hunyuan_v1_moe", "Cohere2MoeForCausalLM": "cohere2_moe",
    "Lfm3ForCausalLM": "lfm3", "MambaForCausalLM": "mamba", "FalconMambaForCausalLM": "falcon_mamba",
    "Mamba2ForCausalLM": "mamba2", "JambaForCausalLM": "jamba",
    "OlmoHybridForCausalLM": "olmo_hybrid", "Dots1ForCausalLM": "dots1",
    "LongcatFlashForCausalLM": "longcat_flash", "LongcatFlashNgramForCausalLM": "longcat_flash",
    "BailingMoeV2ForCausalLM": "bailing_moe_v2", "BailingMoeForCausalLM": "bailing_moe",
}
#: hybrid model types whose gated delta-net layers memviz models (their state in transformers)
GATED_DELTANET_TYPES = frozenset({"qwen3_5_text", "qwen3_5_moe_text", "qwen3_next", "olmo_hybrid"})
#: hybrid model types whose Mamba2 layers memviz models (Granite-4.0-H: GraniteMoeHybridMambaLayer)
MAMBA2_TYPES = frozenset({"granitemoehybrid", "nemotron_h", "bamba", "falcon_h1"})
#: hybrid model types whose short-convolution layers memviz models (LFM2: Lfm2ShortConv)
SHORTCONV_TYPES = frozenset({"lfm2", "lfm2_moe", "lfm3"})
#: model types built only of Mamba blocks (MambaMixer, FalconMambaMixer): no attention, no MLP
MAMBA_TYPES = frozenset({"mamba", "falcon_mamba"})
#: the same of Mamba2 blocks (Mamba2Mixer: Mamba-Codestral, mamba2-*)
MAMBA2_ONLY_TYPES = frozenset({"mamba2"})
#: model types whose linear layers memviz models (their state and weights): the gated delta-nets, the Mamba2
#: layers, the short convolutions, Kimi Linear's delta attention and Mamba's selective scan
MODELLED_LINEAR_TYPES = GATED_DELTANET_TYPES | MAMBA2_TYPES | SHORTCONV_TYPES | MAMBA_TYPES | MAMBA2_ONLY_TYPES \
    | {"kimi_linear", "jamba"}
#: Nemotron-H's block kinds (NemotronHConfig `_pattern_to_list`: M, *, -, E) and their names, old and new
_NEMOTRON_BLOCKS = {"M": LINEAR, "mamba": LINEAR, "linear_attention": LINEAR, "*": FULL, "attention": FULL,
                    "full_attention": FULL, "-": "mlp", "mlp": "mlp", "E": "moe", "moe": "moe"}


@dataclass(frozen=True)
class StoredTensor:
    """A tensor as a model file stores it: exact bytes and storage type (from its header)."""

    name: str
    shape: tuple[int, ...]
    role: str  # an inventory Role value
    layer: int | None
    storage: str  # safetensors dtype or ggml type name
    nbytes: int
    offset: int | None = None  # where the tensor's data starts in the file (GGUF), when known


@dataclass(frozen=True)
class Rope:
    """One rotary setting of the attention layers, as the config states it (`rope_parameters`, or `rope_scaling`
    beside `rope_theta` before transformers 5): the scaling type, its factor and original context, the share of
    each head it rotates, its base, whether it has multimodal sections (M-RoPE), and the layer class it is for
    ("full_attention", "sliding_attention"; "" for every layer)."""

    kind: str = "default"
    factor: float = 1.0
    original_positions: int = 0
    rotary_fraction: float = 1.0
    theta: float = 10000.0
    sections: bool = False
    layers: str = ""

    def __post_init__(self) -> None:
        numbers = (self.factor, self.rotary_fraction, self.theta)
        if (not isinstance(self.kind, str) or not isinstance(self.layers, str) or not isinstance(self.sections, bool)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers)
                or not isinstance(self.original_positions, int) or self.original_positions < 0
                or self.factor <= 0 or not 0 < self.rotary_fraction <= 1 or self.theta <= 0):
            raise InputError(f"rope settings need a positive factor and base, a partial_rotary_factor in (0, 1] and a "
                             f"non-negative original context: {self}")


MAX_CONFIG_BYTES = 16 * 2**20  # config.json files are kilobytes; a tokenizer or weights file named so is not one
MAX_DIMENSION = 1 << 24  # no real width, head count or vocabulary comes near 16.7 M
MAX_POSITIONS = 1 << 31  # nor a context beyond 2**31 tokens
MAX_ALTUP_STREAMS = 64  # AltUp's residual streams (Gemma 3n's 4): each is a tensor of its own to list
MAX_LAYERS = 4096  # 30x the deepest published LLM (Llama-3.1-405B: 126 layers)


@dataclass(frozen=True)
class Architecture:
    """Memory-relevant shape of a decoder-only transformer.

    Lengths are element counts. `layer_types[i]` is FULL or SLIDING; `moe_layers[i]`
    says whether layer i has routed experts. MLA models (DeepSeek-V2/V3) set
    `kv_lora_rank` and cache one latent vector per token per layer instead of K and V.
    """

    name: str
    model_type: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    intermediate_size: int
    layer_types: tuple[str, ...]
    sliding_window: int | None = None
    max_position_embeddings: int = 0
    tie_word_embeddings: bool = False
    # the LM head's rows when they are fewer than the embedding's (Apertus 1.5's `output_vocab_size`: its released
    # checkpoints prune the multimodal tokens' rows from the head); 0: vocab_size
    output_vocab_size: int = 0
    lm_head_bias: bool = False  # a biased LM head: PhiForCausalLM, GPTJForCausalLM, CodeGenForCausalLM, PhiMoE's option
    # vision tokens one image gives each cross-attention layer's cache (`towers.mllama_image_tokens`)
    cross_attention_tokens: int = 0
    # block layout
    mlp_gated: bool = True  # gate+up+down (SwiGLU/GeGLU) vs up+down (GELU MLP)
    hidden_act: str = "silu"  # the MLP's activation, a transformers ACT2FN name
    norm_bias: bool = False  # LayerNorm (weight+bias) vs RMSNorm (weight only)
    norms_per_layer: int = 2
    weightless_norms: bool = False  # NanoChatRMSNorm: the norms hold no weight
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    # the q/k norms hold a weight per head channel (heads x head_dim, never a bias): OLMo 2's q_norm / k_norm,
    # Command R+'s and StableLM 2's per-head LayerNorms; False: one head_dim weight shared by the heads
    qk_norm_full: bool = False
    qk_norm_bias: bool = False  # and a bias per head channel (ChameleonLayerNorm over heads x head_dim)
    learned_positions: int = 0  # rows of a learned position embedding (GPT-2, OPT)
    attention_sinks: bool = False  # gpt-oss: one learned logit per head
    # DiffLlamaAttention (transformers 5.24): differential attention's lambda_q1 / k1 / q2 / k2, head_dim each a layer
    differential_lambdas: bool = False
    # BitNet (BitNetAttention.attn_sub_norm over the attention's output before o_proj, BitNetMLP.ffn_sub_norm over
    # the MLP's product before down_proj, transformers 5.24 modeling_bitnet.py)
    sub_norms: bool = False
    # a norm over the token embedding (BloomModel.word_embeddings_layernorm, ModernBertDecoderEmbeddings.norm)
    embedding_norm: bool = False
    first_attn_norm: bool = True  # False: layer 0 has no norm before its attention (ModernBertDecoderLayer: Identity)
    # a dense layer and a norm between the final norm and the LM head (ModernBertDecoderPredictionHead), the dense
    # biased with head_transform_bias
    head_transform: bool = False
    head_transform_bias: bool = False
    sliding_sinks_only: bool = False  # MiMo-V2-Flash: the sinks are its sliding-window layers' alone
    # mixture of experts
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    # Muse Spark's experts work in a narrower space (MuseSparkMoE: pre_expert_proj and its norm into moe_hidden_size,
    # the experts there, a norm, post_expert_proj back); 0: the hidden size
    moe_hidden_size: int = 0
    shared_expert_intermediate_size: int = 0
    residual_gates: bool = False  # Muse Spark: a learned gate vector on each residual branch (two a layer)
    shared_expert_gate: bool = False
    router_bias: bool = False
    expert_bias: bool = False
    router_score_bias: bool = False  # DeepSeek-V3 e_score_correction_bias
    moe_layers: tuple[bool, ...] = ()
    # LongCat-Flash's zero-computation experts: router outputs (and score biases) with no weights behind them
    zero_experts: int = 0
    # the attention sublayers a decoder layer holds (LongCat-Flash: 2); memviz's layers are sublayers, a pipeline
    # stage and a checkpoint's layer index count decoder layers of this many
    block_layers: int = 1
    # LongCat-Flash-Lite's n-gram embedding (vLLM 0.34 longcat_flash_ngram.py `NgramEmbedding`): ngram_embedders
    # hashed tables, table i of ngram_rows + 2i + 1 rows of hidden_size // ngram_embedders, each projected back to
    # hidden_size; the token embedding and their projections averaged into the layers' input
    ngram_embedders: int = 0
    ngram_rows: int = 0
    # the router's dtype a config names (Ling's router_dtype, MiMo-V2's moe_router_dtype); "" where it names none
    router_dtype: str = ""
    # which layers hold a feed-forward block (() = every layer): Nemotron-H's Mamba2 and attention layers hold none
    ffn_layers: tuple[bool, ...] = ()
    # multi-head latent attention
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    mla_kv_b_unsplit: bool = False  # a GGUF converted before llama.cpp split attn_kv_b: no latent cache there
    # a Qwen3-Next GGUF converted before llama.cpp split the delta-nets' in_proj_qkvz: one `ssm_in` tensor per layer
    deltanet_ssm_in: bool = False
    # the GGUF type of the shared expert's gate (Qwen2-MoE family, a {hidden} row): llama.cpp 0c1e570's converter
    # writes it F32 (conversion/base.py `prepare_tensors`); files of earlier converters keep the conversion's F16,
    # which the quantizer leaves (src/llama-quant.cpp: tensors of one dimension are not quantized)
    shared_gate_gguf_type: str = "F32"
    # Gemma 4 (Gemma4TextConfig, transformers 5.24 modeling_gemma4.py): full-attention layers with their own head
    # width and KV heads (0: as the sliding layers), their V taken from K (no v_proj; the cache still holds both),
    # the last layers reusing earlier layers' K/V (no k/v weights, no cache), per-layer input embeddings
    full_head_dim: int = 0
    full_num_kv_heads: int = 0
    full_k_eq_v: bool = False
    kv_shared_layers: int = 0
    # the layer whose K/V each layer attends to (Kolibri 1.1's `kv_source_layers`): a layer reading another's holds
    # no K/V projections and caches nothing; () when every layer reads its own
    kv_sources: tuple[int, ...] = ()
    # keys a query of Kolibri 1.1's indexed (full) layers attends to once it sees more: the indexer's top-k, the
    # local and the sink tokens (Kolibri1_1Indexer `budget`); 0: no such indexer
    token_index_budget: int = 0
    per_layer_input_size: int = 0  # hidden_size_per_layer_input: each layer's slice of the per-layer embedding
    # Qwen3-VL's deepstack: the first layers add a visual feature each, which llama.cpp carries in an input
    # embedding (1 + deepstack_layers) x hidden wide (src/llama-hparams.cpp n_embd_inp, src/models/qwen3vl.cpp)
    deepstack_layers: int = 0
    per_layer_vocab_size: int = 0  # vocab_size_per_layer_input
    double_wide_shared_mlp: bool = False  # use_double_wide_mlp: the KV-sharing layers' MLP is twice as wide
    router_scales: bool = False  # Gemma4TextRouter: a learned scale per hidden unit and per expert
    layer_scalars: bool = False  # Gemma4TextDecoderLayer.layer_scalar: one stored scalar per layer
    # Gemma 3n (transformers 5.24 modeling_gemma3n.py): AltUp carries `altup_inputs` copies of the residual stream
    # through every layer (Gemma3nTextAltUp), a low-rank Laurel block runs beside each attention
    # (Gemma3nTextLaurelBlock), and each layer's MLP may have its own width (`layer_intermediate`; () = every layer
    # intermediate_size, which is then their largest)
    altup_inputs: int = 0
    laurel_rank: int = 0
    layer_intermediate: tuple[int, ...] = ()
    # DeepSeek sparse attention (DeepSeek-V3.2, GLM-5: DeepseekV32Indexer / GlmMoeDsaIndexer): a lightning indexer
    # of `indexer_heads` x `indexer_head_dim` per layer that has one, caching one key of indexer_head_dim a token
    indexer_heads: int = 0
    indexer_head_dim: int = 0
    indexer_layers: tuple[bool, ...] = ()
    indexer_topk: int = 0  # index_topk: the keys each query token's selection keeps
    # Mistral Large 4: the MLA layers without rotary embeddings (their latent holds no rope part; their per-head
    # nope width takes it), and learned scale and bias per head on the attention's and the indexer's softmax
    nope_layers: tuple[bool, ...] = ()
    # dots3 (Dots3NoteTextConfig.per_layer_config, transformers 5.24): its sliding layers' MLA has a latent and a
    # per-head nope width of their own (() = kv_lora_rank / qk_nope_head_dim everywhere), and every MLA layer
    # normalizes its rotary key (Dots3NoteTextAttention.k_rope_only_layernorm)
    layer_kv_lora_ranks: tuple[int, ...] = ()
    layer_nope_dims: tuple[int, ...] = ()
    rope_key_norm: bool = False
    softmax_scaling: bool = False
    # MiniMax-M3's block-sparse indexer (MiniMaxM3VLIndexer, transformers 5.24): its queries projected from the
    # hidden state, one key head, q/k RMS norms, no head weights; it picks blocks of keys rather than keys
    block_indexer: bool = False
    # A.X-K2 (transformers 5.24 modular_axk2.py): AXK2Attention's q_gate_proj makes the queries and a sigmoid gate on
    # the attention's output (heads x (qk head + v head)) from the normed and the raw query latent (2 x
    # q_lora_rank); AXK2GatedRMSNorm gates a norm by a low-rank MLP (hidden -> gated_norm_rank -> hidden): the input
    # norm of every layer and the post-attention norm of the expert layers
    mla_query_gate: bool = False
    gated_norm_rank: int = 0
    # Qwen3.5 / Qwen3-Next (Qwen3_5GatedDeltaNet, transformers 5.24): gated delta-net layers of linear_v_heads value
    # heads over linear_k_heads key heads, a causal convolution of linear_conv_kernel taps over q, k and v; their
    # attention layers gate their output by a second query-sized projection
    linear_k_heads: int = 0
    linear_v_heads: int = 0
    linear_k_head_dim: int = 0
    linear_v_head_dim: int = 0
    linear_conv_kernel: int = 0
    # the config's `mamba_ssm_dtype` (Qwen3.5's released configs: "float32"): vLLM keeps the recurrent state in it
    # (`Qwen3_5ForConditionalGenerationConfig.verify_and_update_config`); "" = the model's dtype
    linear_state_dtype: str = ""
    # Granite-4.0-H (GraniteMoeHybridMambaLayer, transformers 5.24) maps Mamba2 onto the same fields: n_groups as
    # key heads of d_state, mamba_n_heads value heads of mamba_d_head, the convolution over x, B and C (so the
    # state formulas hold as they are), with a fused in_proj, a D per head, a bias on the convolution
    # (mamba_conv_bias) and on in_proj / out_proj (mamba_proj_bias)
    linear_mixer: str = DELTANET
    linear_chunk: int = 0  # mamba_chunk_size: the tokens the reference chunked scan works on at once (Mamba2)
    linear_conv_bias: bool = False
    linear_proj_bias: bool = False
    # Mamba (MambaMixer) maps onto the same fields: one group of B and C (key heads) of d_state, intermediate_size
    # value "heads" of width 1 (llama.cpp's view: src/models/mamba-base.cpp `build_mamba_layer`, n_head = d_inner),
    # a convolution over x only; dt comes through a rank-`linear_dt_rank` projection (x_proj, dt_proj); Falcon-Mamba
    # normalises dt, B and C without weights (`mamba_dt_b_c_rms`)
    linear_dt_rank: int = 0
    mamba_dt_b_c_rms: bool = False
    # Jamba's (JambaMambaMixer): dt, B and C normalised by RMSNorms with weights (dt_layernorm, b_layernorm, c_layernorm)
    mamba_norm_weights: bool = False
    attn_output_gate: bool = False
    # Llama 3's frequency-scaled rope (rope_type "llama3"): llama.cpp's converter stores the factors as rope_freqs
    # (conversion/llama.py `LlamaModel.generate_extra_tensors`: head_dim / 2 F32 values)
    llama3_rope: bool = False
    # the distinct rotary settings of the attention layers (`_ropes`); () = one default rope over max_position_embeddings
    ropes: tuple[Rope, ...] = ()
    # Laguna (LagunaAttention, transformers 5.24): a softplus gate on the attention's output from its own projection,
    # `head_gate` values a head (1: gating "per-head", head_dim: otherwise; 0: no such gate), and query heads per layer
    # (`num_attention_heads_per_layer`; () = num_heads everywhere, num_heads the most of any layer)
    head_gate: int = 0
    layer_heads: tuple[int, ...] = ()
    # a learned bias per head on the attention's output gate (Beam: BeamAttention.gate_bias)
    attn_gate_bias: bool = False
    # an expert layer's norm on the experts' output beside the block's (A.X-K1: AXK1MoE.post_mlp_layernorm)
    moe_output_norm: bool = False
    # a norm weight of the hidden size per routed expert on its output, and one after the shared expert
    # (Ergo: ErgoExperts.post_expert_norm, ErgoSharedExpert.norm)
    expert_output_norms: bool = False
    # the residual stream kept in float32 whatever the weights' dtype (ErgoDecoderLayer adds each branch's float32
    # norm output to it; ErgoModel's float32 token embedding starts it)
    float32_residual: bool = False
    # ALiBi folded into the attention mask: one B x heads x n x T mask in the compute dtype through the forward
    # (transformers 5.25 FalconModel.forward: `masked_fill(alibi / sqrt(head_dim), causal_mask < -1, min)`)
    alibi_mask: bool = False
    # Falcon-H1 (FalconH1DecoderLayer): every attention layer runs a Mamba2 mixer beside its attention, so it caches
    # K/V and holds the mixer's state; that mixer's gated norm is optional (mamba_rms_norm) and its out_proj biased
    # apart from in_proj (projectors_bias; None: as in_proj)
    parallel_mamba: bool = False
    linear_norm: bool = True
    linear_out_bias: bool | None = None
    # DeepSeek-V4 (DeepseekV4Config / modeling_deepseek_v4.py, transformers 5.24): every layer attends over a sliding
    # window of one K=V head (K and V one vector); a layer of compress ratio m > 0 also caches one compressed entry of
    # head_dim per m tokens (the ratio of `indexer_layers`' layers: compressed sparse attention, whose lightning
    # indexer caches compressed keys of indexer_head_dim too; the other: heavily compressed attention);
    # manifold-constrained hyper-connections keep `hyper_streams` residual streams; a grouped low-rank output
    # projection (`out_groups` x `out_lora_rank`); the `hash_layers` route by a token-id table (no score bias)
    compress_ratios: tuple[int, ...] = ()
    hyper_streams: int = 0
    # DeepSeek-V4's hyper-connections mix the streams with a comb matrix too ((2 + n) x n mixes, three scales);
    # HY-V4's drop it (HYV4HyperConnection: 2 x n mixes, two scales)
    hyper_comb: bool = True
    out_groups: int = 0
    out_lora_rank: int = 0
    hash_layers: tuple[bool, ...] = ()
    # multi-token-prediction layers the checkpoint holds beyond num_layers (num_nextn_predict_layers,
    # mtp_num_hidden_layers): loaded only for speculative decoding (`engines.vllm_mtp`)
    mtp_layers: int = 0
    # a multimodal checkpoint's vision / audio encoders with their projectors (`memviz.core.towers`): loaded beside
    # the language model by transformers and vLLM, kept in a separate mmproj file by llama.cpp
    encoders: tuple[Encoder, ...] = ()
    stored: tuple[StoredTensor, ...] = ()  # tensors of an imported file (weight format "stored")
    source: str = field(default="", compare=False)
    ref: str = field(default="", compare=False)  # what an engine loads: a repository id, a folder or a file
    native_format: str = field(default="", compare=False)  # the weight format the checkpoint is stored in, if quantized
    native_quantizer: str = field(default="", compare=False)  # its quantization_config's quant_method, if quantized
    native_act_order: bool = field(default=False, compare=False)  # a GPTQ checkpoint quantized with desc_act
    native_asymmetric: bool = field(default=False, compare=False)  # GPTQ-packed with zero points (sym false)
    native_linear_class: str = field(default="", compare=False)  # a BitNet checkpoint's linear_class
    # the transformers class that loads it where no auto class does (a Qwen-Omni checkpoint's thinker; AutoModel for a
    # release that loads with its own code)
    loader: str = field(default="", compare=False)
    # the class of a release's own code (its auto_map) where transformers has none for its type: DeepSeek-OCR's
    # deepseek_vl_v2, which transformers 5.24 does not register ("" otherwise)
    remote_code: str = field(default="", compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        checks = {
            "vocab_size": self.vocab_size, "hidden_size": self.hidden_size, "num_layers": self.num_layers,
            "num_heads": self.num_heads, "num_kv_heads": self.num_kv_heads, "head_dim": self.head_dim,
            "v_head_dim": self.v_head_dim, "intermediate_size": self.intermediate_size,
        }
        for key, value in checks.items():
            if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_DIMENSION:
                raise InputError(f"{key} must be a whole number from 1 to {MAX_DIMENSION:,d}, got {value!r}")
        for key in ("max_position_embeddings", "learned_positions", "num_experts", "experts_per_token",
                    "moe_intermediate_size", "shared_expert_intermediate_size", "qk_rope_head_dim", "qk_nope_head_dim",
                    "sliding_window", "q_lora_rank", "kv_lora_rank", "full_head_dim", "full_num_kv_heads",
                    "kv_shared_layers", "per_layer_input_size", "per_layer_vocab_size", "linear_k_heads",
                    "linear_v_heads", "linear_k_head_dim", "linear_v_head_dim", "linear_conv_kernel", "linear_chunk",
                    "linear_dt_rank",
                    "hyper_streams", "out_groups", "out_lora_rank", "output_vocab_size",
                    "cross_attention_tokens", "altup_inputs", "laurel_rank", "norms_per_layer", "moe_hidden_size",
                    "indexer_heads", "indexer_head_dim", "gated_norm_rank", "head_gate", "mtp_layers",
                    "token_index_budget", "indexer_topk", "zero_experts", "ngram_embedders", "ngram_rows",
                    "deepstack_layers"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= MAX_POSITIONS):
                raise InputError(f"{key} must be a whole number from 0 to {MAX_POSITIONS:,d}, got {value!r}")
        if self.num_layers > MAX_LAYERS:
            raise InputError(f"num_layers must be at most {MAX_LAYERS:,d}, got {self.num_layers:,d}")
        if not isinstance(self.block_layers, int) or self.block_layers < 1 or self.num_layers % self.block_layers:
            raise InputError(f"num_layers ({self.num_layers}) must be a multiple of block_layers ({self.block_layers!r}), "
                             "the attention sublayers a decoder layer holds")
        if self.num_heads % self.num_kv_heads:
            raise InputError(
                f"num_attention_heads ({self.num_heads}) must be a multiple of num_key_value_heads ({self.num_kv_heads})"
            )
        if len(self.layer_types) != self.num_layers or any(t not in (FULL, SLIDING, LINEAR, NO_MIXER, CROSS)
                                                           for t in self.layer_types):
            raise InputError(f"layer_types must list {self.num_layers} entries of '{FULL}', '{SLIDING}', '{LINEAR}', "
                             f"'{NO_MIXER}' or '{CROSS}'")
        if self.ffn_layers and len(self.ffn_layers) != self.num_layers:
            raise InputError(f"ffn_layers must list {self.num_layers} entries")
        keys = self.linear_k_head_dim or self.linear_mixer == SHORTCONV  # a short convolution has no key heads
        if self.state_layers and not (self.linear_v_heads and self.linear_v_head_dim and keys
                                               and self.linear_conv_kernel):
            raise InputError("linear-attention layers need their heads, head widths and convolution kernel")
        for e in self.encoders:
            if e.modality not in (VISION, AUDIO) or isinstance(e.parameters, bool) or not isinstance(
                    e.parameters, int) or not 0 < e.parameters <= MAX_POSITIONS * MAX_DIMENSION:
                raise InputError(f"an encoder is '{VISION}' or '{AUDIO}' with a positive parameter count, got {e!r:.80}")
            if not 0 <= e.float32_parameters <= e.parameters:
                raise InputError(f"an encoder keeps at most its {e.parameters:,d} parameters float32, got "
                                 f"{e.float32_parameters!r}")
        if self.linear_mixer not in LINEAR_MIXER_NAMES:
            raise InputError(f"linear_mixer must be one of {', '.join(map(repr, LINEAR_MIXER_NAMES))}, "
                             f"got {self.linear_mixer!r}")
        if SLIDING in self.layer_types and not (self.sliding_window and self.sliding_window > 0):
            raise InputError("sliding-window layers need a positive sliding_window")
        if self.num_experts:
            if not 0 < self.experts_per_token <= self.num_experts:
                raise InputError(f"experts per token must be in 1..{self.num_experts}, got {self.experts_per_token}")
            if self.moe_intermediate_size <= 0:
                raise InputError("MoE models need a positive moe_intermediate_size")
            if len(self.moe_layers) != self.num_layers:
                raise InputError(f"moe_layers must list {self.num_layers} entries")
        if self.kv_lora_rank is not None and (self.kv_lora_rank <= 0 or self.qk_rope_head_dim <= 0):
            raise InputError("MLA models need positive kv_lora_rank and qk_rope_head_dim")
        self._check_layer_geometry()

    def _check_kv_sources(self) -> None:
        """As Kolibri1_1Config.validate_architecture: each layer reads its own K/V or those of an earlier layer of
        its kind that reads its own."""
        sources, kinds = self.kv_sources, self.layer_types
        if not sources:
            return
        if len(sources) != self.num_layers:
            raise InputError(f"kv_source_layers must name a layer for each of the {self.num_layers} layers")
        for i, src in enumerate(sources):
            if not (isinstance(src, int) and 0 <= src <= i) or sources[src] != src or kinds[src] != kinds[i]:
                raise InputError(f"kv_source_layers: layer {i} must read its own K/V or those of an earlier layer of "
                                 f"its kind that produces its own, got {src!r}")

    def _check_layer_geometry(self) -> None:
        if self.full_num_kv_heads and self.num_heads % self.full_num_kv_heads:
            raise InputError(f"num_attention_heads ({self.num_heads}) must be a multiple of the full-attention "
                             f"layers' key/value heads ({self.full_num_kv_heads})")
        if not 0 <= self.kv_shared_layers < self.num_layers:
            raise InputError(f"num_kv_shared_layers must be below the layer count ({self.num_layers}), "
                             f"got {self.kv_shared_layers}")
        producing = set(self.layer_types[:self.num_layers - self.kv_shared_layers])
        if self.kv_shared_layers and not set(self.layer_types[self.num_layers - self.kv_shared_layers:]) <= producing:
            raise InputError("a layer kind that reuses K/V (num_kv_shared_layers) has no earlier layer producing it")
        self._check_kv_sources()
        if self.nope_layers and (len(self.nope_layers) != self.num_layers or not self.is_mla):
            raise InputError(f"nope_layers must flag each of the {self.num_layers} layers of an MLA model")
        for name in ("layer_kv_lora_ranks", "layer_nope_dims"):
            widths = getattr(self, name)
            if widths and (len(widths) != self.num_layers or not self.is_mla or min(widths) <= 0):
                raise InputError(f"{name} must list a positive width for each of the {self.num_layers} layers of an "
                                 "MLA model")
        if self.indexer_head_dim and len(self.indexer_layers) != self.num_layers:
            raise InputError(f"indexer layers must list {self.num_layers} entries")
        if self.compress_ratios and (len(self.compress_ratios) != self.num_layers
                                     or any(r < 0 for r in self.compress_ratios)):
            raise InputError(f"compress ratios must list {self.num_layers} entries of 0 or more")
        if self.out_groups and (self.num_heads % self.out_groups or not self.out_lora_rank):
            raise InputError(f"o_groups ({self.out_groups}) must divide num_attention_heads ({self.num_heads}) and "
                             "needs a positive o_lora_rank")
        if self.layer_heads and (len(self.layer_heads) != self.num_layers or max(self.layer_heads) != self.num_heads
                                 or any(h <= 0 or (h % self.num_kv_heads and not self.is_mla)
                                        for h in self.layer_heads)):
            raise InputError(f"per-layer head counts must list {self.num_layers} multiples of the "
                             f"{self.num_kv_heads} KV heads, the largest num_attention_heads")
        if self.layer_intermediate and (len(self.layer_intermediate) != self.num_layers
                                        or max(self.layer_intermediate) != self.intermediate_size
                                        or min(self.layer_intermediate) <= 0):
            raise InputError(f"per-layer MLP widths must list {self.num_layers} positive entries, the largest "
                             "intermediate_size")
        if self.altup_inputs == 1 or self.altup_inputs > MAX_ALTUP_STREAMS:
            raise InputError(f"altup_num_inputs must be from 2 to {MAX_ALTUP_STREAMS} (the active stream and those it "
                             f"predicts; Gemma 3n's are 4), got {self.altup_inputs:,d}")
        if bool(self.per_layer_input_size) != bool(self.per_layer_vocab_size):
            raise InputError("per-layer embeddings need both hidden_size_per_layer_input and vocab_size_per_layer_input")
        if self.output_vocab_size > self.vocab_size or (self.output_vocab_size and self.tie_word_embeddings):
            raise InputError(f"output_vocab_size ({self.output_vocab_size:,d}) must be at most vocab_size "
                             f"({self.vocab_size:,d}) and needs an untied LM head")

    @property
    def output_rows(self) -> int:
        """The LM head's rows: the logits' width."""
        return self.output_vocab_size or self.vocab_size

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def decoder_layers(self) -> int:
        """The model's decoder layers, as its config counts them (`num_layers` counts LongCat-Flash's sublayers)."""
        return self.num_layers // self.block_layers

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    def _full(self, i: int) -> bool:
        return self.layer_types[i] != SLIDING

    def layer_head_dim(self, i: int) -> int:
        """Layer i's query / key head width (Gemma 4's full-attention layers have their own)."""
        return self.full_head_dim if self.full_head_dim and self._full(i) else self.head_dim

    def layer_v_head_dim(self, i: int) -> int:
        return self.full_head_dim if self.full_head_dim and self._full(i) else self.v_head_dim

    def layer_num_heads(self, i: int) -> int:
        """Query heads of layer i."""
        return self.layer_heads[i] if self.layer_heads else self.num_heads

    def layer_kv_heads(self, i: int) -> int:
        return self.full_num_kv_heads if self.full_num_kv_heads and self._full(i) else self.num_kv_heads

    def layer_v_from_k(self, i: int) -> bool:
        """Layer i computes no V of its own: it uses its K (Gemma 4's attention_k_eq_v, full-attention layers)."""
        return self.full_k_eq_v and self._full(i)

    def layer_rope_dim(self, i: int) -> int:
        """The rotary part of layer i's MLA latent and keys (0 in Mistral Large 4's NoPE layers)."""
        return 0 if self.nope_layers and self.nope_layers[i] else self.qk_rope_head_dim

    def layer_kv_lora(self, i: int) -> int:
        """Layer i's MLA latent width (dots3's sliding layers have their own)."""
        return self.layer_kv_lora_ranks[i] if self.layer_kv_lora_ranks else self.kv_lora_rank or 0

    def layer_nope_dim(self, i: int) -> int:
        """Layer i's per-head MLA key width without rope (a NoPE layer's takes the rope part)."""
        if self.layer_nope_dims:
            return self.layer_nope_dims[i]
        return self.qk_nope_head_dim + self.qk_rope_head_dim - self.layer_rope_dim(i)

    def layer_indexer(self, i: int) -> bool:
        """Whether layer i runs (and caches keys for) a sparse-attention indexer of its own."""
        return bool(self.indexer_head_dim) and self.indexer_layers[i]

    def layer_compress(self, i: int) -> int:
        """The tokens one compressed cache entry of layer i stands for (DeepSeek-V4); 0: none (its window only)."""
        return self.compress_ratios[i] if self.compress_ratios else 0

    def layer_compressors(self, i: int) -> tuple[tuple[int, int], ...]:
        """(width, overlap) of each compressor of layer i (DeepSeek-V4): the entries' own at head_dim and, in the
        indexer's layers, the indexer's at indexer_head_dim; overlap 2 where windows overlap (compressed sparse
        attention: kv and gate projected to 2 x width, DeepseekV4CSACompressor), else 1; () for a window-only layer."""
        if not self.layer_compress(i):
            return ()
        if self.layer_indexer(i):
            return (self.head_dim, 2), (self.indexer_head_dim, 2)
        return ((self.head_dim, 1),)

    def layer_caches_kv(self, i: int) -> bool:
        """Whether layer i projects and caches K/V of its tokens (the last `kv_shared_layers` reuse earlier ones, as
        do those `kv_sources` points elsewhere; a linear-attention layer keeps a fixed state instead, a
        cross-attention layer an image's K/V)."""
        return (i < self.num_layers - self.kv_shared_layers and self.layer_types[i] not in (LINEAR, NO_MIXER, CROSS)
                and (not self.kv_sources or self.kv_sources[i] == i))

    def layer_kinds_text(self) -> str:
        """The layer kinds and their counts in words ("36 × Mamba2, 4 × full"), in order of first appearance."""
        names = {SLIDING: f"sliding ({self.sliding_window or 0:,} tokens)", FULL: "full",
                 LINEAR: LINEAR_MIXER_NAMES[self.linear_mixer], NO_MIXER: "feed-forward only",
                 CROSS: f"cross-attention ({self.cross_attention_tokens:,} image tokens)"}
        if self.parallel_mamba:
            names[FULL] = f"full + {names[LINEAR]}"
        if self.compress_ratios:  # DeepSeek-V4: every layer's window, and what the compressing layers add
            kinds = [(t, self.compress_ratios[i], self.layer_indexer(i)) for i, t in enumerate(self.layer_types)]
            return ", ".join(f"{n} × {names[t]}" + (f" + 1:{r} compressed" + (" with indexer" if idx else "")
                                                   if r else "") for (t, r, idx), n in Counter(kinds).items())
        kinds = [(t, self.layer_indexer(i)) for i, t in enumerate(self.layer_types)]  # sparse attention's indexer
        text = ", ".join(f"{n} × {names[t]}" + (" with indexer" if idx else "") for (t, idx), n in Counter(kinds).items())
        if self.block_layers > 1:
            return f"{self.decoder_layers} decoder layers of {self.block_layers} attention sublayers ({text})"
        return text

    def layer_has_state(self, i: int) -> bool:
        """Whether layer i holds a recurrent layer's fixed state per sequence (a linear layer, or Falcon-H1's attention
        layers with their Mamba2 mixer beside)."""
        return self.layer_types[i] == LINEAR or (self.parallel_mamba and self.layer_types[i] in (FULL, SLIDING))

    @property
    def attends(self) -> bool:
        """Whether any layer attends (Mamba's blocks do not)."""
        return any(t in (FULL, SLIDING, CROSS) for t in self.layer_types)

    @property
    def has_ffn(self) -> bool:
        """Whether any layer holds a feed-forward block (Mamba's blocks do not)."""
        return any(self.layer_has_ffn(i) for i in range(self.num_layers))

    @property
    def state_layers(self) -> int:
        """How many layers hold a recurrent state (`layer_has_state`)."""
        return sum(self.layer_has_state(i) for i in range(self.num_layers))

    def layer_intermediate_size(self, i: int) -> int:
        """Layer i's dense MLP width (Gemma 3n's per-layer widths; else intermediate_size)."""
        return self.layer_intermediate[i] if self.layer_intermediate else self.intermediate_size

    def layer_has_ffn(self, i: int) -> bool:
        """Whether layer i holds a feed-forward block (MLP or experts)."""
        return not self.ffn_layers or self.ffn_layers[i]

    @property
    def linear_conv_dim(self) -> int:
        """Channels of a linear-attention layer's convolution: q and k of every key head, v of every value head (Mamba
        convolves x alone)."""
        if self.linear_mixer == MAMBA:
            return self.linear_v_heads * self.linear_v_head_dim
        return 2 * self.linear_k_heads * self.linear_k_head_dim + self.linear_v_heads * self.linear_v_head_dim

    @property
    def linear_state_values(self) -> int:
        """Values of one linear-attention layer's recurrent state for one sequence (value heads x k x v)."""
        return self.linear_v_heads * self.linear_k_head_dim * self.linear_v_head_dim

    @property
    def uniform_attention(self) -> bool:
        """Every layer has the same K/V geometry and caches its own (no Gemma 4 per-layer fields)."""
        return not (self.full_head_dim or self.full_num_kv_heads or self.kv_shared_layers or self.kv_reading_layers)

    @property
    def kv_reading_layers(self) -> int:
        """Layers that read an earlier layer's K/V by `kv_sources` (Kolibri 1.1), caching none of their own."""
        return sum(1 for i, source in enumerate(self.kv_sources) if source != i)

    def with_changes(self, **changes: Any) -> Architecture:
        """A copy with fields changed and re-validated (layer lists follow `num_layers`; `decoder_layers` sets it in
        decoder layers of `block_layers` sublayers)."""
        if "decoder_layers" in changes:
            n = changes.pop("decoder_layers")
            changes["num_layers"] = n * self.block_layers if isinstance(n, int) and not isinstance(n, bool) else n
        if changes.get("num_experts") and not self.num_experts:
            # turning a dense model into MoE: every layer routed, sensible defaults for the rest
            changes.setdefault("moe_layers", (True,) * changes.get("num_layers", self.num_layers))
            changes.setdefault("experts_per_token", self.experts_per_token or min(2, changes["num_experts"]))
            changes.setdefault("moe_intermediate_size", self.moe_intermediate_size or self.intermediate_size)
        if "num_layers" in changes:
            n = changes["num_layers"]
            if isinstance(n, int) and 0 < n <= MAX_LAYERS:  # more layers: refused by validation, lists unbuilt
                changes.setdefault("layer_types", _resize(self.layer_types, n))
                if self.moe_layers:
                    changes.setdefault("moe_layers", _resize(self.moe_layers, n))
                if self.indexer_layers:
                    changes.setdefault("indexer_layers", _resize(self.indexer_layers, n))
                for key in ("ffn_layers", "compress_ratios", "hash_layers", "layer_heads", "nope_layers",
                            "layer_kv_lora_ranks", "layer_nope_dims"):
                    if getattr(self, key):
                        changes.setdefault(key, _resize(getattr(self, key), n))
                if self.kv_sources:  # the layers kept read what they read; added ones their own K/V
                    changes.setdefault("kv_sources", tuple(self.kv_sources[:n]) + tuple(range(len(self.kv_sources), n)))
        if "num_heads" in changes and self.layer_heads:  # a head count typed in applies to every layer
            changes.setdefault("layer_heads", ())
        for typed, per_layer in (("kv_lora_rank", "layer_kv_lora_ranks"), ("qk_nope_head_dim", "layer_nope_dims")):
            if typed in changes and getattr(self, per_layer):  # as does a latent or nope width (dots3's)
                changes.setdefault(per_layer, ())
        return replace(self, **changes)

    def windows_in_full(self) -> Architecture:
        """A copy whose sliding-window layers attend (and cache) every token, as an engine runs them when it
        builds the model without windows."""
        return self.with_changes(layer_types=tuple(FULL if kind == SLIDING else kind for kind in self.layer_types),
                                 sliding_window=None)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["layer_types"] = list(self.layer_types)
        d["moe_layers"] = list(self.moe_layers)
        d["indexer_layers"] = list(self.indexer_layers)
        d["ffn_layers"] = list(self.ffn_layers)
        d["compress_ratios"] = list(self.compress_ratios)
        d["hash_layers"] = list(self.hash_layers)
        d["warnings"] = list(self.warnings)
        d["stored"] = [[t.name, list(t.shape), t.role, t.layer, t.storage, t.nbytes, t.offset] for t in self.stored]
        d["encoders"] = [[e.modality, e.family, e.parameters,
                          *([list(e.shape)] if e.shape or e.file or e.float32_parameters else []),
                          *([e.stored_bytes, e.file] if e.file or e.float32_parameters else []),
                          *([e.float32_parameters] if e.float32_parameters else []),
                          *([True] if e.float32_parameters and e.float32_strict else [])]
                         for e in self.encoders]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Architecture:
        """Inverse of `to_dict` (used by sessions); unknown keys are an error."""
        reject_unknown_fields(cls, data, "architecture")
        d = dict(data)
        for f in fields(cls):  # JSON's lists back to the tuples the fields hold (the rows below apart)
            if str(f.type).startswith("tuple[") and f.name in d and f.name not in ("stored", "encoders", "ropes"):
                d[f.name] = tuple(d[f.name])
        d["stored"] = tuple(StoredTensor(row[0], tuple(row[1]), *row[2:7]) for row in d.get("stored", ()))
        try:
            d["ropes"] = tuple(Rope(**r) for r in d.get("ropes", ()))
        except TypeError:  # not a mapping, or fields Rope has not
            raise InputError("architecture ropes must be objects of Rope's fields") from None
        try:
            d["encoders"] = tuple(_encoder_row(row) for row in d.get("encoders", ()))
        except (TypeError, ValueError, IndexError):
            raise InputError("architecture encoders must be [modality, family, parameters(, shape(, stored bytes, "
                             "mmproj file))] rows") from None
        return cls(**d)


def _resize(values: tuple, n: int) -> tuple:
    """Repeat a per-layer pattern to length n (keeps interleave patterns)."""
    if not values:
        return values
    return tuple(values[i % len(values)] for i in range(n))


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a `config.json` file, or the one inside a model folder."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    if not p.exists():
        raise InputError(f"no config.json at {p}")
    return _read_json_object(p)


def _read_json_object(p: Path) -> dict[str, Any]:
    if not p.is_file():  # a FIFO or device would block the read for ever
        raise InputError(f"{p} is not a regular file")
    if p.stat().st_size > MAX_CONFIG_BYTES:
        raise InputError(f"{p} is {p.stat().st_size:,d} bytes; a {p.name} is a few kilobytes")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{p} is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise InputError(f"{p} does not hold a JSON object")
    return data


#: the processor files beside config.json, as transformers saves them: one per modality, or one file of sections
PROCESSOR_FILES = {"image": "preprocessor_config.json", "video": "video_preprocessor_config.json"}
PROCESSOR_SECTIONS = {"image": "image_processor", "video": "video_processor"}


def load_processors(folder: str | Path) -> dict[str, dict[str, Any]]:
    """The image and video processor configs of a model folder ({} where it has none): their sizes decide the
    largest images and videos an engine profiles (`memviz.core.towers`)."""
    folder = Path(folder)
    combined = folder / "processor_config.json"
    sections = _read_json_object(combined) if combined.exists() else {}
    out = {}
    for kind, name in PROCESSOR_FILES.items():
        if (folder / name).exists():
            out[kind] = _read_json_object(folder / name)
        elif isinstance(sections.get(PROCESSOR_SECTIONS[kind]), dict):
            out[kind] = sections[PROCESSOR_SECTIONS[kind]]
    return out



# activation when a config omits it: the transformers config classes' defaults
_DEFAULT_ACT = {"gpt2": "gelu_new", "gptj": "gelu_new", "codegen": "gelu_new", "gpt_neo": "gelu_new",
                "gpt_bigcode": "gelu_pytorch_tanh", "bloom": "gelu", "opt": "relu", "falcon": "gelu", "gpt_neox": "gelu",
                "gemma": "gelu_pytorch_tanh", "gemma2": "gelu_pytorch_tanh", "gemma3_text": "gelu_pytorch_tanh",
                "gemma3n_text": "gelu_pytorch_tanh", "persimmon": "relu2", "jais2": "relu2", "nanochat": "relu2",
                "modernbert-decoder": "gelu", "ergo": "relu2"}


def _get(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    """First present, non-null value among `keys` (configs name the same thing differently)."""
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return default


def _require(cfg: dict[str, Any], *keys: str) -> Any:
    value = _get(cfg, *keys)
    if value is None:
        raise InputError(f"config is missing {' / '.join(keys)}")
    return value


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or int(value) != value:
        raise InputError(f"{key} must be an integer, got {value!r}")
    return int(value)


def _layer_count(cfg: dict[str, Any], *keys: str) -> int:
    """The config's layer count, within `MAX_LAYERS` before any per-layer list is built from it (a corrupt config
    must not allocate without bound)."""
    n = _int(_require(cfg, *keys), "num_hidden_layers")
    if not 0 < n <= MAX_LAYERS:
        raise InputError(f"num_hidden_layers must be a positive integer up to {MAX_LAYERS:,}, got {n:,}")
    return n


def _positive(value: Any, key: str) -> float:
    """A finite positive number (a multiplier or a fraction)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{key} must be a positive number, got {value!r:.60}")
    return float(value)


def _at_least_one(value: Any, key: str) -> int:
    """A period or count that divides: an integer of at least 1."""
    n = _int(value, key)
    if n < 1:
        raise InputError(f"{key} must be at least 1, got {n}")
    return n


def _int_list(value: Any, key: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{key} must be a list of layer numbers, got {value!r:.60}")
    return [_int(v, key) for v in value]


#: types whose first layers are dense when the config lists no kinds: the field that counts them and its default
#: (Glm4MoeLiteConfig / ExaoneMoeConfig first_k_dense_replace = 1; HYV3Config: one dense layer, no field;
#: AfmoeConfig num_dense_layers = 1; Lfm2MoeConfig num_dense_layers = 2)
_FIRST_DENSE = {"glm4_moe_lite": ("first_k_dense_replace", 1), "exaone_moe": ("first_k_dense_replace", 1),
                "kimi_linear": ("first_k_dense_replace", 1),
                "hy_v3": ("first_k_dense_replace", 1), "hy_v4": ("first_k_dense_replace", 1),
                "afmoe": ("num_dense_layers", 1), "minicpm5_moe": ("first_k_dense_replace", 1),
                "ergo": ("num_dense_blocks", 1),
                "lfm2_moe": ("num_dense_layers", 2)}


def _moe_layers(cfg: dict[str, Any], model_type: str, n_layers: int) -> tuple[bool, ...]:
    """Which layers hold routed experts, as each family's decoder layer decides."""
    if model_type == "nemotron_h":  # its "moe" blocks (`_nemotron_h_layers`)
        return tuple(kind == "moe" for kind in cfg["layer_types"])
    if model_type == "jamba" and "mlp_layer_types" not in cfg:  # JambaConfig.layers_num_experts: experts where
        period, offset = _period_offset(cfg, "expert_layer", 2, 1)  # i % expert_layer_period == offset
        return tuple(i % period == offset for i in range(n_layers))
    if model_type in ("qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_5_moe_text", "flint", "kolibri1_1"):
        # Qwen2MoeDecoderLayer: sparse when not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
        # (FlintConfig and Kolibri1_1Config: mlp_only_layers [0, 1] when the config lists none)
        step = _at_least_one(cfg.get("decoder_sparse_step", 1), "decoder_sparse_step")
        listed = cfg.get("mlp_only_layers")
        first_two = listed is None and model_type in ("flint", "kolibri1_1")
        dense_only = set(_int_list([0, 1] if first_two else listed, "mlp_only_layers"))
        return tuple(i not in dense_only and (i + 1) % step == 0 for i in range(n_layers))
    if model_type == "ernie4_5_moe":  # Ernie4_5_MoeDecoderLayer: (i + 1) % interval == 0, start <= i <= end
        step = _at_least_one(cfg.get("moe_layer_interval", 1), "moe_layer_interval")
        first = _int(cfg.get("moe_layer_start_index", 0), "moe_layer_start_index")
        last = _int(cfg.get("moe_layer_end_index", n_layers - 1), "moe_layer_end_index")
        return tuple((i + 1) % step == 0 and first <= i <= last for i in range(n_layers))
    if model_type == "llama4_text":  # Llama4TextConfig: moe_layers, else every interleave_moe_layer_step-th layer
        listed = cfg.get("moe_layers")
        step = _at_least_one(cfg.get("interleave_moe_layer_step", 1), "interleave_moe_layer_step")
        chosen = set(_int_list(listed, "moe_layers")) if listed is not None else set(range(step - 1, n_layers, step))
        return tuple(i in chosen for i in range(n_layers))
    kinds = cfg.get("mlp_layer_types")  # each layer's feed-forward kind, "dense" / "sparse", as transformers 5
    if kinds is not None:  # writes it for the DeepSeek-V3 descendants (GLM-4.7-Flash, K-EXAONE, MiMo-V2-Flash, ...)
        if not isinstance(kinds, list) or len(kinds) != n_layers:
            raise InputError(f"mlp_layer_types must list one of 'dense' / 'sparse' per layer ({n_layers})")
        return tuple(k != "dense" for k in kinds)  # "sparse", and DeepSeek-V4's "moe" / "hash_moe"
    if model_type in _FIRST_DENSE:
        key, default = _FIRST_DENSE[model_type]
        first = _int(cfg.get(key, default), key)
        return tuple(i >= first for i in range(n_layers))
    # AXK2Config.__post_init__ and Dots3NoteTextConfig's make layer 0 dense unless first_k_dense_replace says
    # otherwise; dots3's moe_layer_freq may list a flag per layer
    first_dense = _int(cfg.get("first_k_dense_replace", int(model_type in ("axk2", "dots3_note_text"))) or 0,
                       "first_k_dense_replace")
    freq = _get(cfg, "moe_layer_freq", default=1)
    if isinstance(freq, list) and len(freq) == n_layers:
        return tuple(i >= first_dense and bool(freq[i]) for i in range(n_layers))
    step = _at_least_one(freq, "moe_layer_freq")
    return tuple(i >= first_dense and i % step == 0 for i in range(n_layers))


#: MoE types whose config class has no moe_intermediate_size: transformers 5.24 builds their experts of
#: intermediate_size whatever else a config carries (MixtralConfig, GptOssConfig, OlmoeConfig, FlexOlmoConfig,
#: PhimoeConfig, MiniMaxM2Config, GraniteMoe*Config, AriaTextConfig)
EXPERTS_OF_INTERMEDIATE = frozenset({"mixtral", "gpt_oss", "olmoe", "flex_olmo", "phimoe", "minimax_m2", "granitemoe",
                                     "granitemoeshared", "granitemoehybrid", "aria_text", "granitemoe_swa", "jamba"})


def _moe_fields(cfg: dict[str, Any], model_type: str, n_layers: int) -> dict[str, Any]:
    """Routed experts, their width and layers, shared experts and router extras; {} for a dense model."""
    n_experts = _get(cfg, "num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts", default=0) or 0
    if not n_experts or (model_type == "nemotron_h" and "moe" not in cfg["layer_types"]):
        return {}
    if model_type == "jamba" and n_experts == 1:  # JambaDecoderLayer: JambaMLP wherever a layer has one expert
        return {}
    topk = _int(_require(cfg, "num_experts_per_tok", "experts_per_token", "moe_k", "moe_topk"), "num_experts_per_tok")
    width_keys = ("intermediate_size",) if model_type in EXPERTS_OF_INTERMEDIATE else ("moe_intermediate_size",
                                                                                      "intermediate_size")
    moe_inter = _int(_get(cfg, *width_keys), "moe_intermediate_size")
    shared = 0
    if model_type in ("qwen2_moe", "qwen3_next", "qwen3_5_moe_text", "flint", "laguna", "kolibri1", "kolibri1_1",
                      "hunyuan_v1_moe", "step3p5"):  # Flint's ungated; Step 3.5's share_expert_dim (_step3p5_config)
        shared = _int(cfg.get("shared_expert_intermediate_size", 0) or 0, "shared_expert_intermediate_size")
    elif model_type in ("deepseek_v2", "deepseek_v3", "deepseek_v32", "glm4_moe", "glm4_moe_lite", "kimi_linear",
                        "glm_moe_dsa", "solar_open", "deepseek_v4", "hy_v4", "axk1", "axk2", "dots1",
                        "mistral_large4_text", "minicpm5_moe"):  # one shared MLP of n_shared x I
        shared = moe_inter * _int(cfg.get("n_shared_experts", int(model_type == "deepseek_v4")) or 0,
                                  "n_shared_experts")
    elif model_type in ("exaone_moe", "hy_v3", "afmoe"):  # ExaoneMoe / HYV3 / Afmoe: num_shared_experts x I
        shared = moe_inter * _int(cfg.get("num_shared_experts", 1 if model_type != "afmoe" else 2) or 0,
                                  "num_shared_experts")
    elif model_type in ("ernie4_5_moe", "aria_text"):  # AriaSharedExpertsMLP: intermediate_size x the shared count
        shared = moe_inter * _int(cfg.get("moe_num_shared_experts", 0 if model_type != "aria_text" else 2) or 0,
                                  "moe_num_shared_experts")
    elif model_type == "cohere2_moe":  # Cohere2MoeSparseMoeBlock.shared_experts: one MLP of num_shared_experts x I
        shared = moe_inter * _int(cfg.get("num_shared_experts", 0) or 0, "num_shared_experts")
    elif model_type == "llama4_text":  # Llama4TextMoe: a shared expert as wide as one routed expert
        shared = moe_inter
    elif model_type in ("granitemoehybrid", "granitemoeshared"):  # GraniteMoeHybridDecoderLayer and
        # GraniteMoeSharedDecoderLayer: shared_mlp beside the experts, no gate (GraniteMoeSharedConfig's default: none)
        default = 1024 if model_type == "granitemoehybrid" else 0
        shared = _int(cfg.get("shared_intermediate_size", default) or 0, "shared_intermediate_size")
    elif model_type == "minimax_m3_vl_text":  # MiniMaxM3VLSparseMoeBlock.shared_experts; a released config may name
        # n_shared_experts experts as wide as a routed one instead (llama.cpp's converter reads that)
        listed = cfg.get("shared_intermediate_size")
        shared = _int(listed, "shared_intermediate_size") if listed is not None else \
            moe_inter * _int(cfg.get("n_shared_experts", 1) or 0, "n_shared_experts")
    elif model_type == "dots3_note_text":  # Dots3NoteTextMoE.shared_experts: n_shared_experts x its width
        width = _get(cfg, "shared_experts_intermediate_size", "moe_shared_expert_intermediate_size", default=1536)
        shared = _int(width, "shared_experts_intermediate_size") * _int(cfg.get("n_shared_experts", 1) or 0,
                                                                        "n_shared_experts")
    elif model_type == "ergo":  # ErgoSharedExpert: one ungated MLP of shared_intermediate_size and a norm
        shared = _int(cfg.get("shared_intermediate_size", 8192) or 0, "shared_intermediate_size")
    elif model_type == "nemotron_h":  # NemotronHMoE.shared_experts: one MLP of moe_shared_expert_intermediate_size
        shared = _int(cfg.get("moe_shared_expert_intermediate_size", 0) or 0, "moe_shared_expert_intermediate_size")
    elif model_type in BAILING_TYPES:  # vLLM 0.34 bailing_moe.py `BailingMoE`: num_shared_experts MLPs as one, each
        # moe_shared_expert_intermediate_size (else moe_intermediate_size) wide; a GGUF's n_ff_shexp and count alike
        width = _get(cfg, "moe_shared_expert_intermediate_size", "shared_expert_intermediate_size", default=moe_inter)
        count = _get(cfg, "num_shared_experts", "n_shared_experts", default=0) or 0
        shared = _int(width, "moe_shared_expert_intermediate_size") * _int(count, "num_shared_experts")
    elif model_type == "longcat_flash":  # the first sublayer's MLP beside the experts (`_longcat_flash_config`)
        shared = _int(cfg["intermediate_size"], "ffn_hidden_size")
    extra = {"zero_experts": _int(cfg.get("zero_expert_num") or 0, "zero_expert_num")} \
        if model_type == "longcat_flash" else {}
    return dict(**extra, num_experts=_int(n_experts, "num_experts"), experts_per_token=topk, moe_intermediate_size=moe_inter,
                shared_expert_intermediate_size=shared,
                shared_expert_gate=model_type in ("qwen2_moe", "qwen3_next", "qwen3_5_moe_text") and shared > 0,
                # DeepSeek-V3's e_score_correction_bias (Afmoe's expert_bias: the same vector of one per expert)
                router_score_bias=model_type in ("deepseek_v3", "deepseek_v32", "glm4_moe", "glm4_moe_lite", "kimi_linear",
                                                 "glm_moe_dsa", "ernie4_5_moe", "nemotron_h", "solar_open",
                                                 "exaone_moe", "hy_v3", "afmoe", "mimo_v2_flash",
                                                 "deepseek_v4", "minimax_m3_vl_text", "hy_v4", "laguna", "axk1", "axk2",
                                                 "kolibri1", "kolibri1_1", "beam", "minimax_m2", "dots1",
                                                 "muse_spark_text",
                                                 "dots3_note_text", "minicpm5_moe", "ergo", "longcat_flash")
                or (model_type == "lfm2_moe" and bool(cfg.get("use_expert_bias", True)))
                or (model_type in BAILING_TYPES and bool(cfg.get("moe_router_enable_expert_bias", False))),
                moe_layers=_moe_layers(cfg, model_type, n_layers))


def _gemma4_full_layer_geometry(cfg: dict[str, Any], full_layers: set[int], head_dim: int,
                                kv_heads: int) -> tuple[int, int]:
    """(head width, KV heads) of Gemma 4's full-attention layers. Published configs name them `global_head_dim`
    (default 512) and `num_global_key_value_heads` (used when `attention_k_eq_v`); transformers 5.24 writes them
    as `per_layer_config` {layer: {head_dim, num_key_value_heads}} (Gemma4TextConfig.__post_init__)."""
    per_layer = cfg.get("per_layer_config")
    if per_layer is None:
        width = _int(cfg.get("global_head_dim", 512), "global_head_dim")
        shared = cfg.get("num_global_key_value_heads")
        heads = _int(shared, "num_global_key_value_heads") if shared and cfg.get("attention_k_eq_v", True) else kv_heads
        return width, heads
    if not isinstance(per_layer, dict) or not all(isinstance(o, dict) for o in per_layer.values()):
        raise InputError(f"per_layer_config must map layers to settings, got {per_layer!r:.60}")
    layers = {_int(int(str(k)), "per_layer_config layer") for k in per_layer} if all(
        str(k).isdigit() for k in per_layer) else None
    settings = {(_int(o.get("head_dim", head_dim), "head_dim"), _int(o.get("num_key_value_heads", kv_heads),
                 "num_key_value_heads")) for o in per_layer.values()}
    if layers != full_layers or len(settings) != 1:
        raise InputError("per_layer_config: memviz models one setting shared by every full-attention layer")
    return settings.pop()


def _gemma4_fields(cfg: dict[str, Any], kinds: tuple[str, ...], head_dim: int, kv_heads: int) -> dict[str, Any]:
    """Gemma 4's text decoder (transformers 5.24 modeling_gemma4.py): Gemma4TextAttention, Gemma4TextMLP,
    Gemma4TextDecoderLayer, Gemma4TextModel's per-layer embeddings, Gemma4TextRouter / Gemma4TextExperts."""
    n_layers = len(kinds)
    width, heads = _gemma4_full_layer_geometry(cfg, {i for i, k in enumerate(kinds) if k == FULL}, head_dim, kv_heads)
    per_layer = _int(cfg.get("hidden_size_per_layer_input", 256) or 0, "hidden_size_per_layer_input")
    moe = bool(cfg.get("enable_moe_block"))
    out: dict[str, Any] = dict(
        full_head_dim=width if width != head_dim else 0, full_num_kv_heads=heads if heads != kv_heads else 0,
        full_k_eq_v=bool(cfg.get("attention_k_eq_v", False)),
        kv_shared_layers=_int(cfg.get("num_kv_shared_layers", 0) or 0, "num_kv_shared_layers"),
        per_layer_input_size=per_layer,
        per_layer_vocab_size=_int(cfg.get("vocab_size_per_layer_input", 262_144), "vocab_size_per_layer_input")
        if per_layer else 0,
        double_wide_shared_mlp=bool(cfg.get("use_double_wide_mlp", False)), layer_scalars=True,
        # four norms, the per-layer input's, the MoE block's three more (its router's norm has no weight)
        norms_per_layer=4 + (1 if per_layer else 0) + (3 if moe else 0))
    if moe:  # the layer's dense MLP runs beside the experts, always: memviz's shared expert
        out.update(num_experts=_int(_require(cfg, "num_experts"), "num_experts"),
                   experts_per_token=_int(_require(cfg, "top_k_experts"), "top_k_experts"),
                   moe_intermediate_size=_int(_require(cfg, "moe_intermediate_size"), "moe_intermediate_size"),
                   shared_expert_intermediate_size=_int(cfg.get("intermediate_size", 2112), "intermediate_size"),
                   router_scales=True, moe_layers=(True,) * n_layers)
    return out


def _gemma3n_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """Gemma 3n's text decoder (transformers 5.24 modeling_gemma3n.py, defaults of Gemma3nTextConfig):
    Gemma3nTextDecoderLayer's input, post-attention, pre- and post-feed-forward and per-layer-input norms, AltUp's
    router norm and Laurel's post norm (7 a layer); Gemma3nTextAttention's q / k norms (v_norm holds no weight),
    the last num_kv_shared_layers projecting no K/V; Gemma3nTextModel's per-layer embeddings; `intermediate_size` one
    width or one per layer."""
    n_layers = _int(_require(cfg, "num_hidden_layers"), "num_hidden_layers")
    given = cfg.get("intermediate_size", 16_384)
    widths = (_int_list(given, "intermediate_size") if isinstance(given, list)
              else [_int(given, "intermediate_size")] * n_layers)
    if len(widths) != n_layers or min(widths) <= 0:
        raise InputError(f"intermediate_size must be one width or {n_layers} positive ones, got {given!r:.60}")
    per_layer = _int(cfg.get("hidden_size_per_layer_input", 256), "hidden_size_per_layer_input")
    return dict(
        intermediate_size=max(widths), layer_intermediate=tuple(widths) if len(set(widths)) > 1 else (),
        kv_shared_layers=_int(cfg.get("num_kv_shared_layers", 15) or 0, "num_kv_shared_layers"),
        per_layer_input_size=per_layer,
        per_layer_vocab_size=_int(cfg.get("vocab_size_per_layer_input", 262_144), "vocab_size_per_layer_input")
        if per_layer else 0,
        altup_inputs=_int(cfg.get("altup_num_inputs", 4), "altup_num_inputs"),
        laurel_rank=_int(cfg.get("laurel_rank", 64), "laurel_rank"), norms_per_layer=7)


def _kimi_linear_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Kimi Linear's config as KimiLinearConfig.__post_init__ (transformers 5.25) reads it: the delta attention's heads,
    width and convolution from linear_attn_config (num_heads, head_dim, short_conv_kernel_size) or its own fields;
    the layer kinds from layer_types, else linear_attn_config's 1-indexed full_attn_layers where it also lists
    kda_layers (a layer in neither is a delta layer), else every fourth layer full from the fifth."""
    linear = cfg.get("linear_attn_config") or {}
    if not isinstance(linear, dict):
        raise InputError(f"linear_attn_config must be a mapping, got {linear!r:.60}")
    out = {**cfg, "linear_num_heads": _at_least_one(linear.get("num_heads", cfg.get("linear_num_heads", 32)),
                                                    "linear_attn_config.num_heads"),
           "linear_head_dim": _at_least_one(linear.get("head_dim", cfg.get("linear_head_dim", 128)),
                                            "linear_attn_config.head_dim"),
           "linear_conv_kernel_dim": _at_least_one(linear.get("short_conv_kernel_size",
                                                              cfg.get("linear_conv_kernel_dim", 4)),
                                                   "linear_attn_config.short_conv_kernel_size")}
    n = _layer_count(cfg, "num_hidden_layers")
    if cfg.get("layer_types") is None:
        listed = "full_attn_layers" in linear and "kda_layers" in linear  # both, or the default pattern
        full = set(_int_list(linear["full_attn_layers"], "full_attn_layers")) if listed \
            else {i + 1 for i in range(n) if i and i % 4 == 0}
        if not full <= set(range(1, n + 1)):
            raise InputError(f"full_attn_layers must be layer numbers from 1 to {n}, got {sorted(full)}")
        out["layer_types"] = ["full_attention" if i + 1 in full else "linear_attention" for i in range(n)]
    return out


def _gated_deltanet_fields(cfg: dict[str, Any], model_type: str, hidden: int, heads: int) -> dict[str, Any]:
    """Qwen3.5 / Qwen3-Next: the gated delta-net's heads, widths and convolution (Qwen3_5GatedDeltaNet), the
    attention layers' output gate (Qwen3_5Attention's q_proj: heads x head_dim x 2) and q / k norms. OLMo-Hybrid
    (OlmoHybridGatedDeltaNet, transformers 5.24) splits the same projections, its key and value heads default to the
    attention heads, of 3/4 of hidden / heads and twice that (OlmoHybridConfig.__post_init__), and its attention is
    OLMo 2's: no gate, q/k norms over every head."""
    if model_type == "olmo_hybrid":
        k_heads = _int(cfg.get("linear_num_key_heads") or heads, "linear_num_key_heads")
        k_dim = _int(cfg.get("linear_key_head_dim") or int(0.75 * hidden / k_heads), "linear_key_head_dim")
        return dict(linear_k_heads=k_heads, linear_k_head_dim=k_dim,
                    linear_v_heads=_int(cfg.get("linear_num_value_heads") or heads, "linear_num_value_heads"),
                    linear_v_head_dim=_int(cfg.get("linear_value_head_dim") or 2 * k_dim, "linear_value_head_dim"),
                    linear_conv_kernel=_int(cfg.get("linear_conv_kernel_dim", 4), "linear_conv_kernel_dim"),
                    qk_norm=True, qk_norm_full=True)
    return dict(linear_k_heads=_int(cfg.get("linear_num_key_heads", 16), "linear_num_key_heads"),
                linear_v_heads=_int(cfg.get("linear_num_value_heads", 32), "linear_num_value_heads"),
                linear_k_head_dim=_int(cfg.get("linear_key_head_dim", 128), "linear_key_head_dim"),
                linear_v_head_dim=_int(cfg.get("linear_value_head_dim", 128), "linear_value_head_dim"),
                linear_conv_kernel=_int(cfg.get("linear_conv_kernel_dim", 4), "linear_conv_kernel_dim"),
                linear_state_dtype=str(cfg.get("mamba_ssm_dtype") or ""), attn_output_gate=True, qk_norm=True)


def _mamba2_fields(cfg: dict[str, Any], hidden: int, width: int | None = None) -> dict[str, Any]:
    """Granite-4.0-H's, Bamba's and Falcon-H1's Mamba2 layers (GraniteMoeHybridMambaLayer, BambaMixer,
    FalconH1Mixer, transformers 5.24; their configs name the fields alike): n_groups groups of B and C of d_state,
    mamba_n_heads heads of mamba_d_head ("auto": the mixer's width over the heads), a convolution of mamba_d_conv
    taps. The width is mamba_expand x hidden, unless the config names its own (`width`: Falcon-H1's mamba_d_ssm)."""
    heads = _at_least_one(cfg.get("mamba_n_heads", 128), "mamba_n_heads")
    head_dim = cfg.get("mamba_d_head", "auto")
    inner = width or _int(cfg.get("mamba_expand", 2), "mamba_expand") * hidden
    head_dim = inner // heads if head_dim in (None, "auto") else _int(head_dim, "mamba_d_head")
    if head_dim * heads != inner:
        what = (f"the mixer's width ({inner})" if width
                else f"mamba_expand x hidden_size ({inner}), as GraniteMoeHybridConfig requires")
        raise InputError(f"mamba_n_heads x mamba_d_head ({heads} x {head_dim}) must equal {what}")
    return dict(linear_mixer=MAMBA2, linear_k_heads=_at_least_one(cfg.get("mamba_n_groups", 1), "mamba_n_groups"),
                linear_k_head_dim=_at_least_one(cfg.get("mamba_d_state", 256), "mamba_d_state"),
                linear_v_heads=heads, linear_v_head_dim=head_dim,
                linear_conv_kernel=_at_least_one(cfg.get("mamba_d_conv", 4), "mamba_d_conv"),
                linear_chunk=_at_least_one(cfg.get("mamba_chunk_size", 256), "mamba_chunk_size"),
                linear_conv_bias=bool(cfg.get("mamba_conv_bias", True)),
                linear_proj_bias=bool(cfg.get("mamba_proj_bias", False)))


def _falcon_h1_fields(cfg: dict[str, Any], hidden: int) -> dict[str, Any]:
    """Falcon-H1's layers (transformers 5.24 modeling_falcon_h1.py `FalconH1DecoderLayer`): attention and a Mamba2
    mixer side by side in every layer, then a gated MLP. The mixer (FalconH1Mixer, `_mamba2_fields`) is mamba_d_ssm
    wide (else mamba_expand x hidden), its out_proj biased with projectors_bias, its gated norm only with
    mamba_rms_norm."""
    width = _at_least_one(cfg["mamba_d_ssm"], "mamba_d_ssm") if cfg.get("mamba_d_ssm") else None
    return dict(_mamba2_fields(cfg, hidden, width), parallel_mamba=True,
                linear_out_bias=bool(cfg.get("projectors_bias", False)),
                linear_norm=bool(cfg.get("mamba_rms_norm", False)), mlp_bias=bool(cfg.get("mlp_bias", False)))


def _laguna_fields(cfg: dict[str, Any], n_layers: int, n_heads: int, head_dim: int) -> dict[str, Any]:
    """Laguna (transformers 5.24 modeling_laguna.py `LagunaAttention`): q/k norms, its own query heads per layer
    (`num_attention_heads_per_layer`, K/V heads shared), the softplus output gate's projection (`gating`: True or
    "per-head" one value a head; anything else, False included, one a head channel: `gate_per_head`)."""
    per_layer = cfg.get("num_attention_heads_per_layer")
    heads = tuple(_int_list(per_layer, "num_attention_heads_per_layer")) if per_layer is not None else ()
    if heads and len(heads) != n_layers:
        raise InputError(f"num_attention_heads_per_layer must list {n_layers} head counts")
    gating = cfg.get("gating", True)
    if gating not in (True, False, "per-head", "per-element"):
        raise InputError(f"gating must be true, false, 'per-head' or 'per-element', got {gating!r}")
    gate = 1 if gating is True or gating == "per-head" else head_dim
    out: dict[str, Any] = dict(qk_norm=True, head_gate=gate)
    if heads and set(heads) != {n_heads}:
        out.update(layer_heads=heads, num_heads=max(heads))
    return out


def _minimax_m3_layers(cfg: dict[str, Any]) -> dict[str, Any]:
    """MiniMax-M3's per-layer kinds as MiniMaxM3VLTextConfig.__post_init__ (transformers 5.24) reads a released
    config: `layer_types`, else `sparse_attention_config.sparse_attention_freq` (1: a block-sparse layer); the
    indexer's fields under their legacy names there; `mlp_layer_types`, else `moe_layer_freq` (1: experts), else
    experts in every layer."""
    sparse = cfg.get("sparse_attention_config") or {}
    if not isinstance(sparse, dict):
        raise InputError("sparse_attention_config must be an object")
    out = dict(cfg)
    for flat, legacy in (("index_n_heads", "sparse_num_index_heads"), ("index_head_dim", "sparse_index_dim"),
                         ("index_block_size", "sparse_block_size")):
        if legacy in sparse:
            out[flat] = sparse[legacy]
    n = _int(_require(cfg, "num_hidden_layers"), "num_hidden_layers")
    if out.get("layer_types") is None:
        freq = sparse.get("sparse_attention_freq")
        out["layer_types"] = ["minimax_m3_sparse" if f else "full_attention" for f in _int_list(freq, "sparse_attention_freq")] \
            if freq is not None else ["full_attention"] * n
    if out.get("mlp_layer_types") is None:
        freq = cfg.get("moe_layer_freq")
        out["mlp_layer_types"] = ["sparse" if f else "dense" for f in _int_list(freq, "moe_layer_freq")] \
            if freq is not None else ["sparse"] * n
    return out


def _minimax_m3_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """MiniMax-M3's decoder (transformers 5.24 modeling_minimax_m3_vl.py): per-head q/k norms (MiniMaxM3VLAttention),
    a dense MLP of dense_intermediate_size in the "dense" layers and, in the others, experts of intermediate_size
    with a shared expert of shared_intermediate_size and a score-correction bias (MiniMaxM3VLSparseMoeBlock,
    MiniMaxM3VLTopKRouter); the block-sparse layers' indexer (MiniMaxM3VLIndexer)."""
    sparse = tuple(k == "minimax_m3_sparse" for k in cfg["layer_types"])
    out: dict[str, Any] = dict(
        qk_norm=True, intermediate_size=_int(cfg.get("dense_intermediate_size", 12288), "dense_intermediate_size"))
    if any(sparse):
        out.update(indexer_heads=_int(_require(cfg, "index_n_heads"), "index_n_heads"),
                   indexer_head_dim=_int(_require(cfg, "index_head_dim"), "index_head_dim"),
                   indexer_layers=sparse, block_indexer=True)
    return out


def _mistral_large4_fields(cfg: dict[str, Any], n_layers: int) -> dict[str, Any]:
    """Mistral Large 4's decoder (transformers 5.24 modeling_mistral_large4.py, MistralLarge4TextConfig): GLM-5's
    DSA attention without a query LoRA; every no_rope_layer_interval-th layer (default 4th) without RoPE, its latent
    and kv_a_proj without the rope part and its kv_b_proj's nope width that much wider (`no_rope_layers`, 1: RoPE);
    a learned scale and bias per head on the attention's and the indexer's softmax (MistralLarge4TextSoftmaxScaling);
    DeepSeek-V3's experts with n_shared_experts shared. A layer whose `kv_source_layers` entry names an earlier layer
    reads that layer's latent: it has no kv_a_proj_with_mqa or kv_a_layernorm and caches no latent
    (MistralLarge4TextAttention.is_kv_shared_layer; vLLM 0.34 models/mistral `MistralLayerSpec.shares_kv`), only its
    indexer's keys where it runs its own indexer ("reuse_but_indexer")."""
    listed = cfg.get("no_rope_layers")
    rope = _int_list(listed, "no_rope_layers") if listed is not None else [
        int((i + 1) % _at_least_one(cfg.get("no_rope_layer_interval", 4), "no_rope_layer_interval") != 0)
        for i in range(n_layers)]
    if len(rope) != n_layers:
        raise InputError(f"no_rope_layers has {len(rope)} entries for {n_layers} layers")
    out: dict[str, Any] = dict(nope_layers=tuple(not r for r in rope), softmax_scaling=True)
    shared = cfg.get("kv_source_layers")
    if shared is None or shared == list(range(n_layers)):
        return out
    sources = _int_list(shared, "kv_source_layers")
    # transformers keys the shared latents by "rope" / "nope"; vLLM's config reader asserts the flags agree
    mixed = [i for i, s in enumerate(sources) if 0 <= s < n_layers and rope[s] != rope[i]]
    if mixed:
        raise InputError(f"kv_source_layers: layer {mixed[0]} reads the latent of layer {sources[mixed[0]]}, which "
                         "differs from it in using RoPE (no_rope_layers)")
    return out | dict(kv_sources=tuple(sources))


def _axk2_fields(cfg: dict[str, Any], n_layers: int) -> dict[str, Any]:
    """A.X-K2's indexer in every layer, its query-made output gate and gated norms (AXK2Config, transformers 5.24:
    index_n_heads 16, index_head_dim 128, gated_norm_rank 16 by default; `validate_architecture` requires a query
    LoRA)."""
    if not cfg.get("q_lora_rank"):
        raise InputError("A.X-K2 needs a positive q_lora_rank: its indexer and output gate read the query latent")
    indexer = _indexer_fields({"index_n_heads": 16, "index_head_dim": 128, **cfg}, n_layers, "axk2")
    return dict(indexer, mla_query_gate=True, gated_norm_rank=_int(cfg.get("gated_norm_rank", 16), "gated_norm_rank"))


#: Dots3NoteTextConfig.__post_init__'s sliding-layer defaults (its `swa_` fields), the rope width head_dim - nope
_DOTS3_SLIDING = {"num_attention_heads": 64, "num_key_value_heads": 64, "q_lora_rank": 1024, "kv_lora_rank": 1024,
                  "head_dim": 256, "qk_nope_head_dim": 192, "v_head_dim": 128}


def _dots3_layer_settings(cfg: dict[str, Any], kinds: tuple[str, ...]) -> dict[int, dict[str, Any]]:
    """Each sliding layer's own MLA settings: `per_layer_config` (transformers' layout: a layer's entry over the
    top-level fields), else the release's `swa_` fields (over Dots3NoteTextConfig's defaults)."""
    listed = cfg.get("per_layer_config")
    if listed is None:
        swa = {k: cfg.get(f"swa_{k}", v) for k, v in _DOTS3_SLIDING.items()}
        swa["qk_rope_head_dim"] = cfg.get("swa_qk_rope_head_dim", _int(swa["head_dim"], "swa_head_dim")
                                          - _int(swa["qk_nope_head_dim"], "swa_qk_nope_head_dim"))
        return {i: swa for i, kind in enumerate(kinds) if kind == SLIDING}
    if not isinstance(listed, dict) or not all(isinstance(o, dict) for o in listed.values()) or not all(
            str(k).isdigit() and int(str(k)) < len(kinds) for k in listed):
        raise InputError(f"per_layer_config must map layer indices to settings, got {listed!r:.60}")
    return {int(str(k)): o for k, o in listed.items()}


def _dots3_fields(cfg: dict[str, Any], kw: dict[str, Any]) -> dict[str, Any]:
    """dots3's text model (transformers 5.24 modeling_dots3_note.py Dots3NoteTextAttention / Dots3NoteTextIndexer;
    vLLM 0.33 models/dots3_note/nvidia/model.py; llama.cpp 0c1e570 src/models/dots3note.cpp): MLA in every layer, the
    sliding layers with heads, a latent and a nope width of their own; a per-head sigmoid gate (g_proj) and a norm
    on the rotary key in every layer; a DSA indexer in the full layers ("indexed_attention"; "full_attention" with
    use_dsa, the release's name for them, unless use_dsa is false). One query latent, value and rope width for all
    layers (those of each kind alike in every release); a layer differing in them is refused."""
    if not kw.get("kv_lora_rank"):
        raise InputError("dots3 needs its MLA fields (kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim)")
    kinds, n = kw["layer_types"], kw["num_layers"]
    own = _dots3_layer_settings(cfg, kinds)
    top = {"num_attention_heads": kw["num_heads"], "kv_lora_rank": kw["kv_lora_rank"],
           "qk_nope_head_dim": kw["qk_nope_head_dim"], "q_lora_rank": kw["q_lora_rank"],
           "v_head_dim": kw["v_head_dim"], "qk_rope_head_dim": kw["qk_rope_head_dim"]}
    layers = [{k: _int(own.get(i, {}).get(k, v), k) for k, v in top.items()} for i in range(n)]
    for key in ("q_lora_rank", "v_head_dim", "qk_rope_head_dim"):
        if len({layer[key] for layer in layers}) > 1:
            raise InputError(f"dots3: layers with a {key} of their own are not modelled")
    heads = tuple(layer["num_attention_heads"] for layer in layers)
    dsa = cfg.get("use_dsa", None if "per_layer_config" in cfg else True)  # True: "full_attention" is DSA
    named = [str(t) for t in _explicit_layer_types(cfg)] or ["indexed_attention"] * n
    indexed = tuple(kind == FULL and dsa is not False and (t == "indexed_attention" or dsa is True)
                    for kind, t in zip(kinds, named, strict=True))
    gate = str(cfg.get("attention_gate_type", "headwise"))  # vLLM: "headwise" a value per head, else per channel
    out = dict(num_heads=max(heads), num_kv_heads=max(heads), layer_heads=heads if len(set(heads)) > 1 else (),
               layer_kv_lora_ranks=tuple(layer["kv_lora_rank"] for layer in layers),
               layer_nope_dims=tuple(layer["qk_nope_head_dim"] for layer in layers),
               rope_key_norm=True, head_gate=1 if gate == "headwise" else kw["v_head_dim"])
    if any(indexed):
        out.update(indexer_heads=_int(cfg.get("index_n_heads", 64), "index_n_heads"),
                   indexer_head_dim=_int(cfg.get("index_head_dim", 128), "index_head_dim"), indexer_layers=indexed)
    return out


def _indexer_fields(cfg: dict[str, Any], n_layers: int, model_type: str) -> dict[str, Any]:
    """DeepSeek sparse attention's lightning indexer (DeepseekV32Indexer, GlmMoeDsaIndexer, HYV4Indexer, transformers
    5.24): in every layer, or in the layers `indexer_types` marks "full" (GLM-5's and HY-V4's "shared" layers reuse
    the previous one's selection and hold no indexer); HYV4Config's default: layer 0 and every fourth from layer 1.
    `index_topk`: 2048 in each of their configs' defaults."""
    kinds = cfg.get("indexer_types")
    if kinds is None and model_type == "hy_v4":
        kinds = ["full" if i == 0 or (i - 1) % 4 == 0 else "shared" for i in range(n_layers)]
    if kinds is None and model_type in ("glm_moe_dsa", "mistral_large4_text"):
        kinds = _indexer_schedule(cfg, n_layers)
    if kinds is not None and (not isinstance(kinds, list) or len(kinds) != n_layers):
        raise InputError(f"indexer_types must list one of 'full' / 'shared' per layer ({n_layers})")
    return dict(indexer_heads=_int(_require(cfg, "index_n_heads"), "index_n_heads"),
                indexer_head_dim=_int(cfg["index_head_dim"], "index_head_dim"),
                indexer_topk=_int(cfg.get("index_topk", 2048), "index_topk"),
                indexer_layers=tuple(k == "full" for k in kinds) if kinds is not None else (True,) * n_layers)


def _indexer_schedule(cfg: dict[str, Any], n_layers: int) -> list[str]:
    """GLM-5's and Mistral Large 4's indexer kinds from a config that lists none (GlmMoeDsaConfig /
    MistralLarge4TextConfig.__post_init__, transformers 5.25; vLLM 0.34 model_executor/models/utils.py
    `compute_skip_topk_layers`): `index_topk_pattern` ("F" full, "S" shared), else a full layer wherever
    max(i - index_skip_topk_offset + 1, 0) is a multiple of index_topk_freq (defaults 2 and 1: every layer)."""
    pattern = cfg.get("index_topk_pattern")
    if pattern is not None:
        if not isinstance(pattern, (str, list)) or set(pattern) - {"F", "S"}:
            raise InputError(f"index_topk_pattern must be made of F and S, got {pattern!r:.60}")
        return [{"F": "full", "S": "shared"}[c] for c in pattern]
    freq = max(_int(cfg.get("index_topk_freq", 1), "index_topk_freq"), 1)
    offset = _int(cfg.get("index_skip_topk_offset", 2), "index_skip_topk_offset")
    return ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n_layers)]


#: DeepSeek-V4's attention kinds (DEEPSEEK_V4_LAYER_TYPES) and the legacy per-layer ratios that name them
#: (`_COMPRESS_RATIO_TO_LAYER_TYPE`; vLLM 0.33 `models/deepseek_v4` reads a ratio of 1 as window-only too)
_V4_CSA, _V4_HCA = "compressed_sparse_attention", "heavily_compressed_attention"
_V4_BY_RATIO = {0: "sliding_attention", 1: "sliding_attention", 4: _V4_CSA, 128: _V4_HCA}


def _deepseek_v4_kinds(cfg: dict[str, Any], n_layers: int) -> list[str]:
    """Each layer's attention kind as DeepseekV4Config.__post_init__ (transformers 5.24) decides it: `layer_types`,
    else the released configs' `compress_ratios` (one entry more, for the MTP layer, dropped), else two heavily
    compressed layers and then compressed sparse / heavily compressed in turn."""
    kinds = cfg.get("layer_types")
    if kinds is None and cfg.get("compress_ratios") is not None:
        ratios = cfg["compress_ratios"]
        if not isinstance(ratios, list) or len(ratios) < n_layers or any(r not in _V4_BY_RATIO for r in ratios):
            raise InputError(f"compress_ratios must list 0, 4 or 128 for each of the {n_layers} layers")
        kinds = [_V4_BY_RATIO[r] for r in ratios]
    if kinds is None:
        kinds = [_V4_HCA] * min(n_layers, 2) + [_V4_CSA if i % 2 else _V4_HCA for i in range(max(n_layers - 2, 0))]
    kinds = list(kinds)[:n_layers] if isinstance(kinds, list) else []
    if len(kinds) != n_layers or any(k not in set(_V4_BY_RATIO.values()) for k in kinds):
        raise InputError(f"layer_types must list {n_layers} DeepSeek-V4 attention kinds ('sliding_attention', "
                         f"'{_V4_CSA}', '{_V4_HCA}')")
    return kinds


def _deepseek_v4_fields(cfg: dict[str, Any], n_layers: int) -> dict[str, Any]:
    """DeepSeek-V4 as transformers 5.24 builds it (DeepseekV4Attention, DeepseekV4CSACompressor /
    DeepseekV4HCACompressor, DeepseekV4Indexer, DeepseekV4HyperConnection, DeepseekV4SparseMoeBlock): one K=V head,
    the compress rate of each layer's kind (`compress_rates`, legacy `compress_rate_csa` / `_hca`; 4 and 128), the
    indexer in the compressed sparse layers, the first `num_hash_layers` (default 3) or `mlp_layer_types`' "hash_moe"
    layers routed by hash, every layer's feed-forward routed experts beside one shared MLP of moe_intermediate_size
    (vLLM 0.33 and llama.cpp take n_shared_experts of them: 1 in every released config)."""
    kinds = _deepseek_v4_kinds(cfg, n_layers)
    rates = cfg.get("compress_rates") if isinstance(cfg.get("compress_rates"), dict) else {}
    rate = {_V4_CSA: _int(rates.get(_V4_CSA, cfg.get("compress_rate_csa", 4)), "compress rate (CSA)"),
            _V4_HCA: _int(rates.get(_V4_HCA, cfg.get("compress_rate_hca", 128)), "compress rate (HCA)")}
    if min(rate.values()) < 1:
        raise InputError("compress rates must be at least 1")
    mlp = cfg.get("mlp_layer_types")
    if mlp is None:
        n_hash = _int(cfg.get("num_hash_layers", 3), "num_hash_layers")
        mlp = ["hash_moe"] * min(n_layers, n_hash) + ["moe"] * max(0, n_layers - n_hash)
    if not isinstance(mlp, list) or len(mlp) < n_layers:
        raise InputError(f"mlp_layer_types must list 'hash_moe' / 'moe' for each of the {n_layers} layers")
    rope = cfg.get("qk_rope_head_dim")
    head_dim = _int(cfg.get("head_dim", 512), "head_dim")
    if rope is None:
        rope = round(head_dim * _positive(cfg.get("partial_rotary_factor") or 64 / 512, "partial_rotary_factor"))
    return dict(num_kv_heads=1, head_dim=head_dim, v_head_dim=head_dim, attention_sinks=True,
                q_lora_rank=_int(cfg.get("q_lora_rank", 1024), "q_lora_rank"), qk_rope_head_dim=_int(rope, "rope"),
                compress_ratios=tuple(rate.get(k, 0) for k in kinds),
                indexer_heads=_int(cfg.get("index_n_heads", 64), "index_n_heads"),
                indexer_head_dim=_int(cfg.get("index_head_dim", 128), "index_head_dim"),
                indexer_layers=tuple(k == _V4_CSA for k in kinds),
                hyper_streams=_int(cfg.get("hc_mult", 4), "hc_mult"),
                out_groups=_at_least_one(cfg.get("o_groups", 8), "o_groups"),
                out_lora_rank=_int(cfg.get("o_lora_rank", 1024), "o_lora_rank"),
                hash_layers=tuple(k == "hash_moe" for k in mlp[:n_layers]),
                intermediate_size=_int(_require(cfg, "moe_intermediate_size"), "moe_intermediate_size"),
                sliding_window=_int(cfg.get("sliding_window", 128), "sliding_window"))


def _explicit_layer_types(cfg: dict[str, Any]) -> list[Any]:
    """The config's `layer_types` list (empty when absent); anything but a list is an InputError."""
    explicit = cfg.get("layer_types")
    if explicit is None:
        return []
    if not isinstance(explicit, (list, tuple)):
        raise InputError(f"layer_types must be a list of layer kinds, got {explicit!r}")
    return list(explicit)


def _layer_types(cfg: dict[str, Any], model_type: str, n_layers: int, window: int | None) -> tuple[str, ...]:
    """Per-layer attention kind.

    Sources: an explicit `layer_types` list (transformers >= 4.53 writes it for gemma2/3,
    gpt_oss, qwen2...); Gemma-2 and gpt-oss alternate sliding/full starting with
    sliding (`Gemma2Config`, `GptOssConfig`); Gemma-3 makes every `sliding_window_pattern`-th layer full
    (`Gemma3TextConfig`, default 6), Cohere2, OLMo-3 and EXAONE-4 every 4th (or their `sliding_window_pattern`,
    EXAONE's as a string like "LLLG"); Mistral/Mixtral/Phi-3/Starcoder2 apply `sliding_window`
    to every layer when it is set; Qwen2-family configs use it only when
    `use_sliding_window` is true, for layers >= `max_window_layers`.
    """
    explicit = _explicit_layer_types(cfg)
    if explicit:
        if len(explicit) != n_layers:
            raise InputError(f"layer_types has {len(explicit)} entries for {n_layers} layers")
        # chunked attention (Llama 4) caches like a sliding window: "only the mask differs" (cache_utils.py)
        kinds = [SLIDING if "sliding" in str(t) or "chunked" in str(t)
                 else LINEAR if "linear" in str(t) or str(t) == "mamba" else NO_MIXER if str(t) in ("mlp", "moe")
                 else FULL for t in explicit]
        if model_type == "gemma4_text":  # Gemma4TextConfig.__post_init__ forces the last layer to full attention
            kinds[-1] = FULL
        return tuple(kinds)
    if model_type == "mllama_text_model":  # MllamaTextModel: a cross-attention layer at each cross_attention_layers
        listed = cfg.get("cross_attention_layers", MLLAMA_CROSS_LAYERS)  # index, self-attention elsewhere
        cross = set(_int_list(listed, "cross_attention_layers"))
        if not cross <= set(range(n_layers)):
            raise InputError(f"cross_attention_layers must be layer indices below {n_layers}, got {sorted(cross)}")
        return tuple(CROSS if i in cross else FULL for i in range(n_layers))
    if model_type == "olmo_hybrid":  # OlmoHybridConfig.__post_init__: every fourth layer full, the last at least
        kinds = [FULL if i % 4 == 3 else LINEAR for i in range(n_layers)]
        return tuple(kinds if FULL in kinds else kinds[:-1] + [FULL])
    if model_type in GATED_DELTANET_TYPES:  # Qwen3_5TextConfig / Qwen3NextConfig: every full_attention_interval-th
        step = _at_least_one(cfg.get("full_attention_interval", 4), "full_attention_interval")  # layer is full
        return tuple(FULL if (i + 1) % step == 0 else LINEAR for i in range(n_layers))
    if not window:
        return (FULL,) * n_layers
    if model_type == "gemma2":
        return tuple(SLIDING if i % 2 == 0 else FULL for i in range(n_layers))
    if model_type == "gemma3_text":
        pattern = _at_least_one(cfg.get("sliding_window_pattern", 6), "sliding_window_pattern")
        return tuple(FULL if (i + 1) % pattern == 0 else SLIDING for i in range(n_layers))
    if model_type == "gemma3n_text":  # Gemma3nTextConfig.__post_init__: every 5th layer full
        return tuple(FULL if (i + 1) % 5 == 0 else SLIDING for i in range(n_layers))
    if model_type == "gemma4_text":  # Gemma4TextConfig: every 6th layer full, and the last one whatever the list says
        return tuple(FULL if (i + 1) % 6 == 0 or i == n_layers - 1 else SLIDING for i in range(n_layers))
    if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        if not cfg.get("use_sliding_window"):
            return (FULL,) * n_layers
        start = _int(cfg.get("max_window_layers", n_layers), "max_window_layers")
        return tuple(SLIDING if i >= start else FULL for i in range(n_layers))
    if model_type == "llama4_text":  # Llama4TextConfig: chunked where RoPE is used (no_rope_layers 1), default 3 of 4
        interval = _at_least_one(cfg.get("no_rope_layer_interval", 4), "no_rope_layer_interval")
        rope = _int_list(cfg.get("no_rope_layers"), "no_rope_layers") or [int((i + 1) % interval != 0)
                                                                           for i in range(n_layers)]
        if len(rope) != n_layers:
            raise InputError(f"no_rope_layers has {len(rope)} entries for {n_layers} layers")
        return tuple(SLIDING if r else FULL for r in rope)
    if model_type == "muse_spark_text":  # MuseSparkTextConfig: every 4th layer full, counted back from the last
        return tuple(FULL if (n_layers - 1 - i) % 4 == 0 else SLIDING for i in range(n_layers))
    if model_type == "kolibri1_1":  # Kolibri1_1Config: every fifth layer indexed (full, sparse), the others sliding
        return tuple(FULL if (i + 1) % 5 == 0 else SLIDING for i in range(n_layers))
    if model_type == "ergo":  # ErgoConfig: every global_attention_every_n_layers-th layer full (and without RoPE)
        step = _at_least_one(cfg.get("global_attention_every_n_layers", 4), "global_attention_every_n_layers")
        return tuple(FULL if (i + 1) % step == 0 else SLIDING for i in range(n_layers))
    if model_type in ("granite_swa", "granitemoe_swa"):  # GraniteSWAConfig / GraniteMoeSWAConfig: every 4th from 0 full
        return tuple(FULL if i % 4 == 0 else SLIDING for i in range(n_layers))
    if model_type == "gpt_oss":  # GptOssConfig default: sliding, full, sliding, ...
        return tuple(SLIDING if i % 2 == 0 else FULL for i in range(n_layers))
    if model_type == "flint":  # FlintConfig: the first two, every fourth from the second and the last layer full
        return tuple(FULL if i < 2 or i % 4 == 1 or i == n_layers - 1 else SLIDING for i in range(n_layers))
    if model_type == "dots3_note_text":  # Dots3NoteTextConfig: the first two and every fourth from layer 1 full
        slide = cfg.get("use_sliding_window", True)
        return tuple(FULL if not slide or i < 2 or i % 4 == 1 else SLIDING for i in range(n_layers))
    if model_type == "modernbert-decoder":  # ModernBertDecoderConfig: layer i full when i % global_attn_every_n_layers
        step = _at_least_one(cfg.get("global_attn_every_n_layers", 3), "global_attn_every_n_layers")  # is 0
        return tuple(FULL if i % step == 0 else SLIDING for i in range(n_layers))
    if model_type == "afmoe":  # AfmoeConfig: every global_attn_every_n_layers-th layer full
        step = _at_least_one(cfg.get("global_attn_every_n_layers", 4), "global_attn_every_n_layers")
        return tuple(FULL if (i + 1) % step == 0 else SLIDING for i in range(n_layers))
    if model_type in ("cohere2", "olmo3", "exaone4", "exaone_moe"):  # Cohere2Config / Olmo3Config / Exaone4Config
        # (ExaoneMoeConfig is one): every 4th full
        pattern = cfg.get("sliding_window_pattern", 4) if model_type != "olmo3" else 4
        if isinstance(pattern, str):  # Exaone4's "LLLG": local (sliding) and global layers, repeated
            if not pattern or set(pattern) - {"L", "G"}:
                raise InputError(f"sliding_window_pattern {pattern!r} is not a string of L and G")
            return tuple(SLIDING if pattern[i % len(pattern)] == "L" else FULL for i in range(n_layers))
        pattern = _at_least_one(pattern, "sliding_window_pattern")
        return tuple(SLIDING if (i + 1) % pattern else FULL for i in range(n_layers))
    if model_type in ("mistral", "mixtral", "phi3", "starcoder2", "ministral"):  # Starcoder2Attention too;
        return (SLIDING,) * n_layers  # transformers' cache makes a layer with a sliding_window a sliding one
    return (FULL,) * n_layers


#: model types built of recurrent / linear-attention layers, alone or beside attention (their configs do not all say
#: so in a field): a fixed state per sequence instead of a KV cache, and weights memviz's inventory does not hold
RECURRENT_MODEL_TYPES = frozenset({"mamba", "mamba2", "falcon_mamba", "rwkv", "rwkv6", "rwkv7", "jamba", "zamba",
                                   "zamba2", "plamo2", "minimax",
                                   "recurrent_gemma", "xlstm", "lfm3"})
#: layer kinds of full attention under another name: MiniMax-M3's block-sparse layers (MiniMaxM3VLAttention)
_SPARSE_ATTENTION_KINDS = frozenset({"minimax_m3_sparse"})
#: config fields that place recurrent layers (Qwen3-Next, Jamba, Granite-4.0-H / Zamba, Nemotron-H)
_HYBRID_FIELDS = ("full_attention_interval", "attn_layer_period", "layers_block_type", "hybrid_override_pattern")


def _granite_hybrid_layers(cfg: dict[str, Any]) -> dict[str, Any]:
    """GraniteMoeHybridConfig's layer list under either name (`layers_block_type` is its attribute-map alias), its
    kinds "mamba" / "attention" or, as transformers 5 writes them, "linear_attention" / "full_attention"."""
    kinds = cfg.get("layer_types") or cfg.get("layers_block_type")
    if not isinstance(kinds, list) or not kinds:
        raise InputError("granitemoehybrid: the config lists no layer_types (which layers are Mamba2, which attention)")
    unknown = sorted({str(k) for k in kinds} - {"mamba", "attention", "linear_attention", "full_attention"})
    if unknown:
        raise InputError(f"granitemoehybrid: unknown layer kinds {', '.join(unknown)} (mamba or attention)")
    return {**cfg, "layer_types": kinds}


def _nemotron_h_layers(cfg: dict[str, Any]) -> dict[str, Any]:
    """NemotronHConfig's blocks (`layers_block_type`, its alias `layer_types`, or the older `hybrid_override_pattern`
    string of M / * / - / E): Mamba2, attention, MLP or experts, one mixer a block; their count is the model's
    layer count, whatever num_hidden_layers says (transformers 5.24 derives it from the list)."""
    kinds = cfg.get("layers_block_type") or cfg.get("layer_types") or cfg.get("hybrid_override_pattern")
    if isinstance(kinds, str):
        kinds = list(kinds)
    if not isinstance(kinds, list) or not kinds:
        raise InputError("nemotron_h: the config gives no layers_block_type / hybrid_override_pattern")
    unknown = sorted({str(k) for k in kinds} - set(_NEMOTRON_BLOCKS))
    if unknown:
        raise InputError(f"nemotron_h: unknown block kinds {', '.join(unknown)} (mamba, attention, mlp or moe)")
    if cfg.get("moe_latent_size"):
        raise InputError("nemotron_h: experts behind a latent projection (moe_latent_size) are not modelled")
    blocks = [_NEMOTRON_BLOCKS[str(k)] for k in kinds]
    return {**cfg, "num_hidden_layers": len(blocks), "layer_types": blocks}


def _mamba_config(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """MambaConfig / FalconMambaConfig / Mamba2Config (transformers 5.25): num_hidden_layers blocks of one RMSNorm and
    one mixer, no attention and no MLP. A Mamba mixer is the config's intermediate_size wide (`__post_init__` sets
    expand x hidden, then the stored field overrides it: Falcon-Mamba-7B's config says expand 16 beside
    intermediate_size 8,192), else expand x hidden; Mamba2Mixer is expand x hidden wide whatever the config says;
    time_step_rank "auto" is ceil(hidden / 16). memviz's attention fields, which no layer uses, are one head of the
    hidden width (Mamba2Config's num_heads are the mixer's)."""
    hidden = _at_least_one(_require(cfg, "hidden_size"), "hidden_size")
    n = _layer_count(cfg, "num_hidden_layers")
    expanded = _at_least_one(cfg.get("expand", 2), "expand") * hidden
    inner = expanded if model_type in MAMBA2_ONLY_TYPES else cfg.get("intermediate_size") or expanded
    rank = _dt_rank(cfg.get("time_step_rank"), hidden, "time_step_rank")
    mixer = {"mamba2_heads": cfg.get("num_heads", 128), "mamba2_head_dim": cfg.get("head_dim", 64)} \
        if model_type in MAMBA2_ONLY_TYPES else {}  # Mamba2Config's, before the attention fields take their names
    return {**cfg, **mixer, "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": hidden,
            "intermediate_size": _at_least_one(inner, "intermediate_size"), "time_step_rank": rank,
            "layer_types": ["mamba"] * n}


def _dt_rank(value: Any, hidden: int, key: str) -> int:
    """A Mamba mixer's dt rank: "auto" (or absent) is ceil(hidden / 16) (MambaConfig / JambaConfig `__post_init__`)."""
    return math.ceil(hidden / 16) if value in (None, "auto") else _at_least_one(value, key)


def _period_offset(cfg: dict[str, Any], prefix: str, period: int, offset: int) -> tuple[int, int]:
    """JambaConfig's `{prefix}_period` and `{prefix}_offset` (the offset below the period: `validate_architecture`)."""
    p = _at_least_one(cfg.get(f"{prefix}_period", period), f"{prefix}_period")
    o = _int(cfg.get(f"{prefix}_offset", offset), f"{prefix}_offset")
    if not 0 <= o < p:
        raise InputError(f"jamba: {prefix}_offset ({o}) must be below {prefix}_period ({p})")
    return p, o


def _jamba_layers(cfg: dict[str, Any]) -> dict[str, Any]:
    """JambaConfig.layers_block_type (transformers 5.25): attention where i % attn_layer_period == attn_layer_offset,
    a Mamba mixer elsewhere (a list given as layer_types, a GGUF file's, is kept)."""
    if isinstance(cfg.get("layer_types"), list):
        return cfg
    period, offset = _period_offset(cfg, "attn_layer", 8, 4)
    n = _layer_count(cfg, "num_hidden_layers")
    return {**cfg, "layer_types": ["attention" if i % period == offset else "mamba" for i in range(n)]}


def _mamba_mixer(cfg: dict[str, Any], keys: dict[str, str], inner: int, rank: int) -> dict[str, Any]:
    """A Mamba mixer on the linear-attention fields (`Architecture.linear_dt_rank`): one group of B and C of d_state,
    `inner` channels of width 1, dt of `rank`; its d_state, taps and biases under the config's `keys` (MambaConfig's
    and JambaConfig's defaults: 16, 4, a convolution bias, no projection bias)."""
    return dict(linear_mixer=MAMBA, linear_k_heads=1, linear_k_head_dim=_at_least_one(cfg.get(keys["state"], 16),
                                                                                     keys["state"]),
                linear_v_heads=inner, linear_v_head_dim=1, linear_dt_rank=rank,
                linear_conv_kernel=_at_least_one(cfg.get(keys["taps"], 4), keys["taps"]),
                linear_conv_bias=bool(cfg.get(keys["conv_bias"], True)),
                linear_proj_bias=bool(cfg.get(keys["proj_bias"], False)))


def _jamba_fields(cfg: dict[str, Any], hidden: int) -> dict[str, Any]:
    """JambaMambaMixer (transformers 5.25 modeling_jamba.py): MambaMixer's tensors, mamba_expand x hidden wide, of
    mamba_d_state, mamba_d_conv taps and rank mamba_dt_rank ("auto": ceil(hidden / 16)), with RMSNorms on dt, B and C
    (weights of the rank and d_state); the attention layers' q / k / v / o without biases or rope; a gated MLP or
    experts of intermediate_size after each mixer (JambaSparseMoeBlock: a softmax router without bias)."""
    mixer = _mamba_mixer(cfg, {"state": "mamba_d_state", "taps": "mamba_d_conv",
                               "conv_bias": "mamba_conv_bias", "proj_bias": "mamba_proj_bias"},
                         _at_least_one(cfg.get("mamba_expand", 2), "mamba_expand") * hidden,
                         _dt_rank(cfg.get("mamba_dt_rank"), hidden, "mamba_dt_rank"))
    return dict(mixer, mamba_norm_weights=True, qkv_bias=False, out_bias=False, mlp_bias=False)


def _mamba_fields(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """MambaMixer's fields (transformers 5.25 modeling_mamba.py; FalconMambaMixer's alike, with dt, B and C normalised
    without weights, `rms_forward`): in_proj to x and z, a depthwise convolution of conv_kernel taps over x (biased
    with use_conv_bias), x_proj to dt (time_step_rank), B and C (state_size each), dt_proj back (biased), A_log
    (intermediate x state_size), D, out_proj (in_proj / out_proj biased with use_bias). MambaBlock keeps its residual
    in float32 with residual_in_fp32 (the default)."""
    mixer = _mamba_mixer(cfg, {"state": "state_size", "taps": "conv_kernel", "conv_bias": "use_conv_bias",
                               "proj_bias": "use_bias"}, cfg["intermediate_size"], cfg["time_step_rank"])
    return dict(mixer, mamba_dt_b_c_rms=model_type == "falcon_mamba", ffn_layers=(False,) * len(cfg["layer_types"]),
                norms_per_layer=1, float32_residual=bool(cfg.get("residual_in_fp32", True)),
                tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)))


def _mamba2_only_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """Mamba2Mixer's fields (transformers 5.25 modeling_mamba2.py, Mamba2Config's names): num_heads heads of head_dim
    (their product must be expand x hidden: `validate_architecture`), n_groups groups of B and C of state_size, a
    convolution of conv_kernel taps over x, B and C (biased with use_conv_bias), in_proj / out_proj biased with
    use_bias, the gated norm over the mixer's width; Mamba2Block keeps its residual in float32 with
    residual_in_fp32 (the released configs set it)."""
    heads, head_dim = _at_least_one(cfg["mamba2_heads"], "num_heads"), _at_least_one(cfg["mamba2_head_dim"], "head_dim")
    if heads * head_dim != cfg["intermediate_size"]:
        raise InputError(f"mamba2: num_heads x head_dim ({heads} x {head_dim}) must equal expand x hidden_size "
                         f"({cfg['intermediate_size']}), as Mamba2Config requires")
    return dict(linear_mixer=MAMBA2, linear_k_heads=_at_least_one(cfg.get("n_groups", 8), "n_groups"),
                linear_k_head_dim=_at_least_one(cfg.get("state_size", 128), "state_size"), linear_v_heads=heads,
                linear_v_head_dim=head_dim, linear_conv_kernel=_at_least_one(cfg.get("conv_kernel", 4), "conv_kernel"),
                linear_chunk=_at_least_one(cfg.get("chunk_size", 256), "chunk_size"),
                linear_conv_bias=bool(cfg.get("use_conv_bias", True)), linear_proj_bias=bool(cfg.get("use_bias", False)),
                ffn_layers=(False,) * len(cfg["layer_types"]), norms_per_layer=1,
                float32_residual=bool(cfg.get("residual_in_fp32", True)),
                tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)))


def _lfm2_layers(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """LFM2's layers as Lfm2Config (transformers 5.24) reads them: `layer_types` of "conv" and "full_attention",
    else full attention at `full_attn_idxs` (every layer when absent) and short convolutions elsewhere; the
    released configs' `block_ff_dim` and `tie_embedding` stand for intermediate_size and tie_word_embeddings
    (Lfm2Config.__post_init__). LFM3 (Lfm3Config.__post_init__) also slides: without a list, layer 2 of every four
    attends fully, layer 0 of every four but the first over a window (default 256), the others convolve."""
    n = _int(_require(cfg, "num_hidden_layers"), "num_hidden_layers")
    kinds = cfg.get("layer_types")
    allowed = {"conv", "full_attention"} | ({"sliding_attention"} if model_type == "lfm3" else set())
    if kinds is None and model_type == "lfm3":
        kinds = ["full_attention" if i % 4 == 2 else "sliding_attention" if i % 4 == 0 and i > 0 else "conv"
                 for i in range(n)]
    if kinds is None:
        listed = cfg.get("full_attn_idxs")
        full = set(_int_list(listed, "full_attn_idxs")) if listed is not None else set(range(n))
        kinds = ["full_attention" if i in full else "conv" for i in range(n)]
    if not isinstance(kinds, list) or set(map(str, kinds)) - allowed:
        names = [f"'{k}'" for k in sorted(allowed)]
        raise InputError(f"{model_type}: layer_types must list {', '.join(names[:-1])} or {names[-1]} for each layer")
    out = {**cfg, "layer_types": ["linear_attention" if k == "conv" else k for k in kinds]}
    if model_type == "lfm3":
        out["sliding_window"] = cfg.get("sliding_window", 256)
    if cfg.get("block_ff_dim") is not None:
        out["intermediate_size"] = cfg["block_ff_dim"]
    if cfg.get("tie_embedding") is not None:
        out["tie_word_embeddings"] = cfg["tie_embedding"]
    return out


def _lfm2_fields(cfg: dict[str, Any], hidden: int, intermediate: int, adjust: bool) -> dict[str, Any]:
    """LFM2's blocks (transformers 5.24 modeling_lfm2.py): Lfm2ShortConv, in_proj to B, C and x (3 x hidden), a
    depthwise convolution of conv_L_cache taps over hidden channels, out_proj, all biased with conv_bias; attention
    with q/k norms and no biases; Lfm2MLP's width 2/3 of the configured one, times block_ffn_dim_multiplier, rounded
    up to block_multiple_of when block_auto_adjust_ff_dim (LFM2-MoE's Lfm2MoeMLP takes intermediate_size as it is);
    tied embeddings by default. The convolution maps onto the linear-layer fields as one value head of hidden width
    and no key heads: hidden channels, no recurrent state."""
    if adjust and cfg.get("block_auto_adjust_ff_dim", True):
        intermediate = int(2 * intermediate / 3)
        multiplier = cfg.get("block_ffn_dim_multiplier", 1.0)
        if multiplier is not None:
            step = _at_least_one(cfg.get("block_multiple_of", 256), "block_multiple_of")
            intermediate = step * math.ceil(int(_positive(multiplier, "block_ffn_dim_multiplier") * intermediate) / step)
    bias = bool(cfg.get("conv_bias", False))
    return dict(intermediate_size=_at_least_one(intermediate, "intermediate_size"), linear_mixer=SHORTCONV,
                linear_k_heads=0, linear_k_head_dim=0, linear_v_heads=1, linear_v_head_dim=hidden,
                linear_conv_kernel=_at_least_one(cfg.get("conv_L_cache", 3), "conv_L_cache"),
                linear_conv_bias=bias, linear_proj_bias=bias, qk_norm=True,
                tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)))


def _mimo_v2_layers(cfg: dict[str, Any]) -> dict[str, Any]:
    """MiMo-V2-Flash's layer lists as transformers 5.24 writes them (MiMoV2FlashConfig `layer_types`,
    `mlp_layer_types`) or as its released config.json and vLLM 0.33 (`model_executor/models/mimo_v2.py`) give them:
    `hybrid_layer_pattern` (1 = sliding window) and `moe_layer_freq` (1 = experts). Without either, the first and
    every 6th layer attend fully and the first layer is dense (MiMoV2FlashConfig.__post_init__); the window is
    `sliding_window_size` + 1 tokens, the query with the tokens before it."""
    n = _int(_require(cfg, "num_hidden_layers"), "num_hidden_layers")
    out = dict(cfg)

    def flags(key: str, default: list[int]) -> list[int]:
        listed = _int_list(cfg[key], key) if isinstance(cfg.get(key), (list, str)) else default
        if len(listed) != n:
            raise InputError(f"{key} has {len(listed)} entries for {n} layers")
        return listed

    if cfg.get("layer_types") is None:
        out["layer_types"] = ["sliding_attention" if f else "full_attention" for f in flags(
            "hybrid_layer_pattern", [int(i != 0 and (i + 1) % 6 != 0) for i in range(n)])]
    if cfg.get("mlp_layer_types") is None:
        out["mlp_layer_types"] = ["sparse" if f else "dense" for f in flags("moe_layer_freq", [int(i > 0)
                                                                                                for i in range(n)])]
    if cfg.get("sliding_window_size") is not None:
        out["sliding_window"] = _int(cfg["sliding_window_size"], "sliding_window_size") + 1
    return out


def _mimo_v2_fields(cfg: dict[str, Any], heads: int, kv_heads: int, head_dim: int) -> dict[str, Any]:
    """MiMoV2FlashAttention (transformers 5.24): K of `head_dim`, V of `v_head_dim` a head; the sliding layers
    with twice the KV heads (the released config's `swa_num_key_value_heads`) and a learned sink per query head
    (`add_swa_attention_sink_bias`), the full layers with neither. vLLM 0.33 reads the same fields."""
    value = _int(_require(cfg, "v_head_dim"), "v_head_dim")
    swa_kv = _int(cfg.get("swa_num_key_value_heads") or 2 * kv_heads, "swa_num_key_value_heads")
    same = (_get(cfg, "swa_num_attention_heads", default=heads), _get(cfg, "swa_head_dim", default=head_dim),
            _get(cfg, "swa_v_head_dim", default=value))
    if same != (heads, head_dim, value):
        raise InputError("mimo_v2_flash: sliding layers with their own query heads or head widths are not modelled")
    return dict(num_kv_heads=swa_kv, full_num_kv_heads=kv_heads if kv_heads != swa_kv else 0, v_head_dim=value,
                attention_sinks=bool(cfg.get("add_swa_attention_sink_bias", True)), sliding_sinks_only=True)


def _nemotron_h_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """Nemotron-H's blocks (NemotronHBlock, transformers 5.24): one RMSNorm and one mixer each; Mamba2
    (NemotronHMamba2Mixer: mamba_num_heads x mamba_head_dim, n_groups x ssm_state_size, conv_kernel taps, use_conv_bias,
    use_bias on in_proj / out_proj), attention without biases, an up / down MLP (mlp_hidden_act, relu2) and
    ungated experts; vLLM keeps its SSM state in mamba_ssm_cache_dtype (float32 by default:
    `NemotronHForCausalLMConfig`)."""
    kinds = cfg["layer_types"]
    return dict(linear_mixer=MAMBA2, linear_k_heads=_at_least_one(cfg.get("n_groups", 8), "n_groups"),
                linear_k_head_dim=_at_least_one(cfg.get("ssm_state_size", 128), "ssm_state_size"),
                linear_v_heads=_at_least_one(cfg.get("mamba_num_heads", 128), "mamba_num_heads"),
                linear_v_head_dim=_at_least_one(cfg.get("mamba_head_dim", 64), "mamba_head_dim"),
                linear_conv_kernel=_at_least_one(cfg.get("conv_kernel", 4), "conv_kernel"),
                linear_chunk=_at_least_one(cfg.get("chunk_size", 128), "chunk_size"),
                linear_conv_bias=bool(cfg.get("use_conv_bias", True)), linear_proj_bias=bool(cfg.get("use_bias", False)),
                linear_state_dtype=str(cfg.get("mamba_ssm_cache_dtype") or "float32"),
                mlp_gated=False, hidden_act=str(cfg.get("mlp_hidden_act", "relu2")),
                mlp_bias=bool(cfg.get("mlp_bias", False)), norms_per_layer=1, qkv_bias=False, out_bias=False,
                tie_word_embeddings=False,  # NemotronHForCausalLM ties nothing (`_tied_weights_keys = {}`)
                ffn_layers=tuple(kind in ("mlp", "moe") for kind in kinds))


#: heads of encoder models (transformers' class-name suffixes): a config that names only these is no decoder LLM
_ENCODER_HEADS = ("ForMaskedLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering",
                  "ForMultipleChoice", "ForPreTraining", "ForNextSentencePrediction")


def _deepstack_layers(cfg: dict[str, Any], outer: dict[str, Any]) -> int:
    """Qwen3-VL's deepstack layers: a GGUF file's n_deepstack_layers (memviz's importer names it deepstack_layers),
    else the vision config's deepstack_visual_indexes, one merger and one decoder layer each (llama.cpp 0c1e570
    conversion/qwen.py `Qwen3VLTextModel` writes their count)."""
    if cfg.get("deepstack_layers"):
        return _int(cfg["deepstack_layers"], "deepstack_layers")
    vision = outer.get("vision_config") if outer.get("model_type") in ("qwen3_vl", "qwen3_vl_moe") else None
    indexes = vision.get("deepstack_visual_indexes") if isinstance(vision, dict) else None
    return len(indexes) if isinstance(indexes, list) else 0


def _hunyuan_moe_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Hunyuan-A13B's config in the names memviz reads: in every layer `num_experts` experts of
    `moe_intermediate_size` (HunYuanMoEV1Config has no such field and builds them of `intermediate_size`, which the
    release equals), `moe_topk` of them routed, and `num_shared_expert` shared MLPs of `intermediate_size` (one in
    HunYuanMoEV1Moe, transformers 5.24; llama.cpp's converter, conversion/hunyuan.py, and vLLM read the lists). The
    released config lists them per layer; llama.cpp's converter asserts they agree, and so does memviz."""
    def uniform(key: str, default: Any) -> Any:
        value = cfg.get(key, default)
        if isinstance(value, list):
            if not value or len(set(map(repr, value))) != 1:
                raise InputError(f"{key} must be the same in every layer, got {value!r:.60}")
            value = value[0]
        return value

    width = cfg.get("intermediate_size", 11008)
    shared = cfg.get("shared_expert_intermediate_size") or width * _int(uniform("num_shared_expert", 1),
                                                                         "num_shared_expert")
    return {**cfg, "num_experts": uniform("num_experts", 1),
            "num_experts_per_tok": uniform("moe_topk", cfg.get("num_experts_per_tok", 1)),
            "moe_intermediate_size": uniform("moe_intermediate_size", width), "shared_expert_intermediate_size": shared}


def _dbrx_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """DBRX's config in the names memviz reads (DbrxConfig, DbrxAttentionConfig, DbrxFFNConfig, transformers 5.24
    configuration_dbrx.py, and their defaults; its top-level names renamed by _RENAMED): the KV heads in attn_config;
    the experts' count, top-k, width and activation in ffn_config; where the usual names are given (a GGUF file's
    metadata as memviz reads it), they win. Its layers are Mixtral's: two weight-only norms
    (nn.LayerNorm without bias), a fused Wqkv as wide as q, k and v, a bias-free router and gated experts."""
    attn, ffn = cfg.get("attn_config") or {}, cfg.get("ffn_config") or {}
    if not isinstance(attn, dict) or not isinstance(ffn, dict):
        raise InputError("DBRX's attn_config and ffn_config must be objects")
    width = ffn.get("ffn_hidden_size", 3584)
    dbrx = {"hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 24, "max_position_embeddings": 2048,
            "num_key_value_heads": attn.get("kv_n_heads", 1), "intermediate_size": width,
            "moe_intermediate_size": width, "num_local_experts": ffn.get("moe_num_experts", 4),
            "num_experts_per_tok": ffn.get("moe_top_k", 1),
            "hidden_act": act.get("name", "silu") if isinstance(act := ffn.get("ffn_act_fn"), dict) else "silu"}
    return {**dbrx, **cfg, "tie_word_embeddings": False}


def _mpt_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """MPT's config in the names memviz reads (MptConfig, transformers 5.24 configuration_mpt.py, and its defaults;
    its names renamed by _RENAMED): its layers (MptBlock) hold weight-only LayerNorms (their bias set to None), one
    bias-free Wqkv of 3 x d_model (multi-head: MptAttention has no KV-head field), out_proj, and a GELU MLP of
    4 x d_model whatever expansion_ratio says; ALiBi, no position table; tied embeddings by default."""
    cfg = {"hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 24, "max_position_embeddings": 2048,
           "vocab_size": 50368, "hidden_act": "gelu", **cfg}
    hidden = cfg["hidden_size"]
    width = 4 * hidden if isinstance(hidden, int) else hidden  # not a number: the hidden_size check says so
    return {"intermediate_size": width, **cfg, "num_key_value_heads": cfg["num_attention_heads"]}


def _cohere2_moe_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Cohere2MoeConfig.__post_init__ (transformers 5.24) where a config lists no layer kinds: the first
    `first_k_dense_replace` layers dense with their own window pattern (prefix_dense_sliding_window_pattern, default
    1: every one full), the rest sparse, every sliding_window_pattern-th of them full."""
    n = _int(_require(cfg, "num_hidden_layers"), "num_hidden_layers")
    dense = _int(cfg.get("first_k_dense_replace", 0) or 0, "first_k_dense_replace")
    prefix = _at_least_one(cfg.get("prefix_dense_sliding_window_pattern", 1), "prefix_dense_sliding_window_pattern")
    rest = _at_least_one(cfg.get("sliding_window_pattern", 4), "sliding_window_pattern")
    # Cohere2MoeExperts are as wide as intermediate_size whatever else the config names, the dense layers'
    # Cohere2MoeMLP as prefix_dense_intermediate_size (intermediate_size when unset); the window's default
    width = cfg.get("intermediate_size", 22528)
    out = {**cfg, "moe_intermediate_size": width, "intermediate_size": cfg.get("prefix_dense_intermediate_size") or width,
           "sliding_window": cfg.get("sliding_window", 4096)}
    if out.get("layer_types") is None:
        out["layer_types"] = ["full_attention" if (i + 1) % prefix == 0 else "sliding_attention" for i in range(dense)] + [
            "full_attention" if (i + 1) % rest == 0 else "sliding_attention" for i in range(n - dense)]
    if out.get("mlp_layer_types") is None:
        out["mlp_layer_types"] = ["dense" if i < dense else "sparse" for i in range(n)]
    return out


def _longcat_flash_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """LongcatFlashConfig (transformers 5.25, model_type longcat_flash) in the names memviz reads, a sublayer each:
    a decoder layer (`LongcatFlashDecoderLayer`) holds two MLA attentions (cache layers 2i and 2i + 1), two gated MLPs
    of ffn_hidden_size and norms, and one shortcut MoE beside the first MLP: n_routed_experts of
    expert_ffn_hidden_size behind a router over them and zero_expert_num weightless identity experts. The
    config's num_layers counts decoder layers (num_hidden_layers is twice it, as vLLM 0.34's longcat_flash.py
    `make_layers(config.num_layers)` and transformers' property read it); the first sublayer is read as an MoE
    layer whose shared expert is its MLP, the second as a dense one."""
    n = _layer_count(cfg, "num_layers")
    ffn = cfg.get("ffn_hidden_size", 12288)
    ngram = {}
    if cfg.get("ngram_vocab_size_ratio") is not None:  # LongCat-Flash-Lite (`_longcat_ngram_fields`)
        ngram = _longcat_ngram_fields(cfg)
    return {**cfg, **ngram, "num_hidden_layers": 2 * n, "intermediate_size": ffn,
            "moe_intermediate_size": cfg.get("expert_ffn_hidden_size", 2048),
            "n_routed_experts": cfg.get("n_routed_experts", 512), "num_experts_per_tok": cfg.get("moe_topk", 12),
            "zero_expert_num": cfg.get("zero_expert_num", 256), "mlp_layer_types": ["sparse", "dense"] * n}


def _longcat_ngram_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """LongCat-Flash-Lite's n-gram embedding as vLLM 0.34 builds it (longcat_flash_ngram.py
    `NgramEmbedding._init_ngram_embeddings`): emb_split_num x (emb_neighbor_num - 1) tables, the i-th of
    int(ngram_vocab_size_ratio x vocab_size + 2i + 1) rows."""
    ratio = _positive(cfg["ngram_vocab_size_ratio"], "ngram_vocab_size_ratio")
    split = _at_least_one(_require(cfg, "emb_split_num"), "emb_split_num")
    neighbors = _int(_require(cfg, "emb_neighbor_num"), "emb_neighbor_num")
    hidden = _int(_require(cfg, "hidden_size"), "hidden_size")
    if neighbors < 2 or split * (neighbors - 1) > hidden:
        raise InputError(f"emb_neighbor_num ({neighbors}) must be at least 2 and emb_split_num x (emb_neighbor_num - 1)"
                         f" at most hidden_size ({hidden})")
    return {"ngram_embedders": split * (neighbors - 1),
            "ngram_rows": _int(int(ratio * _int(_require(cfg, "vocab_size"), "vocab_size")), "ngram_vocab_size_ratio")}


def _step3p5_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Step3p7TextConfig.__post_init__ (transformers 5.24, model_type step3p5) on a released config: layer_types and
    mlp_layer_types lose the trailing num_nextn_predict_layers MTP entries; mlp_layer_types comes from
    moe_layers_enum (the MoE layers' indices; by default every layer from the fourth); the sliding layers' query
    heads from attention_other_setting; the shared expert is share_expert_dim wide, the experts
    moe_intermediate_size."""
    n = _int(_require(cfg, "num_hidden_layers"), "num_hidden_layers")
    out = dict(cfg)
    for key in ("layer_types", "mlp_layer_types"):
        if isinstance(out.get(key), list) and len(out[key]) > n:
            out[key] = out[key][:n]
    if out.get("mlp_layer_types") is None:
        enum = out.get("moe_layers_enum")
        items = enum.split(",") if isinstance(enum, str) else enum if enum is not None else range(3, n)
        moe = {_int(int(str(i).strip()), "moe_layers_enum") for i in items if str(i).strip()}
        out["mlp_layer_types"] = ["sparse" if i in moe else "dense" for i in range(n)]
    other = out.get("attention_other_setting")
    if out.get("num_sliding_attention_heads") is None and isinstance(other, dict):
        out["num_sliding_attention_heads"] = other.get("num_attention_heads")
    return {**out, "shared_expert_intermediate_size": out.get("share_expert_dim", 1280), "shared_expert_gate": False}


def _step3p5_fields(cfg: dict[str, Any], n_layers: int, n_heads: int, head_dim: int,
                    kinds: tuple[str, ...]) -> dict[str, Any]:
    """Step3p7Attention (transformers 5.24): q/k norms, g_proj's gate (`gating`, True: one value a head), and the
    sliding layers' own query heads (num_sliding_attention_heads), K/V heads shared; its router's score bias."""
    sliding = _int(cfg.get("num_sliding_attention_heads") or n_heads, "num_sliding_attention_heads")
    gate = _laguna_fields({"gating": cfg.get("gating", True)}, n_layers, n_heads, head_dim)["head_gate"]
    out: dict[str, Any] = dict(qk_norm=True, head_gate=gate, router_score_bias=True)
    heads = tuple(sliding if kind == SLIDING else n_heads for kind in kinds)
    if set(heads) != {n_heads}:
        out.update(layer_heads=heads, num_heads=max(heads))
    return out


def omni_thinker(cfg: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A Qwen2.5-Omni / Qwen3-Omni config read as its thinker (`thinker_config`), the model that reads text, images
    and audio and writes text, which vLLM serves (Qwen2_5OmniThinkerForConditionalGeneration), with a warning naming
    what transformers' full model also loads; any other config as it is."""
    thinker = cfg.get("thinker_config") if isinstance(cfg, dict) else None
    if not isinstance(thinker, dict) or "text_config" in cfg:
        return cfg, ""
    left = ", ".join(k.removesuffix("_config") for k in ("talker_config", "token2wav_config", "code2wav_config",
                                                          "code_predictor_config") if k in cfg)
    return {"model_type": f"{cfg.get('model_type', 'omni')}_thinker", **thinker}, (
        f"{cfg.get('model_type', 'this model')}: read as its thinker (text out, as vLLM serves it); the speech "
        f"generator transformers also loads for audio output ({left or 'talker'}) is not counted")


def decoder_type(model_type: str) -> str:
    """The model type memviz reads a language model of `model_type` as (`_ALIASES`: the decoder it is built of)."""
    return _ALIASES.get(model_type, model_type)


#: the classes that load what memviz counts where no auto class maps the checkpoint's own model_type to it
#: (transformers 5.24 models/auto/modeling_auto.py): a Qwen-Omni checkpoint's thinker alone (modeling_qwen2_5_omni.py,
#: modeling_qwen3_omni_moe.py); GLM-Image with its head over image tokens (only AutoModel maps glm_image, to
#: GlmImageModel, which has none); the Flamingos, which of the generating auto classes only AutoModelForSeq2SeqLM maps
#: (MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
LOADER_CLASSES = {"qwen2_5_omni_thinker": "Qwen2_5OmniThinkerForConditionalGeneration",
                  "qwen3_omni_moe_thinker": "Qwen3OmniMoeThinkerForConditionalGeneration",
                  "glm_image": "GlmImageForConditionalGeneration",
                  "audioflamingo3": "AutoModelForSeq2SeqLM", "musicflamingo": "AutoModelForSeq2SeqLM"}


#: MllamaTextConfig's cross_attention_layers when a config lists none (transformers 5.24 configuration_mllama.py)
MLLAMA_CROSS_LAYERS = [3, 8, 13, 18, 23, 28, 33, 38]


def _mllama_fields(outer: dict[str, Any], vocab: int) -> dict[str, Any]:
    """Llama 3.2 Vision's language model (transformers 5.24 modeling_mllama.py): `MllamaTextModel.embed_tokens` holds
    vocab_size + 8 rows, the LM head vocab_size; each cross-attention layer caches `cross_attention_tokens_of` the
    outer config's vision_config (`towers.mllama_image_tokens`; none without one: a text-only MllamaForCausalLM)."""
    vc = outer.get("vision_config")
    tokens = mllama_image_tokens(vc) if isinstance(vc, dict) else 0
    return dict(vocab_size=vocab + 8, output_vocab_size=vocab, cross_attention_tokens=tokens)


def _molmo2_fields(cfg: dict[str, Any], vocab: int) -> dict[str, Any]:
    """Molmo 2's language model (transformers 5.24 modeling_molmo2.py `Molmo2TextModel`): Qwen3's q/k norms of head_dim
    (qk_norm_type "qwen3"; else one over all heads), q/k/v biased per attention_bias, o_proj never; `embed_tokens`
    holds vocab_size + additional_vocab_size rows, the LM head vocab_size."""
    bias = bool(cfg.get("attention_bias", False))
    extra = _int(cfg.get("additional_vocab_size", 128) or 0, "additional_vocab_size")
    return dict(qk_norm=True, qk_norm_full=cfg.get("qk_norm_type", "qwen3") != "qwen3", qkv_bias=bias, out_bias=False,
                vocab_size=vocab + extra, output_vocab_size=vocab)


def _family_fields(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """Norms and biases of the Llama-shaped families that differ from Llama only there (transformers 5.24's modeling
    files): Command R (CohereDecoderLayer: one bias-free LayerNorm before parallel attention and MLP; Command R+'s
    per-head q/k LayerNorms; tied embeddings by default) and its MoE, OLMo (OlmoLayerNorm holds no weight), OLMo 2 / 3, OLMoE,
    FlexOlmo and MiniMax-M2 (q/k RMS norms over every head: Olmo2Attention `q_norm`), Seed-OSS and GLM (q/k/v
    biased, o_proj per `attention_out_bias` / never), StableLM (LayerNorms with bias, q/k/v per `use_qkv_bias`, one
    norm with `use_parallel_residual`, per-head q/k LayerNorms), Nemotron (NemotronLayerNorm1P with bias, a relu2
    up/down MLP), HunYuan dense and MoE (q/k norms of head_dim), PhiMoE (LayerNorms with bias, `lm_head_bias` not modelled),
    HyperCLOVA X (post-norms with `use_post_norm`)."""
    if model_type in ("cohere", "cohere2", "cohere2_moe"):  # the MoE's widths: `_cohere2_moe_config`
        return dict(norms_per_layer=1, tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                    qk_norm=bool(cfg.get("use_qk_norm", False)), qk_norm_full=True)
    if model_type == "olmo":
        return dict(weightless_norms=True)
    if model_type in ("olmo2", "olmo3", "olmoe", "flex_olmo", "minimax_m2"):
        return dict(qk_norm=True, qk_norm_full=True)
    if model_type == "seed_oss":
        return dict(qkv_bias=bool(cfg.get("attention_bias", True)), out_bias=bool(cfg.get("attention_out_bias", False)))
    if model_type == "glm":
        return dict(qkv_bias=bool(cfg.get("attention_bias", True)), out_bias=False)
    if model_type == "stablelm":
        return dict(norm_bias=True, qkv_bias=bool(cfg.get("use_qkv_bias", False)), out_bias=False,
                    norms_per_layer=1 if cfg.get("use_parallel_residual") else 2,
                    qk_norm=bool(cfg.get("qk_layernorm", False)), qk_norm_full=True)
    if model_type == "nemotron":
        return dict(mlp_gated=False, norm_bias=True)
    if model_type in ("hunyuan_v1_dense", "hunyuan_v1_moe"):
        return dict(qk_norm=True)
    if model_type == "phimoe":  # PhimoeForCausalLM: lm_head bias=config.lm_head_bias
        return dict(norm_bias=True, lm_head_bias=bool(cfg.get("lm_head_bias", False)))
    if model_type == "hyperclovax":
        return dict(norms_per_layer=4 if cfg.get("use_post_norm", True) else 2)
    if model_type in ("granite_swa", "granitemoe_swa"):  # GraniteSWAAttention.sinks: one logit per head
        return dict(attention_sinks=True)
    if model_type == "mellum":  # MellumAttention: q_norm / k_norm over head_dim
        return dict(qk_norm=True)
    return {}


#: decoders whose layers a Llama-style reading gets wrong (transformers 5.24's modeling files; read so, their default
#: configs counted -17.6 % (jetmoe) to +183 % (hrm_text) of the parameters transformers builds, doge over 8,000x)
_UNMODELLED_LAYERS = {
    "doge": "cross-domain experts of single neurons retrieved by product keys and dynamic-mask attention (DogeCDMoE)",
    "hrm_text": "hierarchical recurrent stacks run in loops (HrmTextStack)",
    "cpmant": "segment position embeddings and a bias-gated feed-forward (CpmAntSegmentPositionEmbedding)",
    "gpt_neox_japanese": "an MLP of intermediate_multiple_size widths and a separate attention bias",
    "ctrl": "sinusoidal positions and a ReLU feed-forward of dff with biases (CTRL's EncoderLayer)",
    "moshi": "a depth decoder over audio codebooks beside the text decoder",
    "jetmoe": "a mixture of attention heads (JetMoeMoA) beside its expert MLP",
    # transformers 5.25 modeling_dory.py (NVIDIA's Nemotron-Labs Dory): DoryModel runs its middle section
    # n_recurrent_loops times, each loop with KV caches of its own under recurrent_kv_cache_mode "per_loop"
    "dory": "nGPT-style layers on the unit sphere whose middle section runs n_recurrent_loops times over caches of "
            "its own (DoryModel)",
    # transformers 5.25 types whose configs name none of the standard fields (their reading stopped at a missing
    # hidden_size or head count before): modeling_blt.py, modeling_xglm.py, modeling_reformer.py, modeling_trocr.py
    "blt": "a local byte encoder, a global transformer over byte patches and a local byte decoder (BltModel)",
    "xglm": "sinusoidal positions, biased LayerNorms and a biased GELU feed-forward of ffn_dim (XGLMDecoderLayer)",
    "reformer": "LSH and local self-attention with reversible residuals and axial position embeddings (ReformerLayer)",
    "trocr": "a decoder with cross-attention to an image encoder's features (TrOCRDecoderLayer)",
    # Ling's linear-attention hybrids: vLLM 0.34 bailing_moe_linear.py (V2.5: linear attention beside every
    # layer_group_size-th MLA layer) and bailing_moe_v3.py (V3: Kimi Delta Attention beside MLA), transformers 5.25's
    # bailing_hybrid (gated delta attention beside gated MLA)
    **dict.fromkeys(("bailing_moe_linear", "bailing_moe_v3", "bailing_hybrid"),
                    "linear-attention layers beside MLA layers (Ling 2.5 / 3's hybrids)"),
    "ernie4_5_vl_moe_text": "text and vision experts of two widths (moe_intermediate_size as a pair, "
                            "Ernie4_5_VLMoeSparseMoeBlock)",
    # read as Llama-style decoders from transformers 5.24's default configs: +28.6 %, +23.9 %, -41.4 %, +20.9 %, +28.2 %
    "biogpt": "learned positions, biased LayerNorms and a biased GELU MLP (BioGptDecoderLayer)",
    "openai-gpt": "learned positions, post-LayerNorms and a fused biased attention (GPT-1's Block)",
    "git": "a CLIP image encoder and a BERT-style text decoder with learned positions (GitModel)",
    "xlnet": "two-stream relative attention with segment embeddings (XLNetRelativeAttention)",
    "bert-generation": "BERT's post-LayerNorm layers with learned positions (BertGenerationDecoder)",
    # read Llama-style, their language models counted -45.4 % (IDEFICS: its cross-attention layers missing) and
    # -0.85 % (BLIP's captioning decoder, whose cross-attention cache was missing too) of transformers 5.24's builds
    "idefics": "gated cross-attention layers over a perceiver resampler's image latents every cross_layer_interval "
               "layers and decoupled embeddings (IdeficsGatedCrossAttentionLayer)",
    "blip_text_model": "BERT's post-LayerNorm layers with learned positions and cross-attention to the image "
                       "(BlipTextLayer)",
}


#: classes whose releases name a model_type shared with a class memviz reads (Ling's "bailing_moe"), by the type
#: vLLM 0.34's registry builds them as
_UNMODELLED_CLASSES = {"BailingMoeV2_5ForCausalLM": "bailing_moe_linear", "BailingMoeV3ForCausalLM": "bailing_moe_v3"}
#: Ling's releases of every generation say model_type "bailing_moe"; their class tells V1 from V2 (vLLM 0.34's
#: registry: BailingMoeForCausalLM and BailingMoeV2ForCausalLM, both bailing_moe.py) and from the hybrids
BAILING_CLASSES = {"bailing_moe": "BailingMoeForCausalLM", "bailing_moe_v2": "BailingMoeV2ForCausalLM"}
BAILING_TYPES = frozenset(BAILING_CLASSES)


#: transformers 5.24 types that are no text-generating decoder memviz models, read before as Llama-style decoders
#: with a warning, their figures off by -90 % to +302 % of transformers' builds: speech, music and image generators,
#: the parts of encoder-decoders and of a byte-latent model, and a protein-text model whose protein encoder memviz
#: does not count (tests/core/test_arch_vs_transformers.py)
_NOT_TEXT_DECODERS = {
    **dict.fromkeys(("csm", "csm_depth_decoder_model", "moshi_depth", "musicgen_decoder", "musicgen_melody_decoder"),
                    "a generator of audio codebooks (a backbone and a depth decoder, or a codebook decoder)"),
    **dict.fromkeys(("vits", "pocket_tts", "gradium_phonon_tts", "clvp_decoder"), "a text-to-speech model"),
    **dict.fromkeys(("qwen2_5_omni_talker", "qwen3_omni_moe_talker_text", "qwen3_omni_moe_talker_code_predictor"),
                    "a Qwen-Omni speech generator (the talker; memviz reads an Omni checkpoint's thinker)"),
    "higgs_audio_v2": "a speech generator whose layers hold audio-token MLPs beside the text ones "
                      "(HiggsAudioV2ForConditionalGeneration)",
    "kyutai_speech_to_text": "a streaming speech-to-text model over audio codebooks with its codec "
                             "(KyutaiSpeechToTextForConditionalGeneration)",
    "nemotron3_5_transcribe_word_timestamp": "a word-timestamp model over a speech encoder",
    "imagegpt": "a generator of image pixels (ImageGPT)",
    "vibevoice": "a speech generator (VibeVoiceForConditionalGeneration: a language model driving a diffusion head "
                 "over acoustic latents)",
    "evolla": "a protein-text model whose protein encoder and cross-attention adapters memviz does not count",
    **dict.fromkeys(("diffusion_gemma", "diffusion_gemma_text"), "a block-diffusion encoder-decoder "
                    "(DiffusionGemmaForBlockDiffusion: an encoder stack and a decoder stack)"),
    **dict.fromkeys(("t5_gemma_module", "t5gemma2_decoder", "t5gemma2_encoder", "t5gemma2_text", "pix2struct_text_model"),
                    "a part of an encoder-decoder model"),
    **dict.fromkeys(("blt_local_decoder", "blt_patcher"), "a part of BLT's byte-latent model"),
    **dict.fromkeys(("pi0", "pi05"), "a robot action model (PI0 and PI0.5: a PaliGemma "
                    "vision-language model driving a flow-matching action expert)"),
}


#: encoder-only model types (transformers 5.24's masked-LM classes, encoder-decoders left to is_encoder_decoder): an
#: embedding model's config names its base class (BertModel, XLMRobertaModel), no head that would say so
ENCODER_TYPES = frozenset({
    "albert", "bert", "big_bird", "camembert", "convbert", "data2vec-text", "deberta", "deberta-v2", "distilbert",
    "electra", "ernie", "esm", "esmc", "eurobert", "flaubert", "fnet", "funnel", "gte", "ibert", "jina_embeddings_v3",
    "layoutlm", "longformer", "luke", "megatron-bert", "mobilebert", "modernbert", "modernvbert", "mpnet", "mra",
    "neomme", "nomic_bert", "nystromformer", "perceiver", "rembert", "roberta", "roberta-prelayernorm", "roc_bert",
    "roformer", "squeezebert", "tapas", "ultrabert", "ultravbert", "xlm", "xlm-roberta", "xlm-roberta-xl", "xmod",
    "yoso"})


#: transformers 5.24 types that generate no text: image / audio / video towers and their dual encoders (CLIP's
#: kind), speech encoders, document-layout and retrieval encoders, Q-Formers, a token classifier (none has a
#: causal-LM, image-text-to-text or speech-to-text class: tests/core/test_arch_vs_transformers.py)
NON_GENERATIVE_TYPES = frozenset({
    "aimv2", "aimv2_text_model", "align", "align_text_model", "altclip", "altclip_text_model", "beit",
    "blip_2_qformer", "blt_local_encoder", "bridgetower", "bridgetower_text_model", "bros", "chinese_clip",
    "chinese_clip_text_model", "clap", "clap_text_model", "clip", "clip_text_model", "clipseg", "clipseg_text_model",
    "clvp_encoder", "data2vec-audio", "decision_transformer", "deepseek_ocr2_encoder", "dia_encoder", "dpr",
    "embedding_gemma2", "embedding_gemma2_text", "flava", "flava_image_model", "flava_text_model",
    "granite_speech5_encoder", "groupvit", "groupvit_text_model", "hubert", "instructblip_qformer",
    "instructblipvideo_qformer", "layoutlmv2", "layoutlmv3", "layoutxlm", "lilt", "markuplm", "metaclip_2",
    "metaclip_2_text_model", "omdet-turbo", "openai_privacy_filter", "ovis2_vision", "ovis2_5_vision", "owlv2", "owlv2_text_model",
    "owlvit", "owlvit_text_model", "sam3", "sam3_lite_text", "sam3_lite_text_text_model", "sew", "sew-d", "siglip",
    "siglip2", "siglip2_text_model", "siglip_text_model", "splinter", "tipsv2",
    "tipsv2_text_model", "tvp", "unispeech", "unispeech-sat", "videoprism", "videoprism_text_model", "vilt",
    "visual_bert", "voxtral_encoder", "voxtral_realtime_encoder", "wav2vec2", "wavlm", "xclip", "xclip_text_model"})


def _refuse_not_text(model_type: str) -> None:
    """One clear error for a type that generates no text token by token (`_NOT_TEXT_DECODERS`), a wrapper's type
    included: its language model alone would be read as the whole model."""
    if model_type in _NOT_TEXT_DECODERS:
        raise InputError(f"{model_type}: {_NOT_TEXT_DECODERS[model_type]}; memviz estimates decoder LLMs that "
                         "generate text")


def _refuse_unmodelled(label: str, kind: str) -> None:
    """One line for a decoder whose layers (`_UNMODELLED_LAYERS[kind]`) memviz does not model."""
    raise InputError(f"{label}: its layers hold {_UNMODELLED_LAYERS[kind]}, which memviz does not model; read as a "
                     "Llama-style decoder its figures would be wrong")


def _refuse_non_decoder(cfg: dict[str, Any], model_type: str) -> None:
    """One clear error for an encoder-decoder (T5, BART, Whisper), an encoder-only model (BERT's heads) or a model
    that generates no text, of a type memviz does not know: read as a Llama-style decoder, its figures would be
    wrong (decoders whose layers memviz does not model are refused before: `_UNMODELLED_LAYERS`)."""
    _refuse_not_text(model_type)
    names = cfg.get("architectures")
    names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    if cfg.get("is_encoder_decoder") is True:
        raise InputError(f"{model_type}: an encoder-decoder model; memviz estimates decoder-only LLMs")
    if (names and all(n.endswith(_ENCODER_HEADS) for n in names)) or model_type in ENCODER_TYPES:
        named = f" ({', '.join(names)})" if names else ""
        raise InputError(f"{model_type}: an encoder model{named}; memviz estimates decoder-only LLMs")
    if model_type in NON_GENERATIVE_TYPES:
        raise InputError(f"{model_type}: an encoder or classifier that generates no text (an image, audio or "
                         "retrieval model); memviz estimates decoder-only LLMs")


#: types whose full and sliding layers rotate with bases of their own, named so in configs that predate
#: transformers 5's per-layer-type rope_parameters: (full layers' key, its default), (sliding layers' key, default)
#: (Gemma3TextConfig, Gemma3nTextConfig, ModernBertDecoderConfig; vLLM 0.34 gemma3.py `Gemma3Attention`)
_LEGACY_LAYER_ROPES = {
    "gemma3_text": (("rope_theta", 1000000.0), ("rope_local_base_freq", 10000.0)),
    "gemma3n_text": (("rope_theta", 1000000.0), ("rope_local_base_freq", 10000.0)),
    "modernbert-decoder": (("global_rope_theta", 160000.0), ("local_rope_theta", 10000.0)),
}


def _ropes(cfg: dict[str, Any], model_type: str) -> tuple[Rope, ...]:
    """The distinct rotary settings of a config, in a stable order: transformers 5's `rope_parameters`, per layer
    type where it holds one dict a type (Gemma 3 / 4), else one setting from it or from `rope_scaling` and
    `rope_theta`, the legacy per-layer bases apart (`_LEGACY_LAYER_ROPES`: the scaling for the full layers);
    M-RoPE's legacy type "mrope" is the default rope with sections (transformers' `rope_config_validation`)."""
    params = cfg.get("rope_parameters")
    if isinstance(params, dict) and params and all(isinstance(v, dict) for v in params.values()):
        per_class: dict[str, Any] = params
    else:
        single = params if isinstance(params, dict) and params else cfg.get("rope_scaling") or {}
        if not isinstance(single, dict):
            raise InputError("rope_scaling must be an object or null")
        per_class = {"": single}
        if model_type in _LEGACY_LAYER_ROPES:
            (full_key, full_base), (local_key, local_base) = _LEGACY_LAYER_ROPES[model_type]
            per_class = {"full_attention": {"rope_theta": cfg.get(full_key, full_base), **single},
                         "sliding_attention": {"rope_type": "default", "rope_theta": cfg.get(local_key, local_base)}}
    fraction = cfg.get("partial_rotary_factor", cfg.get("rotary_pct")) or 1.0
    positions = _int(_get(cfg, "max_position_embeddings", "n_positions", default=0), "max_position_embeddings")
    ropes = {_rope(p, layers, fraction, cfg.get("rope_theta") or 10000.0, positions) for layers, p in per_class.items()}
    return tuple(sorted(ropes, key=repr))


def _rope(p: dict[str, Any], layers: str, fraction: Any, theta: Any, positions: int) -> Rope:
    """One config rope setting as a `Rope` (its checks), refused where it stretches a table beyond MAX_POSITIONS."""
    kind = str(p.get("rope_type", p.get("type")) or "default").lower()
    original = _int(p.get("original_max_position_embeddings") or 0, "original_max_position_embeddings")
    rope = Rope(kind="default" if kind == "mrope" else kind, factor=p.get("factor", 1.0), original_positions=original,
                rotary_fraction=p.get("partial_rotary_factor", fraction), theta=p.get("rope_theta", theta),
                sections="mrope_section" in p or kind == "mrope", layers=layers)
    stretched = (original or positions) * rope.factor if kind in ("linear", "yarn") or "deepseek" in kind else 0
    if stretched > MAX_POSITIONS:
        raise InputError(f"rope settings stretch {original or positions:,} positions by {rope.factor:g}: beyond "
                         f"{MAX_POSITIONS:,} positions: {p}")
    return rope


def _reference_sliding(cfg: dict[str, Any], outer: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Unlimited-OCR's reference sliding-window attention (R-SWA), read as full attention with a note: every prompt
    token stays cached, generated tokens beyond the last window leave transformers' cache
    (modeling_unlimited_ocr.py `UnlimitedOcrDynamicReferenceSlidingWindowLayer`), vLLM 0.33 keeps them all in its
    blocks and masks (models/unlimited_ocr.py: R-SWA is an attention mask). ("" when the config has none.)"""
    names = outer.get("architectures")
    types = cfg.get("layer_types")
    if not (isinstance(types, list) and "reference_sliding_attention" in types) and not (
            isinstance(names, list) and "UnlimitedOCRForCausalLM" in names):
        return cfg, ""
    window = cfg.get("sliding_window") or cfg.get("sliding_window_size") or outer.get("rswa_window") or 128
    note = (f"reference sliding-window attention: the prompt stays cached and generated tokens keep the last {window} "
            "of their own in transformers' cache; every layer is sized for the whole context here, as vLLM holds it "
            f"(an upper bound for transformers once over {window} tokens are generated)")
    return {**cfg, "sliding_window": None, "layer_types": None}, note


def _bailing_type(cfg: dict[str, Any]) -> str:
    """The type a "bailing_moe" config is by its architectures: V2's, V1's (also without a class named), or a
    refusal of the linear-attention hybrids."""
    names = cfg.get("architectures")
    names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    if hybrid := next((n for n in names if n in _UNMODELLED_CLASSES), None):
        _refuse_unmodelled(f"bailing_moe ({hybrid})", _UNMODELLED_CLASSES[hybrid])
    return "bailing_moe_v2" if BAILING_CLASSES["bailing_moe_v2"] in names else "bailing_moe"


def _release_code(cfg: dict[str, Any]) -> tuple[str, str]:
    """(auto class, its class in the release's own code) a DeepSeek-VL2-layout config's auto_map names: transformers
    5.24 registers no deepseek_vl_v2 type, so DeepSeek-OCR's release loads with `AutoModel` and its own
    modeling_deepseekocr.py only (("", "") when the config names none)."""
    auto_map = cfg.get("auto_map")
    if isinstance(auto_map, dict):
        for key in ("AutoModelForCausalLM", "AutoModel"):
            if isinstance(auto_map.get(key), str):
                return key, auto_map[key]
    return "", ""


def _type_of_architecture(cfg: dict[str, Any]) -> str | None:
    """The model type of the first class in the config's `architectures` that memviz knows, if any."""
    names = cfg.get("architectures")
    if not isinstance(names, list):
        return None
    return next((_BY_ARCHITECTURE[n] for n in names if isinstance(n, str) and n in _BY_ARCHITECTURE), None)


def _refuse_recurrent(cfg: dict[str, Any], model_type: str) -> None:
    """One clear error for models with recurrent or linear-attention layers: memviz would count a KV cache for
    every layer and miss their state and weights (`MODELLED_LINEAR_TYPES` are modelled)."""
    if model_type in MODELLED_LINEAR_TYPES:
        return
    types = [str(t) for t in _explicit_layer_types(cfg)]
    recurrent = [t for t in types if ("attention" not in t and t not in _SPARSE_ATTENTION_KINDS) or "linear" in t]
    field = next((f for f in _HYBRID_FIELDS if cfg.get(f)), None)
    if recurrent or field or model_type in RECURRENT_MODEL_TYPES:
        what = (f"{len(recurrent)} of {len(types)} layers are {recurrent[0]}" if recurrent
                else f"its '{field}' places recurrent layers" if field else "it is built of recurrent layers")
        raise InputError(f"{model_type}: {what}; memviz models no recurrent / linear-attention "
                         "layers but Qwen3.5 / Qwen3-Next's gated delta-nets, the Mamba2 layers of Granite-4.0-H, "
                         "Nemotron-H and Bamba, LFM2's short convolutions, Kimi Linear's delta attention, Mamba, "
                         "Falcon-Mamba and Mamba2 models' blocks and Jamba's Mamba layers (their fixed state per "
                         "sequence, their weights), so its figures would be wrong")


#: a wrapper's fields under the names its released configs use (NemotronH_Omni_Reasoning_V3_Config
#: `_legacy_field_names`, transformers 5.24: the release predates the rename), read as the standard ones
_LEGACY_WRAPPER_FIELDS = {"nemotron_h_omni": {"llm_config": "text_config", "sound_config": "audio_config",
                                              "vit_hidden_size": "vision_hidden_size"}}


def from_hf_config(cfg: dict[str, Any], name: str | None = None, source: str = "", ref: str = "",
                   processors: dict[str, dict[str, Any]] | None = None) -> Architecture:
    """Build an Architecture from a Hugging Face config dict (and the folder's processor configs, `load_processors`).

    Rules common to all types (transformers' own defaults): an explicit `head_dim`
    wins over hidden/heads; a missing `num_key_value_heads` means MHA; MoE models
    count all experts. Multimodal wrappers (gemma3, gemma4, mistral3, qwen3_vl, ...) are read from
    `text_config`, their vision / audio encoders counted by `memviz.core.towers`.
    An unknown `model_type` with the standard Llama-style fields still works and
    the assumptions made are listed in `warnings`.
    """
    if not isinstance(cfg, dict):
        raise InputError("config must be a JSON object")
    cfg, omni = omni_thinker(cfg)
    legacy = _LEGACY_WRAPPER_FIELDS.get(str(cfg.get("model_type")), {})
    cfg = {**{new: cfg[old] for old, new in legacy.items() if old in cfg and new not in cfg},
           **{key: value for key, value in cfg.items() if key not in legacy}}  # read once, under the new name
    outer = cfg
    _refuse_not_text(str(outer.get("model_type")))
    release_loader, release_code = "", ""
    if isinstance(cfg.get("text_config"), dict):
        inner = dict(cfg["text_config"])
        inner.setdefault("model_type", f"{cfg.get('model_type', 'unknown')}_text")
    elif isinstance(cfg.get("language_config"), dict):  # DeepSeek-VL2's layout (DeepSeek-OCR's release): the language
        inner = dict(cfg["language_config"])  # model apart, its type named by its class (vLLM 0.33
        inner.setdefault("model_type", _type_of_architecture(inner) or "unknown")  # DeepseekVLV2Config)
        release_loader, release_code = _release_code(cfg)
    else:
        inner = None
    if inner is not None:
        for key in ("tie_word_embeddings", "torch_dtype"):
            if key in cfg and key not in inner:
                inner[key] = cfg[key]
        cfg = inner
    model_type = str(cfg.get("model_type") or "unknown")
    if model_type == "glm4v_text":  # Glm4vTextAttention: q/k/v biased whatever attention_bias says
        cfg = {**cfg, "attention_bias": True}
    if model_type == "glm_image_text":  # GlmImageForConditionalGeneration.lm_head: vision_vocab_size rows (image
        cfg = {**cfg, "output_vocab_size": cfg.get("vision_vocab_size", 16512)}  # tokens); GlmImageTextConfig's
        cfg.setdefault("attention_bias", True)  # attention_bias defaults True
    if model_type == "bailing_moe":  # V1, V2 and the hybrids share it: the class decides (`BAILING_CLASSES`)
        model_type = _bailing_type(cfg)
    cfg = {**{new: cfg[old] for old, new in _RENAMED.get(model_type, {}).items() if old in cfg}, **cfg}
    cfg = {**_CLASS_DEFAULTS.get(model_type, {}), **cfg}
    cfg, rswa = _reference_sliding(cfg, outer)
    model_type = _ALIASES.get(model_type, model_type)
    read_as = _type_of_architecture(cfg) if model_type not in KNOWN_MODEL_TYPES else None
    if read_as:
        cfg = {**cfg, "model_type": read_as}
        model_type, given_type = read_as, model_type
    if model_type == "gemma4_unified_text":  # Gemma 4 12B's text model: Gemma 4's decoder without per-layer inputs
        cfg = {"hidden_size_per_layer_input": 0, **cfg}  # or experts (Gemma4UnifiedTextConfig has neither field)
        model_type = "gemma4_text"
    if model_type in _UNMODELLED_LAYERS and model_type not in KNOWN_MODEL_TYPES:  # before its layer kinds are read
        _refuse_unmodelled(model_type, model_type)
    _refuse_recurrent(cfg, model_type)
    if model_type not in KNOWN_MODEL_TYPES:
        _refuse_non_decoder(cfg, model_type)
    if model_type == "granitemoehybrid":
        cfg = _granite_hybrid_layers(cfg)
    if model_type == "nemotron_h":
        cfg = _nemotron_h_layers(cfg)
    if model_type == "mimo_v2_flash":
        cfg = _mimo_v2_layers(cfg)
    if model_type == "kimi_linear":
        cfg = _kimi_linear_config(cfg)
    if model_type in SHORTCONV_TYPES:
        cfg = _lfm2_layers(cfg, model_type)
    if model_type in MAMBA_TYPES | MAMBA2_ONLY_TYPES:
        cfg = _mamba_config(cfg, model_type)
    if model_type == "jamba":
        cfg = _jamba_layers(cfg)
    if model_type == "minimax_m3_vl_text":
        cfg = _minimax_m3_layers(cfg)
    if model_type == "hunyuan_v1_moe":
        cfg = _hunyuan_moe_config(cfg)
    if model_type == "gemma3n_text":  # its MLP widths may be a list: the largest stands for intermediate_size
        gemma3n = _gemma3n_fields(cfg)
        cfg = {**cfg, "intermediate_size": gemma3n["intermediate_size"]}
    if model_type == "cohere2_moe":
        cfg = _cohere2_moe_config(cfg)
    if model_type == "dbrx":
        cfg = _dbrx_config(cfg)
    if model_type == "mpt":
        cfg = _mpt_config(cfg)
    if model_type == "step3p5":
        cfg = _step3p5_config(cfg)
    if model_type == "longcat_flash":
        cfg = _longcat_flash_config(cfg)
    if model_type == "bamba":  # BambaConfig.layers_block_type: attention at attn_layer_indices, Mamba2 elsewhere
        attention = set(_int_list(cfg.get("attn_layer_indices"), "attn_layer_indices"))
        cfg = {**cfg, "layer_types": ["attention" if i in attention else "mamba"
                                      for i in range(_layer_count(cfg, "num_hidden_layers"))]}
    warnings: list[str] = [note for note in (omni, rswa) if note]
    if read_as:
        warnings.append(f"model_type '{given_type}' read as '{read_as}', the type of the architecture its config names "
                        f"({', '.join(map(str, cfg['architectures']))}), as vLLM resolves it")
    if model_type not in KNOWN_MODEL_TYPES:
        warnings.append(
            f"model_type '{model_type}' is not one memviz knows; read as a Llama-style decoder "
            "(RMSNorm, gated MLP, no biases, untied unless tie_word_embeddings is set)"
        )

    hidden = _int(_require(cfg, "hidden_size", "n_embd", "d_model"), "hidden_size")
    n_layers = _layer_count(cfg, "num_hidden_layers", "n_layer", "num_layers")
    n_heads = _int(_require(cfg, "num_attention_heads", "n_head", "num_heads"), "num_attention_heads")
    vocab = _int(_require(cfg, "vocab_size"), "vocab_size")
    if n_heads <= 0 or hidden <= 0:
        raise InputError("hidden_size and num_attention_heads must be positive")
    kv_heads = _get(cfg, "num_key_value_heads", "num_kv_heads", "n_head_kv")
    if kv_heads is None:
        kv_heads = n_heads
        if model_type not in KNOWN_MODEL_TYPES:
            warnings.append("num_key_value_heads absent: assumed multi-head attention (KV heads = attention heads)")
    if model_type == "falcon" and not cfg.get("new_decoder_architecture"):
        # FalconAttention: the old decoder has one KV head when multi_query (default True), else one per head,
        # whatever num_kv_heads says (FalconConfig fills it with the head count)
        kv_heads = 1 if cfg.get("multi_query", True) else n_heads
    kv_heads = _int(kv_heads, "num_key_value_heads")
    head_dim = _get(cfg, "head_dim")
    if head_dim is None and cfg.get("kv_lora_rank"):  # MLA: per-head widths of their own (set below)
        head_dim = _get(cfg, "qk_head_dim") or hidden // n_heads
    if head_dim is None:
        if hidden % n_heads:
            raise InputError(f"hidden_size {hidden} is not divisible by num_attention_heads {n_heads}; set head_dim")
        head_dim = hidden // n_heads
    head_dim = _int(head_dim, "head_dim")
    window = _get(cfg, "sliding_window", "attention_chunk_size")
    if window is None and model_type in ("gemma3n_text", "gemma4_text"):
        window = 512  # Gemma3nTextConfig's and Gemma4TextConfig's default
    if window is None and model_type == "dots3_note_text":  # Dots3NoteTextConfig: sliding_window_size, 512
        window = cfg.get("sliding_window_size", 512)
    if window is None and model_type == "modernbert-decoder":  # ModernBertDecoderConfig: half of ModernBERT's
        window = _int(cfg.get("local_attention", 128) or 0, "local_attention") // 2  # local_attention (both sides)
    window = _int(window, "sliding_window") if window else None

    towers, tower_warnings = encoders(outer, hidden, processors or {})
    warnings += tower_warnings
    kw: dict[str, Any] = dict(
        loader=LOADER_CLASSES.get(str(outer.get("model_type")), release_loader),
        remote_code=release_code,
        encoders=towers,
        deepstack_layers=_deepstack_layers(cfg, outer),
        name=name or str(cfg.get("_name_or_path") or model_type),
        model_type=model_type,
        vocab_size=vocab,
        hidden_size=hidden,
        num_layers=n_layers,
        num_heads=n_heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=head_dim,
        intermediate_size=_int(_get(cfg, "intermediate_size", "n_inner", "ffn_dim", default=4 * hidden), "intermediate_size"),
        max_position_embeddings=_int(_get(cfg, "max_position_embeddings", "n_positions", default=0), "max_position_embeddings"),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        qkv_bias=bool(_get(cfg, "attention_bias", default=False)),
        out_bias=bool(_get(cfg, "attention_bias", default=False)),
        mlp_bias=bool(cfg.get("mlp_bias", False)),
        hidden_act=str(_get(cfg, "hidden_activation", "hidden_act", "activation_function", "activation",
                            default=_DEFAULT_ACT.get(model_type, "silu"))),
        sliding_window=window,
        source=source,
        ref=ref,
    )
    kw.update(ropes=_ropes(cfg, model_type))
    kw.update(llama3_rope=any(r.kind == "llama3" for r in kw["ropes"]))
    if model_type not in KNOWN_MODEL_TYPES and "tie_word_embeddings" not in cfg:
        warnings.append("tie_word_embeddings absent: assumed an untied lm_head")

    if model_type in ("qwen2", "qwen2_moe"):
        kw.update(qkv_bias=True, out_bias=False)  # Qwen2Attention: q/k/v bias, o_proj without
    if model_type in ("qwen3", "qwen3_moe", "gemma3_text", "gemma3n_text", "gemma4_text", "exaone4", "exaone_moe", "hy_v3", "afmoe",
                      "flint", "dots1"):  # Dots1Attention is Qwen3's, beside DeepSeek-V3's experts (modeling_dots1.py)
        kw.update(qk_norm=True)
    if model_type == "flint":  # FlintAttention: Qwen3-MoE's with a learned sink per head in every layer
        kw.update(attention_sinks=True)
    if model_type == "solar_open":  # SolarOpenAttention (LlamaAttention's projections): o_proj without bias, no q/k
        kw.update(out_bias=False)  # norms, beside Glm4MoeMoE's experts
    if model_type == "mimo_v2_flash":
        kw.update(_mimo_v2_fields(cfg, n_heads, kv_heads, head_dim))
    if model_type == "falcon_h1":
        kw.update(_falcon_h1_fields(cfg, hidden))
    if model_type in SHORTCONV_TYPES:
        kw.update(_lfm2_fields(cfg, hidden, kw["intermediate_size"], adjust=model_type == "lfm2"))
    if model_type == "lfm3":  # Lfm3DecoderLayer's sandwich norms; Lfm3Attention's sigmoid gate, one value a head
        kw.update(norms_per_layer=4 if cfg.get("use_sandwich_norm", True) else 2,
                  head_gate=1 if cfg.get("use_attention_gate", True) else 0)
    if model_type == "minimax_m3_vl_text":
        kw.update(_minimax_m3_fields(cfg))
    if model_type == "laguna":
        kw.update(_laguna_fields(cfg, n_layers, n_heads, head_dim))
    if model_type == "bitnet":
        kw.update(sub_norms=True)
    if model_type == "diffllama":  # DiffLlamaAttention: q/k/v/o as Llama's, two softmaxes over halves of V
        kw.update(differential_lambdas=True)
    if model_type == "voxtral_realtime_text":  # VoxtralRealtimeTextAdaRmsNorm: Mistral's layer with a bias-free
        kw.update(gated_norm_rank=32)  # hidden -> 32 -> hidden MLP of the time conditioning scaling its second norm
    if model_type == "axk1":  # AXK1MoE: DeepSeek-V3's experts with a norm on their output ("A.X-K1's single delta")
        kw.update(moe_output_norm=True)
    if model_type == "beam":  # BeamAttention: q/k norms, a sigmoid gate of the query's width with a bias per head;
        kw.update(qk_norm=True, attn_output_gate=True, attn_gate_bias=True, norms_per_layer=4)  # four norms a layer
    if model_type == "ergo":  # ErgoDecoderLayer: q/k norms, four norms and two residual gates a layer, relu2 MLPs;
        # ErgoForCausalLM never ties its head
        kw.update(qk_norm=True, norms_per_layer=4, residual_gates=True, mlp_gated=False, expert_output_norms=True,
                  tie_word_embeddings=False, float32_residual=True,  # ErgoMLP: first_dense_intermediate_size wide
                  intermediate_size=_int(cfg.get("first_dense_intermediate_size", 32768), "first_dense_intermediate_size"))
    if model_type == "longcat_flash":  # LongcatFlashDecoderLayer: two attention sublayers (`_longcat_flash_config`)
        kw.update(block_layers=2, router_bias=bool(cfg.get("router_bias", False)))  # LongcatFlashTopkRouter
    if model_type in BAILING_TYPES:  # the releases' BailingMoe(V2)Attention (vLLM 0.34 bailing_moe.py alike): one
        # query_key_value biased per use_qkv_bias (or use_bias), dense (o) per use_bias, RMSNorm q/k norms over
        # head_dim with use_qk_norm, bias-free MLPs; transformers 5.25 has no class for it
        kw.update(qkv_bias=bool(cfg.get("use_qkv_bias") or cfg.get("use_bias")), out_bias=bool(cfg.get("use_bias")),
                  mlp_bias=False, qk_norm=bool(cfg.get("use_qk_norm", False)),
                  remote_code=_release_code(cfg)[1] or f"{BAILING_CLASSES[model_type]}, the release's modeling code")
    if model_type in BAILING_TYPES or model_type == "mimo_v2_flash":  # read by vLLM 0.34 bailing_moe.py / mimo_v2.py
        router_dtype = cfg.get("router_dtype" if model_type in BAILING_TYPES else "moe_router_dtype")
        kw.update(router_dtype=router_dtype if isinstance(router_dtype, str) else "")
    if cfg.get("ngram_embedders"):  # LongCat-Flash-Lite: transformers 5.25 has no class for it
        kw.update(ngram_embedders=cfg["ngram_embedders"], ngram_rows=cfg["ngram_rows"],
                  remote_code=_release_code(cfg)[1] or "LongcatFlashNgramForCausalLM, the release's modeling code")
    if model_type == "minicpm5_moe":  # MiniCPM5MoeAttention.q_gate_proj: the queries and a sigmoid gate on the output
        kw.update(attn_output_gate=True)
    if model_type == "kolibri1_1":  # Kolibri1's layers; its indexers have no weights; the dense MLPs of
        kw.update(qk_norm=True, norms_per_layer=4,  # mlp_only_layers are mlp_only_intermediate_size wide
                  intermediate_size=_int(cfg.get("mlp_only_intermediate_size", 3584), "mlp_only_intermediate_size"))
    if model_type == "kolibri1":  # Kolibri1DecoderLayer: q/k norms; input, post-attention, post-self-attention and
        kw.update(qk_norm=True, norms_per_layer=4)  # post-MLP norms
    if model_type == "afmoe":  # AfmoeAttention: gate_proj, a query-sized output gate; AfmoeDecoderLayer: four norms
        kw.update(attn_output_gate=True, norms_per_layer=4)
    if model_type == "cosmos3_edge_text":  # Cosmos3EdgeTextModel is LlamaModel with fc1 / fc2 (relu2), not gated
        kw.update(mlp_gated=False)
    if model_type == "muse_glimmer_text":  # MuseGlimmerTextAttention: Afmoe's output gate, its q/k norms without a
        kw.update(attn_output_gate=True, norms_per_layer=4)  # scale; Gemma 2's four norms a layer (modular_muse_glimmer)
    if model_type == "muse_spark_text":  # MuseSparkTextDecoderLayer: Muse Glimmer's attention; three norms with a
        # weight (the post-attention one has none), two residual gates; a sigmoid router with its score bias
        # (MuseSparkTopkRouter), the experts behind a projection (MuseSparkMoE)
        kw.update(attn_output_gate=True, norms_per_layer=3, residual_gates=True,
                  moe_hidden_size=_int(cfg.get("moe_hidden_size", hidden), "moe_hidden_size"))
    if model_type in GATED_DELTANET_TYPES:
        kw.update(_gated_deltanet_fields(cfg, model_type, hidden, n_heads))
    if model_type == "kimi_linear":  # KimiLinearDeltaAttention: linear_num_heads heads of linear_head_dim for q, k, v
        heads, width = cfg["linear_num_heads"], cfg["linear_head_dim"]
        kw.update(linear_mixer=KIMI_DELTA, linear_k_heads=heads, linear_v_heads=heads, linear_k_head_dim=width,
                  linear_v_head_dim=width, linear_conv_kernel=cfg["linear_conv_kernel_dim"])
    if model_type == "nemotron_h":
        kw.update(_nemotron_h_fields(cfg))
    if model_type in MAMBA_TYPES:
        kw.update(_mamba_fields(cfg, model_type))
    if model_type in MAMBA2_ONLY_TYPES:
        kw.update(_mamba2_only_fields(cfg))
    if model_type == "jamba":
        kw.update(_jamba_fields(cfg, hidden))
    if model_type in ("granitemoehybrid", "bamba"):  # BambaDecoderLayer: the same Mamba2 mixer, a gated MLP
        kw.update(_mamba2_fields(cfg, hidden))
    if model_type == "granitemoehybrid" and not cfg.get("num_local_experts"):  # dense: shared_mlp is its MLP
        kw.update(intermediate_size=_int(cfg.get("shared_intermediate_size", 1024), "shared_intermediate_size"))
    if model_type == "glm4_moe":  # Glm4MoeAttention: q/k/v bias per attention_bias, o_proj without; optional q/k norm
        kw.update(out_bias=False, qk_norm=bool(cfg.get("use_qk_norm", False)))
    if model_type == "glm4":  # Glm4Attention: q/k/v bias per attention_bias, o_proj without; Glm4DecoderLayer has
        # input, post-attention, post-self-attention and post-MLP norms; gate_up_proj holds gate and up
        kw.update(out_bias=False, norms_per_layer=4)
    if model_type in TIED_BY_DEFAULT:
        kw.update(tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)))
    if model_type in ("gemma2", "gemma3_text", "gemma3n_text", "gemma4_text"):
        kw.update(norms_per_layer=4)  # pre/post attention and pre/post feed-forward norms
    if model_type == "phi3":
        pass  # fused qkv_proj / gate_up_proj hold the same elements as split ones
    if model_type == "gpt2":
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                  learned_positions=_int(_get(cfg, "n_positions", default=1024), "n_positions"))
    if model_type == "mpt":  # MptMLP: up / down, no gate
        kw.update(mlp_gated=False)
    if model_type == "gpt_bigcode":  # GPTBigCodeAttention: with multi_query (StarCoder, SantaCoder) one K/V head
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                  num_kv_heads=1 if cfg.get("multi_query", True) else n_heads,
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                  learned_positions=_int(_get(cfg, "n_positions", default=1024), "n_positions"))
    if model_type == "gpt_neo":  # GPTNeoSelfAttention: q/k/v without bias, out_proj with; its local layers' window
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=False, out_bias=True, mlp_bias=True,  # masks scores only:
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),  # DynamicCache keeps every token
                  learned_positions=kw["max_position_embeddings"] or 2048)
    if model_type == "bloom":  # BloomBlock: LayerNorms, fused biased qkv and dense, dense_h_to_4h / 4h_to_h; ALiBi;
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,  # a LayerNorm over
                  embedding_norm=True, tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)))  # the embedding
    if model_type == "chameleon":  # ChameleonAttention (transformers 5.24 modeling_chameleon.py): Llama's layout
        # with q / k LayerNorms (ChameleonLayerNorm) holding a weight and a bias per head channel
        kw.update(qk_norm=True, qk_norm_full=True, qk_norm_bias=True)
    if model_type == "modernbert-decoder":  # ModernBertDecoderForCausalLM (transformers 5.24
        # modeling_modernbert_decoder.py): LayerNorms (biased with norm_bias), one over the token embedding, none
        # before layer 0's attention; Wi a gated (GLU) MLP; a prediction head (dense, activation, LayerNorm) before
        # the decoder, tied to the embedding and biased (decoder_bias); multi-head attention
        kw.update(norm_bias=bool(cfg.get("norm_bias", False)), embedding_norm=True, first_attn_norm=False,
                  head_transform=True, head_transform_bias=bool(cfg.get("classifier_bias", False)),
                  lm_head_bias=bool(cfg.get("decoder_bias", True)),
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)))
    if model_type in ("gptj", "codegen"):  # GPTJBlock / CodeGenBlock: one LayerNorm before parallel attention (no
        kw.update(mlp_gated=False, norm_bias=True, norms_per_layer=1, mlp_bias=True,  # biases) and fc_in / fc_out;
                  lm_head_bias=True)  # the LM head biased (GPTJForCausalLM, CodeGenForCausalLM)
    if model_type == "gpt_neox":
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)))
    if model_type == "opt":
        if _get(cfg, "word_embed_proj_dim", default=hidden) != hidden:
            raise InputError("OPT models with word_embed_proj_dim != hidden_size (opt-350m) are not supported")
        bias = bool(cfg.get("enable_bias", True))
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=bias, out_bias=bias, mlp_bias=bias,
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                  learned_positions=kw["max_position_embeddings"] + 2)  # OPTLearnedPositionalEmbedding offset 2
    if model_type == "falcon":
        bias = bool(cfg.get("bias", False))
        parallel_single_norm = cfg.get("parallel_attn", True) and not cfg.get("new_decoder_architecture", False)
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=bias, out_bias=bias, mlp_bias=bias,
                  norms_per_layer=1 if parallel_single_norm else 2,
                  intermediate_size=_int(_get(cfg, "ffn_hidden_size", default=4 * hidden), "ffn_hidden_size"),
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)), alibi_mask=bool(cfg.get("alibi")))
    if model_type == "gpt_oss":
        kw.update(qkv_bias=True, out_bias=True, attention_sinks=True, router_bias=True, expert_bias=True)
    if model_type == "starcoder2":  # Starcoder2MLP c_fc/c_proj, LayerNorms with bias, use_bias on every linear
        bias = bool(cfg.get("use_bias", True))
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=bias, out_bias=bias, mlp_bias=bias,
                  tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)))
    if model_type == "persimmon":  # PersimmonAttention: fused biased query_key_value and dense, q/k LayerNorms;
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,  # a relu2 MLP
                  qk_norm=bool(cfg.get("qk_layernorm", True)))
    if model_type == "phi":  # PhiDecoderLayer: one LayerNorm, parallel attention (q/k/v/dense) and fc1/fc2, all biased;
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True, norms_per_layer=1,
                  qk_norm=bool(cfg.get("qk_layernorm", False)), lm_head_bias=True)  # PhiForCausalLM's head biased
    if model_type in ("arcee", "apertus"):  # up/down MLP (relu2; xIELU), Apertus with q/k norms
        kw.update(mlp_gated=False, qk_norm=model_type == "apertus")
    if model_type in ("apertus", "glm4") and cfg.get("output_vocab_size"):  # Apertus1p5TextForCausalLM's pruned
        kw.update(output_vocab_size=_int(cfg["output_vocab_size"], "output_vocab_size"))  # head; GLM-Image's
    if model_type == "jais2":  # Jais2Config / Jais2DecoderLayer: LayerNorms, biases on by default, a relu2 up/down MLP
        kw.update(mlp_gated=False, norm_bias=True, qkv_bias=bool(cfg.get("attention_bias", True)),
                  out_bias=bool(cfg.get("attention_bias", True)), mlp_bias=bool(cfg.get("mlp_bias", True)))
    if model_type == "nanochat":  # NanoChatRMSNorm holds no weight (q/k norms included); fc1 / fc2 relu2 MLP
        kw.update(mlp_gated=False, weightless_norms=True)
    kw.update(_family_fields(cfg, model_type))
    if model_type == "mllama_text_model":
        kw.update(_mllama_fields(outer, vocab))
    if model_type == "molmo2_text":
        kw.update(_molmo2_fields(cfg, vocab))

    if model_type == "gemma4_text":
        kw.update(_gemma4_fields(cfg, _layer_types(cfg, model_type, n_layers, window), head_dim, kv_heads))
    elif model_type == "gemma3n_text":
        kw.update(gemma3n)
    else:  # mixture of experts
        kw.update(_moe_fields(cfg, model_type, n_layers))
    if model_type == "llama4_text":  # Llama4TextMLP (dense layers) uses intermediate_size_mlp; experts intermediate_size
        kw.update(intermediate_size=_int(cfg.get("intermediate_size_mlp", kw["intermediate_size"]),
                                         "intermediate_size_mlp"))

    # multi-head latent attention (DeepSeek-V2/V3); a DeepSeek-V2 config without it (DeepSeek-OCR's use_mla false, no
    # rope or nope widths) runs plain multi-head attention (vLLM 0.33 deepseek_v2.py `DeepseekV2DecoderLayer`)
    plain = cfg.get("use_mla") is False or cfg.get("qk_rope_head_dim") == cfg.get("qk_nope_head_dim") == 0
    if cfg.get("kv_lora_rank") and not plain:
        rope = _int(_require(cfg, "qk_rope_head_dim"), "qk_rope_head_dim")
        nope = _int(_require(cfg, "qk_nope_head_dim"), "qk_nope_head_dim")
        q_lora = cfg.get("q_lora_rank")
        kw.update(kv_lora_rank=_int(cfg["kv_lora_rank"], "kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope,
                  q_lora_rank=_int(q_lora, "q_lora_rank") if q_lora else None,
                  head_dim=nope + rope, v_head_dim=_int(_require(cfg, "v_head_dim"), "v_head_dim"),
                  num_kv_heads=n_heads)

    if cfg.get("index_head_dim") and model_type in ("deepseek_v32", "glm_moe_dsa", "hy_v4", "mistral_large4_text"):
        kw.update(_indexer_fields(cfg, n_layers, model_type))
    if model_type == "axk2":
        kw.update(_axk2_fields(cfg, n_layers))
    if model_type == "mistral_large4_text":
        kw.update(_mistral_large4_fields(cfg, n_layers))
    if model_type == "hy_v4":  # HYV4Attention: a gate on the attention's output, a sink per head; HYV4HyperConnection
        kw.update(attn_output_gate=True, attention_sinks=True,
                  hyper_streams=_int(cfg.get("hc_mult", 4), "hc_mult"), hyper_comb=False)

    # a multimodal wrapper's quantization_config sits beside its text_config
    quantized = cfg if "quantization_config" in cfg else outer
    kw["native_format"], quantization_notes = native_format(quantized)
    warnings += quantization_notes
    if kw["native_format"]:
        kw["native_quantizer"] = str(quantized["quantization_config"].get("quant_method", "")).lower()
        kw["native_act_order"] = quantized["quantization_config"].get("desc_act") is True
        kw["native_asymmetric"] = kw["native_format"].startswith("gptq-") \
            and quantized["quantization_config"].get("sym") is False
        kw["native_linear_class"] = str(quantized["quantization_config"].get("linear_class", "bitlinear")) \
            if kw["native_format"] == "bitnet" else ""
    if model_type == "deepseek_v4":  # every layer's window (its compressed entries: `compress_ratios`)
        kw.update(_deepseek_v4_fields(cfg, n_layers))
        cfg = {**cfg, "layer_types": ["sliding_attention"] * n_layers}
    kw["layer_types"] = _layer_types(cfg, model_type, n_layers, kw["sliding_window"])
    mtp = cfg.get("num_nextn_predict_layers") or cfg.get("mtp_num_hidden_layers") or cfg.get("num_mtp_layers") or 0
    kw["mtp_layers"] = _int(mtp, "num_nextn_predict_layers")
    if model_type == "step3p5":
        kw.update(_step3p5_fields(cfg, n_layers, kw["num_heads"], kw["head_dim"], kw["layer_types"]))
    if model_type == "dots3_note_text":
        kw.update(_dots3_fields(cfg, kw))
    if model_type == "kolibri1_1":
        kw["kv_sources"] = _kolibri1_1_kv_sources(cfg, kw["layer_types"])
        kw["token_index_budget"] = sum(_int(cfg.get(key, default), key) for key, default in (
            ("index_topk", 2048), ("index_num_local_tokens", 128), ("index_num_sink_tokens", 8)))
    if SLIDING not in kw["layer_types"]:
        kw["sliding_window"] = None
    kw["warnings"] = tuple(warnings)
    return Architecture(**kw)


#: Kolibri1_1Config's default `kv_source_layers` for up to ten indexed layers, as indices among the indexed layers:
#: the 2nd and 3rd read the 1st's K/V, the 7th to 9th the 6th's and the 10th the 1st's
_KOLIBRI1_1_SOURCES = (0, 0, 0, 3, 4, 5, 5, 5, 5, 0)


def _kolibri1_1_kv_sources(cfg: dict[str, Any], kinds: tuple[str, ...]) -> tuple[int, ...]:
    """Kolibri 1.1's `kv_source_layers` (transformers 5.25 Kolibri1_1Config.__post_init__): listed, or its release's
    layout over the indexed (full) layers; more than ten indexed layers must list them."""
    listed = cfg.get("kv_source_layers")
    if listed is not None:
        sources = _int_list(listed, "kv_source_layers")
        for i, source in enumerate(sources[:len(kinds)]):
            if kinds[i] == SLIDING and source != i:
                raise InputError(f"kv_source_layers: sliding-attention layer {i} cannot read the K/V of another "
                                 f"layer ({source})")
        return tuple(sources)
    indexed = [i for i, kind in enumerate(kinds) if kind == FULL]
    if len(indexed) > len(_KOLIBRI1_1_SOURCES):
        raise InputError(f"kolibri1_1: the default kv_source_layers covers {len(_KOLIBRI1_1_SOURCES)} indexed-attention "
                         f"layers, this config has {len(indexed)}: list kv_source_layers")
    sources = list(range(len(kinds)))
    for layer, source in zip(indexed, _KOLIBRI1_1_SOURCES, strict=False):  # up to ten indexed layers
        sources[layer] = indexed[source]
    return tuple(sources)


def native_format(cfg: dict[str, Any]) -> tuple[str, list[str]]:
    """(the memviz weight format a pre-quantized checkpoint is stored in, from its `quantization_config`, and what
    that format leaves out); ("", [why]) for a quantization memviz has no format for, ("", []) for a 16-bit
    checkpoint. Names: transformers' `quant_method`s, compressed-tensors' schemes, NVIDIA ModelOpt's `quant_algo`."""
    q = cfg.get("quantization_config")
    if not isinstance(q, dict):
        return "", []
    method, bits = str(q.get("quant_method", "")).lower(), q.get("bits", 4)
    if method == "compressed-tensors":
        return _compressed_tensors_format(q)
    if method == "modelopt":
        nested = q.get("quantization")
        algo = str(q.get("quant_algo") or (nested.get("quant_algo") if isinstance(nested, dict) else "") or "").upper()
        fmt = {"FP8": "fp8", "NVFP4": "nvfp4"}.get(algo, "")  # per-tensor FP8 scales; NVFP4's groups of 16
        return fmt, [] if fmt else [f"ModelOpt quant_algo {algo or '?'} has no memviz weight format: weights are "
                                    "estimated in 16 bit unless you choose one"]
    if method == "mxfp4":
        return "mxfp4-moe", []
    if method == "bitnet":  # BitNetQuantConfig: packed ternary weights offline; "online" ones are full precision
        return ("bitnet", []) if q.get("quantization_mode", "offline") == "offline" else ("", [])
    if method == "fp8" and "fp4" in (str(q.get("expert_dtype", "")), str(cfg.get("expert_dtype", ""))):
        return "fp8-block-mxfp4-moe", []  # DeepSeek-V4's release: FP4 experts (DeepseekV4Config moves expert_dtype)
    if method == "fp8":
        return ("fp8-block" if q.get("weight_block_size") else "fp8"), []
    if method == "fbgemm_fp8":
        return "fp8-channel", []
    if method == "auto-round":
        return _auto_round_format(q)
    if (method, bits) in (("awq", 4), ("gptq", 4), ("gptq", 8)):
        return f"{method}-int{bits}", _group_note(method, q.get("group_size", GPTQ_GROUP))
    if method == "bitsandbytes":
        if q.get("load_in_8bit"):
            return "llm-int8", []
        if q.get("bnb_4bit_quant_type") == "fp4":
            return "bnb-fp4", []
        return ("bnb-nf4-dq" if q.get("bnb_4bit_use_double_quant") else "bnb-nf4"), []
    return "", [f"quantization_config {method or '?'}{f' {bits}-bit' if method in ('awq', 'gptq') else ''} has no "
                "memviz weight format: weights are estimated in 16 bit unless you choose one"]


GPTQ_GROUP = 128  # the group size of memviz's awq-int4 / gptq-int4 / gptq-int8 formats


def _group_note(method: str, group: Any) -> list[str]:
    """A note where an AWQ / GPTQ checkpoint's groups are not the 128 memviz's formats count (-1: one a row)."""
    if group == GPTQ_GROUP:
        return []
    return [f"{method.upper()} group_size {group} read as groups of {GPTQ_GROUP}: its scales and zero points take "
            "another share of the weights (import its safetensors headers for the exact bytes)"]


def _auto_round_format(q: dict[str, Any]) -> tuple[str, list[str]]:
    """The memviz format of an AutoRound checkpoint (quant_method "auto-round"), read as vLLM 0.34 reads it
    (`quantization/inc/inc.py` `INCConfig.from_config`: data_type "int" by default, packing_format
    "auto_round:auto_gptq" by default): integers packed as GPTQ's (qweight, qzeros, scales; intel/auto-round 0.16
    `export_to_autoround/export.py` packs them with `qlinear_torch_zp.QuantLinear`, which stores no g_idx) or as
    AWQ's ("auto_round:auto_awq"). Other data types and widths are named."""
    bits, group = q.get("bits", 4), q.get("group_size", GPTQ_GROUP)
    data_type, packing = str(q.get("data_type", "int")), str(q.get("packing_format") or "auto_round:auto_gptq")
    method = "awq" if "awq" in packing else "gptq"
    if data_type != "int" or (method, bits) not in (("awq", 4), ("gptq", 4), ("gptq", 8)):
        return "", [f"AutoRound {data_type} {bits}-bit ({packing}) has no memviz weight format: weights are "
                    "estimated in 16 bit unless you choose one"]
    fmt, notes = f"{method}-int{bits}", _group_note(method, group)
    if method == "gptq":
        notes.append("AutoRound's GPTQ packing stores no g_idx: its files are 4 bytes an input row smaller than "
                     f"gptq-int{bits} counts (vLLM and the Marlin kernels load none either way)")
    extra = q.get("extra_config")
    kept = [str(m) for m, c in extra.items() if isinstance(c, dict) and c.get("bits", bits) >= 16
            and not _IGNORED_ANYWAY.search(str(m)) and "norm" not in str(m)] if isinstance(extra, dict) else []
    return fmt, notes + _kept_note(kept, fmt)  # its extra_config's overrides (norms are never quantized anyway)


#: modules a compressed-tensors `ignore` list may keep in 16 bit that memviz's formats keep so too (the routers:
#: "re:.*mlp.gate$", "re:.*shared_expert_gate$")
_IGNORED_ANYWAY = re.compile(r"lm_head|embed|router|gate\$?$|vision|visual|audio|mm_projector|multi_modal", re.I)


def _compressed_tensors_format(q: dict[str, Any]) -> tuple[str, list[str]]:
    """The memviz format of a compressed-tensors checkpoint (llm-compressor; compressed-tensors 0.20.1
    quantization/quant_scheme.py presets) from its first config group's weight arguments: FP8 per tensor, per
    channel or in 128 x 128 blocks; INT8 per channel (W8A8); INT4 in groups (W4A16); FP4 in groups of 16 (NVFP4) or
    32 (MXFP4). Other schemes, and an `ignore` list keeping layers memviz's format quantizes, are named."""
    groups = q.get("config_groups")
    weights = next((g.get("weights") for g in groups.values() if isinstance(g, dict)), None) \
        if isinstance(groups, dict) else None
    if not isinstance(weights, dict):
        return "", ["compressed-tensors config without weight arguments: weights are estimated in 16 bit"]
    bits, kind = weights.get("num_bits"), str(weights.get("type", "int"))
    strategy, group = str(weights.get("strategy", "")), weights.get("group_size")
    scheme = f"{kind}{bits} {strategy}" + (f" {group}" if group else "")
    fmt = {("float", 8, "tensor"): "fp8", ("float", 8, "channel"): "fp8-channel", ("float", 8, "block"): "fp8-block",
           ("int", 8, "channel"): "int8", ("int", 4, "group"): "w4a16", ("float", 4, "tensor_group"): "nvfp4",
           ("float", 4, "group"): "mxfp4"}.get((kind, bits, strategy), "")
    notes = []
    if not fmt:
        return "", [f"compressed-tensors scheme {scheme} has no memviz weight format: weights are estimated in 16 "
                    "bit unless you choose one"]
    if fmt in ("w4a16", "nvfp4", "mxfp4") and group != {"w4a16": 128, "nvfp4": 16, "mxfp4": 32}[fmt]:
        notes.append(f"compressed-tensors scheme {scheme} read as {fmt}, whose groups differ: its scales take "
                     "another share of the weights")
    if fmt == "w4a16" and weights.get("symmetric") is False:
        notes.append("asymmetric INT4: the packed zero points (half a byte a group) are not counted")
    ignore = q.get("ignore")
    kept = [str(m) for m in ignore if not _IGNORED_ANYWAY.search(str(m))] if isinstance(ignore, list) else []
    return fmt, notes + _kept_note(kept, fmt)


def _kept_note(kept: list[str], fmt: str) -> list[str]:
    """A note naming the modules a checkpoint keeps in 16 bit that memviz's `fmt` quantizes (none: no note)."""
    if not kept:
        return []
    return [f"the checkpoint keeps {', '.join(kept[:3])}{' ...' if len(kept) > 3 else ''} in 16 bit, which {fmt} "
            "quantizes: import its safetensors headers for the exact bytes"]


def from_config_path(path: str | Path) -> Architecture:
    """Architecture from a `config.json` file or a model folder holding one."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    return from_hf_config(load_config(p), name=folder.name or None, source=str(p), ref=str(folder),
                          processors=load_processors(folder))


def _encoder_row(row: list[Any]) -> Encoder:
    """An encoder as `Architecture.to_dict` writes it: [modality, family, parameters], for the towers whose
    forward memviz sizes their shape (sessions written before it have three fields), for one read from an
    mmproj file its stored bytes and the file, for one with elements transformers keeps float32 their count, and
    whether it keeps them so in a bfloat16 model too."""
    if len(row) not in (3, 4, 6, 7, 8) or len(row) == 8 and not isinstance(row[7], bool):
        raise ValueError("an encoder row has three, four, six, seven or eight fields (the eighth true or false)")
    shape = tuple(int(v) for v in row[3]) if len(row) >= 4 else ()
    stored, file = (int(row[4]), str(row[5])) if len(row) >= 6 else (0, "")
    return Encoder(str(row[0]), str(row[1]), int(row[2]), shape, stored, file, int(row[6]) if len(row) >= 7 else 0,
                   len(row) == 8 and row[7])

"""What compiling the model adds to vLLM's profile run on a start without a compile cache (vllm-project/vllm 0.19.0
and 0.34.0, torch 2.9+, read from their PyPI wheels and torch's `_inductor` sources).

vLLM compiles the model at its first forward, the profile run's (`compilation/decorators.py` "Start compiling
function", `backends.py` "Cache the graph of compile range ... for later use"). From 0.12 its Inductor config turns on
combo kernels and their benchmark (`config/compilation.py`: `combo_kernels`, `benchmark_combo_kernel` when torch is
2.9 or newer); Inductor benchmarks each candidate kernel on arguments it allocates for the purpose
(`torch/_inductor/codegen/triton.py` `codegen_kernel_benchmark`: `rand_strided` of every buffer the kernel reads,
graph inputs included). The first pipeline stage compiles the token embedding (VocabParallelEmbedding runs as
compiled code: "disabled custom ops: ... vocab_parallel_embedding"), so its gather kernel is benchmarked on a random
copy of the rank's embedding table, beside its output rows.

vLLM 0.19 on H100s (llm-d-planner's sweep, tests/data/published/vllm_logs.json): Llama-3.1-8B's first pipeline stage
printed 1.10 GiB of profile peak at PP 2 and 4 (its forward about 0.9), its fp32 run on one GPU 2.21 GiB (above its
sampler step), gpt-oss-20b on an A100 at 2,048 batched tokens implies 1.24 GiB with its non-torch memory: the rank's
table (128,256 or 201,088 rows, padded to 64, x the hidden size) and two rows of the batch's tokens x the hidden size
in the model dtype, 1.10, 2.21 and 1.10 GiB (`BENCHMARK_TOKEN_ROWS`, fitted to these three).

Where it does not apply: a multimodal model takes its embeddings outside the compiled graph (`supports_mm_inputs`:
the runner passes inputs_embeds); enforce_eager compiles nothing; a start that finds vLLM's compile cache ("Directly
load the compiled graph(s) ...") runs no benchmark (option `cold_compile` off); releases before 0.12 (torch 2.8)
had no combo-kernel benchmark; 0.34's extensible KV cache measures its transient peak from the warm-up on, after the
profile run (`gpu_worker.py` `_compile_or_warm_up_model`: `reset_peak_memory_stats`), so only a profile-sized pool
sees it.
"""

from __future__ import annotations

from memviz.core.arch import Architecture

#: VocabParallelEmbedding pads the vocabulary to a multiple of this (`DEFAULT_VOCAB_PADDING_SIZE`)
VOCAB_PADDING = 64
#: rows of batch tokens x hidden size beside the table copy at the peak (the gather's output and one more: fitted,
#: the bf16 and fp32 logs above agree to their 0.01 GiB)
BENCHMARK_TOKEN_ROWS = 2


def embedding_benchmark_bytes(a: Architecture, tp: int, tokens: int, act_bytes: float) -> float:
    """Bytes the embedding kernel's benchmark holds on a first-stage rank: the rank's table and the token rows."""
    rows = -(-a.vocab_size // VOCAB_PADDING) * VOCAB_PADDING // tp
    return float((rows + BENCHMARK_TOKEN_ROWS * tokens) * a.hidden_size * act_bytes)

"""The fit matrix shows the core's verdicts, largest context and batch, and speed bound for every pair."""

import math

from memviz.core.estimate import Scenario, estimate
from memviz.core.fit import fit_matrix, max_batch, max_context, needed_bytes
from memviz.core.gpus import get_gpu
from memviz.core.presets import get_preset
from memviz.gui.main_window import MainWindow


def test_fit_matrix_cells_are_the_solvers_answers():
    a = get_preset("llama-3.1-8b").architecture()
    scs = [Scenario(context_tokens=8192), Scenario(weight_format="awq-int4", engine="vllm", context_tokens=8192)]
    gpus = [get_gpu("rtx4090"), get_gpu("h100-80g")]
    ests = [estimate(a, sc) for sc in scs]
    cells = fit_matrix(ests, [g.key for g in gpus])
    for est, row in zip(ests, cells, strict=True):
        for gpu, c in zip(gpus, row, strict=True):
            assert c.max_context == max_context(a, est.scenario, gpu) and c.max_batch == max_batch(a, est.scenario, gpu)
            assert (c.verdict == "does not fit") == (needed_bytes(est) > c.budget_bytes)
            assert c.decode_tokens_per_s_max > 0
    longest = max_context(a, Scenario(batch=4), get_gpu("rtx4090"))  # the largest context that fits: tight
    tight = fit_matrix([estimate(a, Scenario(context_tokens=longest, batch=4))], ["rtx4090"])[0][0]
    assert tight.verdict == "tight" and 0.9 < tight.needed_bytes / tight.budget_bytes <= 1


def test_fit_tab_shows_every_scenario_on_every_gpu(qtbot):
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.show()
    w.tabs.setCurrentWidget(w.fit_view)
    w._refresh_visible()
    table = w.fit_view.table
    assert table.rowCount() == len(w.session.scenarios) and table.columnCount() == len(w.session.gpus)
    assert all(table.item(r, c).text().split(":")[0] in ("✓ fits", "~ tight", "✗ does not fit")
               for r in range(table.rowCount()) for c in range(table.columnCount()))
    assert "tokens/s (bound)" in table.item(0, 0).text()


def test_entered_vram_several_gpus_apple_and_cpu_ram_columns():
    from memviz.core.fit import capacity_bytes

    a = get_preset("llama-3.1-70b").architecture()
    est = estimate(a, Scenario(weight_format="bf16", engine="vllm", context_tokens=8192, gpu_memory_utilization=0.9))
    entered, one, four, apple, cpu = fit_matrix([est], ["vram:48GiB", "h100-80g", "h100-80gx4", "m3-max-128g",
                                                      "cpu-ram-64g"])[0]
    assert entered.budget_bytes == math.ceil(0.9 * 48 * 2**30) and entered.decode_tokens_per_s_max is None
    assert one.verdict == "does not fit" and four.verdict == "fits" and four.gpu == "4× H100 SXM 80GB"
    assert four.needed_bytes < one.needed_bytes / 3  # tensor parallel over 4: a quarter of the weights each
    assert apple.budget_bytes == math.ceil(0.9 * 96 * 2**30)  # Metal's 3/4 of 128 GiB, then vLLM's 0.9
    assert capacity_bytes(get_gpu("m3-max-128g"), Scenario(engine="llamacpp", kv_format="fp16"), a) == 96 * 2**30
    assert cpu.verdict == "does not fit" and cpu.decode_tokens_per_s_max > 0


def test_breakdown_names_the_decode_bound_on_each_gpu_as_a_bound():
    from memviz.core.speed import speed_bounds
    from memviz.gui.breakdown import breakdown_rows

    est = estimate(get_preset("llama-3.1-8b").architecture(), Scenario(context_tokens=8192))
    rows = {r[0]: r for r in breakdown_rows(est, __import__("memviz.core.units", fromlist=["Unit"]).Unit.GiB,
                                            ("rtx4090", "h100-80g"))}
    row = rows["decode speed bound on RTX 4090 24GB"]
    assert row[3] == "bound" and row[1] == f"≤ {speed_bounds(est, get_gpu('rtx4090')).decode_tokens_per_s_max:,.0f} tokens/s"
    assert "decode speed bound on H100 SXM 80GB" in rows


def test_breakdown_shows_the_weight_op_offload_copies_for_a_partial_offload():
    from memviz.core.units import Unit, format_bytes
    from memviz.gui.breakdown import breakdown_rows

    a = get_preset("llama-3.1-70b").architecture()
    est = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", gpu_layers=40))
    rows = {r[0]: r for r in breakdown_rows(est, Unit.GiB)}
    row = rows["weights copied in by op offload"]
    assert row[2] == format_bytes(est.engine_facts["offload_copy_bytes"], Unit.GiB, 3) and row[3] == "exact"
    full = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16"))
    assert "weights copied in by op offload" not in {r[0] for r in breakdown_rows(full, Unit.GiB)}


def test_breakdown_names_vllms_cuda_graph_estimate():
    from memviz.core.units import Unit, format_bytes
    from memviz.gui.breakdown import breakdown_rows

    a = get_preset("llama-3.1-8b").architecture()
    profiled = {"extensible_kv_cache": False}
    est = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options=profiled))
    row = {r[0]: r for r in breakdown_rows(est, Unit.GiB)}["CUDA graphs (vLLM's estimate)"]
    assert row[2] == format_bytes(est.engine_facts["cudagraph_bytes"], Unit.GiB, 3) and row[3] == "formula"
    measured = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192))
    rows = {r[0]: r for r in breakdown_rows(measured, Unit.GiB)}
    assert "measured before the extensible KV cache is sized" in rows["CUDA graphs"][4]
    assert rows["left free beside the pool"][2] == format_bytes(measured.engine_facts["kv_left_free_bytes"], Unit.GiB, 3)
    eager = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                                 options=profiled | {"enforce_eager": True}))
    assert "CUDA graphs (vLLM's estimate)" not in {r[0] for r in breakdown_rows(eager, Unit.GiB)}
    old = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                               options=profiled | {"estimate_cudagraphs": False}))
    row = {r[0]: r for r in breakdown_rows(old, Unit.GiB)}["CUDA graphs captured after the pool"]
    assert row[2] == format_bytes(old.engine_facts["graphs_after_pool_bytes"], Unit.GiB, 3)


def test_breakdown_names_where_llama_servers_default_fit_would_start_a_scenario_too_big_for_its_gpu():
    from memviz.core.units import Unit
    from memviz.gui.breakdown import breakdown_rows

    a = get_preset("llama-3.1-70b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", kv_format="fp16", context_tokens=32768, gpu="rtx4090")
    row = {r[0]: r for r in breakdown_rows(estimate(a, sc), Unit.GiB)}["llama-server's default --fit"]
    assert row[4].startswith("would start it with -ngl 35: 35 of 80 layers on the GPU")
    fitted = estimate(a, sc.with_changes(options={"fit": True}))
    assert "llama-server's default --fit" not in {r[0] for r in breakdown_rows(fitted, Unit.GiB)}
    assert {r[0]: r for r in breakdown_rows(fitted, Unit.GiB)}["placement by --fit"][4].startswith("-ngl 35:")


def test_breakdown_kv_inputs_name_gemma4s_full_layers_and_the_layers_caching_nothing():
    import json
    from pathlib import Path

    from memviz.core.arch import from_hf_config
    from memviz.core.units import Unit
    from memviz.gui.breakdown import breakdown_rows

    cfg = json.loads((Path(__file__).parents[1] / "data" / "llamacpp" / "configs" / "gemma4-ondevice.json").read_text())
    est = estimate(from_hf_config(cfg), Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096))
    kv = next(r for r in breakdown_rows(est, Unit.GiB) if r[0] == "kv_cache")
    assert "L=6, Hkv=1, D=64 (full layers Hkv=1, D=128; last 3 layers reuse K/V)" in kv[4]


def test_breakdown_rows_of_a_multimodal_model_add_up_to_its_weights():
    """The tensor groups and the vision encoder's row together are the weights of one GPU; an engine that does not
    load the encoder says so in its row."""
    from memviz.core.estimate import Scenario, estimate
    from memviz.core.presets import get_preset
    from memviz.core.units import Unit
    from memviz.gui.breakdown import breakdown_rows

    a = get_preset("gemma-3-27b").architecture()
    est = estimate(a, Scenario(engine="transformers", context_tokens=4096))
    rows = [r for r in breakdown_rows(est, Unit.GiB) if r[0].startswith("weights: ")]
    assert "weights: vision encoder" in {r[0] for r in rows}
    assert sum(int(r[1].replace(",", "")) for r in rows) == est.bytes["weights"]
    est = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096))
    row = next(r for r in breakdown_rows(est, Unit.GiB) if r[0] == "weights: vision encoder")
    assert row[2] == "not loaded" and "mmproj" in row[4]


def test_breakdown_names_the_latent_and_the_indexer_keys_a_sparse_attention_model_caches():
    """The KV row's inputs say what a layer caches where it is not 2 x Hkv x D: MLA's latent, and the sparse
    attention indexer's key in the layers that run one (HY-V4: three of four; MiniMax-M3: the sparse layers)."""
    import json
    from pathlib import Path

    from memviz.core.arch import from_hf_config
    from memviz.core.units import Unit
    from memviz.gui.breakdown import breakdown_rows

    configs = Path(__file__).parents[1] / "data" / "llamacpp" / "configs"
    texts = {}
    for name in ("hy-v4", "minimax-m3"):
        a = from_hf_config(json.loads((configs / f"{name}.json").read_text()))
        rows = breakdown_rows(estimate(a, Scenario(engine="llamacpp", weight_format="Q8_0", kv_format="fp16")),
                              Unit.GiB)
        texts[name] = next(r[4] for r in rows if r[0] == "kv_cache")
    assert "MLA: one latent of 160 a token and layer" in texts["hy-v4"]
    assert "3 layers also cache the sparse-attention indexer's key of 64" in texts["hy-v4"]
    assert "MLA" not in texts["minimax-m3"] and "3 layers also cache the sparse-attention indexer's key of 128" in \
        texts["minimax-m3"]


def test_breakdown_names_the_mmproj_compute_buffer_in_the_activations():
    """With --mmproj, libmtmd's warm-up buffer has its own row, its bytes the core's figure."""
    from memviz.core.estimate import Scenario, estimate
    from memviz.core.presets import get_preset
    from memviz.core.units import Unit
    from memviz.gui.breakdown import breakdown_rows

    a = get_preset("gemma-3-27b").architecture()
    est = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096, gpu="rtx4090",
                               options=(("mmproj", True),)))
    row = next(r for r in breakdown_rows(est, Unit.GiB) if r[0].startswith("mmproj compute buffer"))
    assert int(row[1].replace(",", "")) == est.engine_facts["mmproj_compute"]["device_bytes"]
    assert "896 x 896 warm-up image" in row[4] and "flash attention on" in row[4]


def test_a_context_the_search_does_not_bound_reads_any_context():
    """Falcon-Mamba on vLLM: a state per sequence whatever the context, prefilled in chunks."""
    from memviz.core.arch import from_hf_config
    from memviz.core.units import Unit
    from memviz.gui.fit_view import cell_text

    mamba = from_hf_config({"model_type": "falcon_mamba", "hidden_size": 4096, "intermediate_size": 8192,
                            "num_hidden_layers": 64, "state_size": 16, "time_step_rank": 256, "vocab_size": 65024})
    cell = fit_matrix([estimate(mamba, Scenario(engine="vllm"))], ["h100-80g"])[0][0]
    assert cell_text(cell, Unit.GiB).splitlines()[1].startswith("any context · ≤ ")

"""AWQ / GPTQ checkpoints in transformers run on gptqmodel 7.7.0's kernels (memviz.core.engines.gptq_kernels): the
kernel each GPU gets, what it keeps of the checkpoint, ExLlamaV2's scratch, and the per-call copies. The byte
figures below are gptqmodel's formulas worked by hand for Llama-3.1-8B's shapes (hidden 4,096, MLP 14,336, 32
layers, 8 KV heads of 128)."""

from collections import Counter

import pytest

from memviz.cli import main
from memviz.core.engines import gptq_kernels
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.formats import get_weight_format, weight_bytes
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()
# per layer: q and o (4,096 x 4,096), k and v (4,096 -> 1,024), gate and up (4,096 -> 14,336), down (14,336 -> 4,096)
SHAPES = [(4096, 4096), (4096, 1024), (4096, 1024), (4096, 4096), (4096, 14336), (4096, 14336), (14336, 4096)]


def run(fmt="gptq-int4", **kw):
    options = kw.pop("options", {})
    return estimate(LLAMA8, Scenario(engine="transformers", weight_format=fmt, context_tokens=8192,
                                     options=options, **kw))


@pytest.mark.parametrize(("gpu", "kernel"), [
    ("v100-32g", "exllama_v2"), ("t4", "marlin"), ("a100-80g", "marlin"), ("rtx4090", "marlin"),
    ("h100-80g", "machete"), ("b200", "swordfish"), ("rtx5090", "marlin"), ("dgx-spark", "marlin"),
])
def test_the_kernel_follows_gptqmodels_priorities_by_compute_capability(gpu, kernel):
    from memviz.core.gpus import get_gpu
    assert gptq_kernels.select("gptq", "cuda", get_gpu(gpu).compute_capability, "auto") == kernel
    assert gptq_kernels.LABELS[kernel] in run(gpu=gpu).launch_command()


def test_off_nvidia_the_portable_kernels_hold_the_checkpoints_bytes():
    file_bytes = weight_bytes(LLAMA8, get_weight_format("gptq-int4"))
    for kw in ({"gpu": "mi300x"}, {"gpu": "m4-max-128g"}, {"device": "cpu"}):
        est = run(**kw)
        assert est.bytes["weights"] == file_bytes, kw
        assert est.engine_facts["quant_scratch_bytes"] == 0, kw
    assert "Triton / PyTorch" in run(gpu="mi300x").launch_command()
    assert "CPU int4pack" in run(device="cpu").launch_command()
    with pytest.raises(InputError, match="not NVIDIA's"):
        run(gpu="mi300x", options={"quant_kernel": "exllama_v2"})


def test_the_modules_are_the_decoders_linear_layers():
    mods = gptq_kernels.modules(LLAMA8, "gptq")
    assert Counter((m.k, m.n) for m in mods for _ in range(m.count)) == Counter(SHAPES * 32)


def test_marlin_drops_gptqs_zero_points_and_g_idx_and_adds_a_workspace_per_module():
    file_bytes = weight_bytes(LLAMA8, get_weight_format("gptq-int4"))
    qzeros = 32 * sum(k // 128 * n // 2 for k, n in SHAPES)
    g_idx = 32 * sum(k * 4 for k, _ in SHAPES)
    workspace = 32 * 7 * 128 * 4
    assert run(gpu="a100-80g").bytes["weights"] == file_bytes - qzeros - g_idx + workspace
    # act-order keeps the sorted g_idx and its sort indices
    ordered = run(gpu="a100-80g", options={"act_order": True}).bytes["weights"]
    assert ordered == file_bytes - qzeros + g_idx + workspace
    # AWQ's zero points stay (repacked); Hopper's Machete makes them 16-bit
    awq_bytes = weight_bytes(LLAMA8, get_weight_format("awq-int4"))
    assert run("awq-int4", gpu="a100-80g").bytes["weights"] == awq_bytes + workspace
    assert run("awq-int4", gpu="h100-80g").bytes["weights"] == awq_bytes + 32 * sum(k // 128 * n * 2 - k // 128 * n // 2
                                                                                    for k, n in SHAPES)


def test_exllamav2_holds_the_largest_modules_scratch_from_loading_on():
    # gate / up: K x N x 2 + 128 (temp_dq) + N x 2,048 x 8 x 4 + 128 (temp_fwd, GPTQ's max_batch_size 8)
    gptq = 4096 * 14336 * 2 + 128 + 14336 * 2048 * 8 * 4 + 128
    assert gptq == 1_056_964_864
    mods = gptq_kernels.modules(LLAMA8, "gptq")
    assert gptq_kernels.scratch_bytes("gptq", "exllama_v2", mods) == gptq
    assert gptq_kernels.scratch_bytes("awq", "exllama_v2", mods) == 4096 * 14336 * 2 + 14336 * 2048 * 4 + 256
    assert gptq_kernels.scratch_bytes("gptq", "marlin", mods) == 0
    on_v100 = run(gpu="v100-32g", options={"act_order": False})
    assert on_v100.engine_facts["quant_scratch_bytes"] == gptq
    # the same scenario on Marlin: no scratch, but c_tmp (128 SMs x 64 rows x 256 floats) during each call
    forced = run(gpu="a100-80g", options={"quant_kernel": "exllama_v2"})
    marlin = run(gpu="a100-80g")
    assert forced.bytes["activations"] - marlin.bytes["activations"] == gptq - 128 * 64 * 256 * 4


def test_act_order_copies_the_input_of_each_call():
    plain, ordered = run(gpu="a100-80g"), run(gpu="a100-80g", options={"act_order": True})
    # the prefill's 8,192 rows of down_proj's 14,336 inputs, copied in bf16 beside the MLP's own temporaries
    assert ordered.bytes["activations"] - plain.bytes["activations"] == 8192 * 14336 * 2
    assert ordered.engine_facts["quant_act_order"] is True


def test_a_checkpoints_desc_act_sets_the_default():
    from memviz.core.arch import from_hf_config
    cfg = {**get_preset("llama-3.1-8b").config, "quantization_config": {"quant_method": "gptq", "bits": 4,
                                                                         "group_size": 128, "desc_act": True}}
    a = from_hf_config(cfg)
    assert a.native_format == "gptq-int4" and a.native_act_order
    est = estimate(a, Scenario(engine="transformers", weight_format="gptq-int4", gpu="a100-80g"))
    assert est.engine_facts["quant_act_order"] is True


def test_a_kernel_the_gpu_cannot_run_is_refused_in_one_line(capsys):
    with pytest.raises(InputError, match="needs compute capability 7.5 or more; this GPU has 7.0"):
        run(gpu="v100-32g", options={"quant_kernel": "marlin"})
    with pytest.raises(InputError, match="machete needs compute capability 9.0"):
        run(gpu="a100-80g", options={"quant_kernel": "machete"})
    with pytest.raises(InputError, match="on the CPU"):
        run(device="cpu", options={"quant_kernel": "marlin"})
    assert main(["estimate", "--preset", "llama-3.1-8b", "--weights", "awq-int4", "--engine", "transformers",
                 "--gpu", "v100-32g", "-o", "quant_kernel=marlin"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_the_launch_command_names_a_chosen_backend():
    cmd = run("awq-int4", gpu="a100-80g", options={"quant_kernel": "exllama_v2"}).launch_command()
    assert 'quantization_config=AwqConfig(backend="exllama_v2")' in cmd and "import AutoModelForCausalLM, AwqConfig" in cmd
    assert 'GPTQConfig(bits=4, backend="marlin")' in run(gpu="a100-80g", options={"quant_kernel": "marlin"}).launch_command()
    plain = run(gpu="a100-80g").launch_command()
    assert "Config(" not in plain and 'dtype="float16"' in plain  # the kernels' dtype, AWQ's cast on CUDA
    assert "pip install optimum gptqmodel" in plain and "pip install gptqmodel:" in run("awq-int4").launch_command()


def test_other_formats_are_untouched():
    assert "quant_kernel" not in estimate(LLAMA8, Scenario(engine="transformers", weight_format="bf16")).engine_facts


def test_the_modules_are_the_linear_layers_transformers_builds():
    """optimum replaces every nn.Linear inside the decoder blocks (`get_layers(model, prefix=block_name)`): the same
    shapes as memviz's modules, for a Llama, a Qwen2 (biases), a Phi-3 (fused qkv and gate_up), a GLM-4 (fused
    gate_up) and a GPT-NeoX (fused query_key_value)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import AutoConfig, AutoModelForCausalLM

    from memviz.core.arch import from_hf_config
    gqa, padded = {"num_key_value_heads": 2}, {"num_key_value_heads": 2, "pad_token_id": 0}
    for model_type, extra in (("llama", gqa), ("qwen2", gqa), ("phi3", padded), ("glm4", padded), ("gpt_neox", {})):
        cfg = AutoConfig.for_model(model_type, hidden_size=256, intermediate_size=768, num_hidden_layers=2,
                                   num_attention_heads=4, vocab_size=512, **extra)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
        built = Counter((m.in_features, m.out_features) for name, m in model.named_modules()
                        if isinstance(m, torch.nn.Linear) and ".layers." in name)
        mods = gptq_kernels.modules(from_hf_config(cfg.to_dict()), "gptq")
        assert Counter((m.k, m.n) for m in mods for _ in range(m.count)) == built, model_type


def test_the_cli_and_the_report_name_the_kernel_and_its_scratch(capsys):
    from memviz.core.report import engine_lines
    from memviz.core.units import Unit
    assert main(["estimate", "--preset", "llama-3.1-8b", "--weights", "gptq-int4", "--engine", "transformers",
                 "--gpu", "v100-32g"]) == 0
    assert "AWQ / GPTQ layers on gptqmodel's ExLlamaV2 kernel; its scratch holds 0.98 GiB" in capsys.readouterr().out
    lines = engine_lines(run(gpu="a100-80g", options={"act_order": True}).engine_facts, Unit.GiB)
    assert "AWQ / GPTQ layers on gptqmodel's Marlin kernel (act-order: each call copies its input)." in lines


def test_imported_files_count_their_own_zero_points_and_g_idx(tmp_path):
    """An imported GPTQ folder (groups of 128 here, as stored): Marlin drops the files' own qzeros and g_idx bytes,
    ExLlamaV2 sizes its scratch from the stored qweight shapes; vLLM does not load g_idx either."""
    import json

    from memviz.core.importers.safetensors_file import read_safetensors
    from tests.core.importers.files import write_safetensors_model

    tensors = write_safetensors_model(tmp_path, gptq=True)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    a = read_safetensors(tmp_path)
    stored = sum(t.nbytes for t in a.stored)
    qzeros = sum(v.nbytes for k, v in tensors.items() if k.endswith(".qzeros"))
    g_idx = sum(v.nbytes for k, v in tensors.items() if k.endswith(".g_idx"))
    assert qzeros and g_idx

    def held(engine, gpu, **options):
        sc = Scenario(engine=engine, weight_format="stored", gpu=gpu, context_tokens=512, options=options)
        return estimate(a, sc)

    assert held("transformers", "a100-80g").bytes["weights"] == stored - qzeros - g_idx + 6 * 128 * 4
    on_v100 = held("transformers", "v100-32g")
    assert on_v100.engine_facts["quant_scratch_bytes"] == 256 * 512 * 2 + 128 + 512 * 2048 * 8 * 4 + 128  # gate / up
    # vLLM: Marlin on the A100; below 7.5 (a V100) memviz keeps the files' bytes
    assert held("vllm", "v100-32g").bytes["weights"] - held("vllm", "a100-80g").bytes["weights"] == qzeros + g_idx


def test_swordfish_is_named_for_gptq_only_awqconfig_has_no_such_backend():
    """transformers 5.24's AwqBackend lists no Swordfish: `AwqConfig(backend="swordfish")` raises in post_init, so
    the launch command could not carry it; auto still runs it on a B200 (gptqmodel's AWQ_SWORDFISH)."""
    assert "Swordfish" in run(gpu="b200", options={"quant_kernel": "swordfish"}).launch_command()
    assert run("awq-int4", gpu="b200").engine_facts["quant_kernel"] == "Swordfish"
    with pytest.raises(InputError, match="swordfish cannot be named for AWQ"):
        run("awq-int4", gpu="b200", options={"quant_kernel": "swordfish"})
    assert 'backend="marlin"' in run("awq-int4", gpu="a100-80g", options={"quant_kernel": "marlin"}).launch_command()


def test_the_awq_backends_named_are_the_ones_awqconfig_accepts():
    awq_backend = pytest.importorskip("transformers.utils.quantization_config").AwqBackend
    accepted = {b.value for b in awq_backend}
    assert set(gptq_kernels.AWQ_BACKENDS) <= accepted
    assert "swordfish" not in accepted


QZEROS8 = 32 * sum(k // 128 * n for k, n in SHAPES)  # 8-bit zero points: a byte each
G_IDX = 32 * sum(k * 4 for k, _ in SHAPES)


@pytest.mark.parametrize(("gpu", "kernel"), [
    ("v100-32g", "portable"), ("t4", "marlin"), ("a100-80g", "marlin"), ("h100-80g", "machete"), ("b200", "swordfish"),
])
def test_8_bit_gptq_runs_where_a_kernel_takes_8_bits(gpu, kernel):
    """gptqmodel 7.7.0's SUPPORTS_BITS: Swordfish, Machete and Marlin take 8 bits, ExLlamaV2 4 only, so a V100 runs
    Triton / PyTorch; Marlin drops the 8-bit zero points (a byte each) and g_idx."""
    from memviz.core.gpus import get_gpu
    assert gptq_kernels.select("gptq", "cuda", get_gpu(gpu).compute_capability, "auto", bits=8) == kernel
    file_bytes = weight_bytes(LLAMA8, get_weight_format("gptq-int8"))
    held = {"portable": 0, "marlin": -QZEROS8 - G_IDX + 32 * 7 * 128 * 4, "machete": -QZEROS8, "swordfish": -QZEROS8}
    assert run("gptq-int8", gpu=gpu).bytes["weights"] == file_bytes + held[kernel]
    assert run("gptq-int8", gpu=gpu).engine_facts["quant_scratch_bytes"] == 0
    assert "Triton / PyTorch" in run("gptq-int8", device="cpu").launch_command()  # int4pack takes 4 bits only
    with pytest.raises(InputError, match="does not take 8-bit values"):
        run("gptq-int8", gpu="a100-80g", options={"quant_kernel": "exllama_v2"})
    assert 'GPTQConfig(bits=8, backend="marlin")' in run("gptq-int8", gpu="a100-80g",
                                                          options={"quant_kernel": "marlin"}).launch_command()


def test_zero_points_keep_gptq_off_marlin_and_widen_on_machete():
    """A GPTQ checkpoint with zero points (sym false): Marlin declares SUPPORTS_SYM [True], so an A100 runs
    ExLlamaV2 at 4 bits and Triton / PyTorch at 8; Machete turns the zero points into 16-bit values (`qzeros_fp`)."""
    from memviz.core.arch import from_hf_config
    q = {"quant_method": "gptq", "group_size": 128, "desc_act": False, "sym": False}
    a4 = from_hf_config({**get_preset("llama-3.1-8b").config, "quantization_config": {**q, "bits": 4}})
    a8 = from_hf_config({**get_preset("llama-3.1-8b").config, "quantization_config": {**q, "bits": 8}})
    assert gptq_kernels.select("gptq", "cuda", (8, 0), "auto", asym=True) == "exllama_v2"
    assert gptq_kernels.select("gptq", "cuda", (8, 0), "auto", bits=8, asym=True) == "portable"
    with pytest.raises(InputError, match="zero points"):
        gptq_kernels.select("gptq", "cuda", (8, 0), "marlin", asym=True)

    def held(a, gpu):
        sc = Scenario(engine="transformers", weight_format=a.native_format, gpu=gpu, context_tokens=8192)
        return estimate(a, sc).bytes["weights"] - weight_bytes(a, get_weight_format(a.native_format))

    qzeros4 = 32 * sum(k // 128 * n // 2 for k, n in SHAPES)
    assert held(a4, "h100-80g") == 3 * qzeros4 and held(a8, "h100-80g") == QZEROS8
    assert held(a8, "a100-80g") == 0


def test_an_autoround_checkpoint_runs_on_the_kernels_auto_round_picks():
    """transformers 5.25 loads AutoRound through auto-round 0.16, whose CUDA backends for GPTQ packing are gptqmodel's
    Marlin and ExLlamaV2 (no Machete): an H100 runs Marlin, and the launch command names AutoRoundConfig's backend."""
    from memviz.core.arch import from_hf_config
    q = {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True}
    a = from_hf_config({**get_preset("llama-3.1-8b").config, "quantization_config": q})

    def on(gpu, **options):
        return estimate(a, Scenario(engine="transformers", weight_format=a.native_format, gpu=gpu,
                                    context_tokens=8192, options=options))

    assert on("h100-80g").engine_facts["quant_kernel"] == "Marlin"
    assert run(gpu="h100-80g").engine_facts["quant_kernel"] == "Machete"  # a GPTQ release on the same GPU
    assert 'AutoRoundConfig(backend="gptqmodel:marlin")' in on("h100-80g", quant_kernel="marlin").launch_command()
    assert "pip install auto-round gptqmodel" in on("h100-80g").launch_command()
    cpu = estimate(a, Scenario(engine="transformers", weight_format=a.native_format, device="cpu", context_tokens=512))
    assert cpu.engine_facts["quant_kernel"] == "auto-round's CPU (ARK / PyTorch)"  # its own CPU backends
    assert cpu.bytes["weights"] == weight_bytes(a, get_weight_format("gptq-int4"))
    with pytest.raises(InputError, match="auto-round"):
        on("h100-80g", quant_kernel="machete")
    awq = from_hf_config({**get_preset("llama-3.1-8b").config,
                          "quantization_config": {**q, "packing_format": "auto_round:auto_awq"}})
    sc = Scenario(engine="transformers", weight_format=awq.native_format, gpu="a100-80g", context_tokens=8192,
                  options={"quant_kernel": "marlin"})
    assert 'AutoRoundConfig(backend="gptqmodel:awq_marlin")' in estimate(awq, sc).launch_command()


def test_imported_8_bit_autoround_files_count_their_own_tensors(tmp_path):
    """An imported AutoRound folder of 8-bit GPTQ packing (four values an int32, no g_idx): the modules' shapes come
    from qweight [K / 4, N]; Marlin drops the files' zero points; a V100 holds the files' bytes."""
    import json

    from memviz.core.importers.safetensors_file import read_safetensors
    from tests.core.importers.files import write_safetensors_model

    tensors = write_safetensors_model(tmp_path, gptq=True, gptq_bits=8, g_idx=False)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "auto-round", "bits": 8, "group_size": 128, "sym": True}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    a = read_safetensors(tmp_path)
    assert a.native_format == "gptq-int8"
    mods = gptq_kernels.modules(a, "gptq", stored=True, bits=8)
    assert sorted((m.k, m.n) for m in mods) == sorted([(256, 512), (256, 512), (512, 256)] * 2)
    stored = sum(t.nbytes for t in a.stored)
    qzeros = sum(v.nbytes for k, v in tensors.items() if k.endswith(".qzeros"))

    def weights(engine, gpu):
        sc = Scenario(engine=engine, weight_format="stored", gpu=gpu, context_tokens=512)
        return estimate(a, sc).bytes["weights"]

    assert weights("transformers", "a100-80g") == stored - qzeros + 6 * 128 * 4
    assert weights("transformers", "v100-32g") == stored
    assert weights("vllm", "v100-32g") - weights("vllm", "a100-80g") == qzeros

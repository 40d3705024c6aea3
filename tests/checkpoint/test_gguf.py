"""GGUF as a checkpoint of its own: a GGUF-only folder, one .gguf file, a split set and a Hub GGUF repo
are planned from the GGUF header (written here with llama.cpp's gguf writer), with exact sizes, and
llama-server's --model is always the first file of the chosen quantization."""

from __future__ import annotations

import pytest
from gguf import GGMLQuantizationType, GGUFReader

from recipegen.checkpoint.gguf import read_header
from tests.support.cli import run_cli
from tests.support.contract import rejections
from tests.support.gguf_files import Shape, write_gguf
from tests.support.hubserver import serve

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
GIB = 2**30


def _plan(*args: str, env: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    result = run_cli("explain", "--gpu", "rtx-4090", *args, "--format", "json", env=env or OFFLINE)
    assert result.code == 0, result.err
    return result.json()  # type: ignore[no-any-return]


def _model_arg(plan: dict) -> str:  # type: ignore[type-arg]
    argv = plan["argv"]
    return str(argv[argv.index("--model") + 1])


def test_the_reader_agrees_with_llama_cpps_own_reader(tmp_path):
    (path,) = write_gguf(tmp_path / "m-Q4_K_M.gguf", Shape(experts=4, experts_used=2))
    ours = read_header(path.open("rb").read)
    theirs = GGUFReader(str(path))
    assert [(t.name, t.type_name, t.elements, t.bytes) for t in ours.tensors] == [
        (t.name, t.tensor_type.name, int(t.n_elements), int(t.n_bytes)) for t in theirs.tensors
    ]
    assert ours.arch_key("expert_count") == 4 and ours.metadata["tokenizer.ggml.tokens"] == {"_len": 5000}


def test_a_gguf_only_folder_plans_each_quant_from_its_header_with_exact_sizes(tmp_path):
    folder = tmp_path / "tiny-GGUF"
    write_gguf(folder / "tiny-Q4_K_M.gguf")
    parts = write_gguf(folder / "tiny-Q8_0.gguf", kind=GGMLQuantizationType.Q8_0, split_max_tensors=20)
    assert len(parts) == 3
    plan = _plan("--model", str(folder), "--variant", "Q8_0")
    top = plan["plans"][0]
    assert top["engine"] == "llama.cpp" and top["variant"] == "gguf-q8-0"
    assert _model_arg(top) == "/models/tiny-GGUF/tiny-Q8_0-00001-of-00003.gguf"
    exact = sum(p.stat().st_size for p in parts)
    assert top["memory"]["weights_gib"] * top["gpus"] == pytest.approx(exact / GIB, abs=0.006)
    # K and V: 6 layers × 2 KV heads × 64 wide × 2 (K and V) × 2 bytes (F16 cache), as llama.cpp keeps it
    assert top["memory"]["kv_bytes_per_token"] == 6 * 2 * 64 * 2 * 2
    assert "header" in plan["request"]["understood_as"]
    assert top["gpus"] == 1  # a few MB: never more GPUs


def test_a_single_gguf_file_is_the_checkpoint_and_its_folder_is_mounted(cli, tmp_path):
    (path,) = write_gguf(tmp_path / "dl" / "tiny-Q4_K_M.gguf")
    write_gguf(tmp_path / "dl" / "other-Q8_0.gguf", kind=GGMLQuantizationType.Q8_0)  # beside it, not chosen
    out = tmp_path / "out"
    result = cli("--gpu", "rtx-4090", "--model", str(path), "--out", str(out), env=OFFLINE)
    assert result.code == 0, result.err
    launch = (out / "launch.sh").read_text()
    assert "'/models/dl/tiny-Q4_K_M.gguf'" in launch and "hf download" not in launch
    plan = _plan("--model", str(path))
    assert plan["plans"][0]["variant"] == "gguf-q4-k-m" and len({p["variant"] for p in plan["plans"]}) == 1


def test_any_part_of_a_split_set_loads_its_first_part(tmp_path):
    parts = write_gguf(tmp_path / "s" / "tiny-Q4_K_M.gguf", split_max_tensors=25)
    plan = _plan("--model", str(parts[-1]))
    assert _model_arg(plan["plans"][0]) == "/models/s/tiny-Q4_K_M-00001-of-00002.gguf"
    parts[-1].unlink()  # a part missing: said, never planned
    refused = run_cli("explain", "--gpu", "rtx-4090", "--model", str(parts[0]), env=OFFLINE)
    assert refused.code == 2 and "Traceback" not in refused.err


def test_a_folder_with_config_json_and_only_gguf_weights_is_planned_as_gguf(tmp_path):
    folder = tmp_path / "mixed"
    write_gguf(folder / "tiny-Q4_K_M.gguf")
    (folder / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16"}')
    plan = _plan("--model", str(folder))
    assert {p["variant"] for p in plan["plans"]} == {"gguf-q4-k-m"}
    assert all(p["gpus"] == 1 for p in plan["plans"])


def test_a_moe_header_counts_active_parameters_from_the_expert_tensors(tmp_path):
    shape = Shape(arch="qwen3moe", experts=8, experts_used=2)
    write_gguf(tmp_path / "moe" / "moe-Q4_K_M.gguf", shape)
    inspected = run_cli("inspect", str(tmp_path / "moe"), "--format", "json", env=OFFLINE)
    assert inspected.code == 0, inspected.err
    report = inspected.json()
    derived = report["derived"]
    routed = shape.layers * 3 * shape.experts * shape.ffn * shape.hidden
    assert derived["moe"]["experts"] == 8 and derived["moe"]["top_k"] == 2
    assert derived["params_active_b"] == pytest.approx(derived["params_total_b"] - routed * 6 / 8 / 1e9, abs=0.001)
    assert report["architecture"] == "Qwen3MoeForCausalLM"  # the HF class llama.cpp's qwen3moe maps to
    assert report["loaded_by"] and all("llama" in b for b in report["loaded_by"])  # GGUF: llama.cpp builds only


def test_a_hub_gguf_repo_reads_one_header_and_downloads_only_the_chosen_quant(tmp_path):
    repo = tmp_path / "hub" / "someone" / "Tiny-GGUF"
    write_gguf(repo / "Tiny-Q4_K_M.gguf")
    parts = write_gguf(repo / "Tiny-Q8_0.gguf", kind=GGMLQuantizationType.Q8_0, split_max_tensors=20)
    with serve(root=tmp_path / "hub") as (url, _):
        env = {"HF_ENDPOINT": url, "HF_HUB_OFFLINE": "0"}
        out = tmp_path / "out"
        args = ("--gpu", "rtx-4090", "--model", "someone/Tiny-GGUF", "--variant", parts[1].name)
        result = run_cli(*args, "--out", str(out), env=env)
        assert result.code == 0, result.err
    launch = (out / "launch.sh").read_text()
    assert "--include 'Tiny-Q8_0-*-of-00003.gguf'" in launch
    assert "'/models/Tiny-GGUF/Tiny-Q8_0-00001-of-00003.gguf'" in launch


def test_every_catalog_gguf_plan_loads_a_file_and_downloads_only_its_quant(catalog):
    walked = 0
    for model in catalog.models.values():
        for variant in (v for v in model.variants if v.quant == "gguf"):
            args = ("--model", model.id, "--variant", variant.id, "--engine", "llama.cpp", "--format", "json")
            result = run_cli("explain", "--gpu", "h200", "--gpus", "8", *args, env=OFFLINE)
            data = result.json()
            for plan in data.get("plans", []):
                assert _model_arg(plan).endswith(".gguf"), (model.id, variant.id)
                walked += 1
            if variant.file is None:
                reasons = [r["reason"] for r in rejections(data)]
                assert not data.get("plans") and any("names no file" in r for r in reasons), (model.id, reasons)
    assert walked >= 5


# llama.cpp's recurrent state per layer and sequence (src/llama-hparams.cpp,
# https://github.com/ggml-org/llama.cpp/blob/master/src/llama-hparams.cpp): n_embd_r = (ssm_d_conv - 1) ×
# (ssm_d_inner + 2 × ssm_n_group × ssm_d_state), for LFM2 n_embd × (shortconv_l_cache - 1); n_embd_s =
# ssm_d_state × ssm_d_inner (none for LFM2); llama_memory_recurrent keeps both in F32 (4 bytes).
def _llama_state_bytes(shape: Shape) -> int:
    keys = dict(shape.arch_keys)
    recurrent = sum(1 for kv in shape.kv_per_layer if kv == 0) if shape.kv_per_layer else shape.layers
    if "shortconv.l_cache" in keys:
        return recurrent * shape.hidden * (keys["shortconv.l_cache"] - 1) * 4
    inner, d_state, groups = keys["ssm.inner_size"], keys["ssm.state_size"], keys.get("ssm.group_count", 0)
    r = (keys["ssm.conv_kernel"] - 1) * (inner + 2 * groups * d_state)
    return recurrent * (r + d_state * inner) * 4


HYBRIDS = {
    # Jamba: Mamba-1 layers with an attention layer among them (per-layer KV heads, 0 on the Mamba layers)
    "jamba": Shape(
        arch="jamba", layers=8, kv_per_layer=(0, 0, 0, 0, 2, 0, 0, 0),
        arch_keys=(
            ("ssm.conv_kernel", 4), ("ssm.inner_size", 1024), ("ssm.state_size", 16), ("ssm.time_step_rank", 32),
        ),
    ),
    # Falcon-H1: Mamba-2 heads and attention side by side in every layer
    "falcon-h1": Shape(
        arch="falcon-h1", layers=4,
        arch_keys=(
            ("ssm.conv_kernel", 4), ("ssm.inner_size", 1024), ("ssm.state_size", 64), ("ssm.group_count", 1),
            ("ssm.time_step_rank", 16),
        ),
    ),
    # LFM2: short-convolution layers and attention layers
    "lfm2": Shape(arch="lfm2", layers=6, kv_per_layer=(0, 0, 2, 0, 0, 2), arch_keys=(("shortconv.l_cache", 3),)),
}  # fmt: skip


@pytest.mark.parametrize("arch", sorted(HYBRIDS))
def test_a_gguf_hybrid_plans_with_llama_cpp_and_charges_its_state_per_sequence(tmp_path, arch):
    shape = HYBRIDS[arch]
    (path,) = write_gguf(tmp_path / arch / f"{arch}-Q4_K_M.gguf", shape)
    plan = _plan("--model", str(path))
    assert plan["plans"], [r["reason"] for r in rejections(plan)][:3]
    top = plan["plans"][0]
    assert top["engine"] == "llama.cpp" and top["gpus"] == 1
    assert top["memory"]["weights_gib"] == pytest.approx(path.stat().st_size / GIB, abs=0.006)
    assert top["memory"]["state_bytes_per_request"] == _llama_state_bytes(shape)
    attention = sum(1 for kv in shape.kv_per_layer if kv) if shape.kv_per_layer else shape.layers
    assert top["memory"]["kv_bytes_per_token"] == attention * shape.kv_heads * shape.head_dim * 2 * 2

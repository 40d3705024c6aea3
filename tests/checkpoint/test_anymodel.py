"""Any model a user names: Hub repos through the real huggingface_hub client against a local Hub,
local checkpoint folders, and names resolved offline."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.contract import rejections
from tests.support.hubserver import HUB_DATA, serve
from tests.support.same_facts import assert_same_facts

COGITO = "deepcogito/cogito-v1-preview-qwen-14B"
COGITO_TOTAL = json.loads((HUB_DATA / COGITO / "model.safetensors.index.json").read_text())["metadata"]["total_size"]
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


@pytest.fixture(scope="module")
def hub():  # type: ignore[no-untyped-def]
    mirrors = {
        "mirror-org/Qwen3-235B-A22B-FP8": "Qwen/Qwen3-235B-A22B-FP8",  # the real files under another org
        "liar/Qwen3-32B-FP8": "Qwen/Qwen3-8B",  # a name that promises one model, files of another
    }
    with serve(gated={"meta-llama/Llama-3.1-8B"}, mirrors=mirrors) as (url, state):
        yield url, state


@pytest.fixture
def hf_env(hub, tmp_path):  # type: ignore[no-untyped-def]
    url, _ = hub
    return {"HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}


def test_inspect_hub_repo_not_in_catalog_is_derived_with_index_size(hf_env):
    result = run_cli("inspect", COGITO, "--format", "json", env=hf_env)
    assert result.code == 0, result.err
    facts = result.json()
    assert facts["status"] == "derived"
    assert facts["architecture"] == "Qwen2ForCausalLM"
    assert facts["derived"]["attention"] == {"kind": "gqa", "num_heads": 40, "num_kv_heads": 8, "head_dim": 128}
    assert facts["weight_format"]["quant"] == "bf16"
    assert abs(facts["size_bytes"] - COGITO_TOTAL) / COGITO_TOTAL < 0.03
    assert facts["base_model"] == ["Qwen/Qwen2.5-14B"]
    assert facts["family"]["model"] is None
    assert any(r["url"].endswith("/config.json") and r["what"] == "config.json" for r in facts["read"])
    # HF_HOME is the cache: the config landed there, nothing else was needed
    cached = list(Path(hf_env["HF_HOME"]).rglob("config.json"))
    assert cached and "models--deepcogito--cogito-v1-preview-qwen-14B" in str(cached[0])


def test_explain_hub_repo_plans_from_derived_facts(hf_env):
    result = run_cli("explain", "--gpu", "rtx-4090", "--gpus", "2", "--model", COGITO, "--format", "json", env=hf_env)
    assert result.code == 0, result.err
    plan = result.json()
    assert plan["request"]["model_facts"] == "files"
    assert plan["verdict"] == "runnable"
    top = plan["plans"][0]
    assert top["status"] == "derived" and top["repo"] == COGITO
    shards = top["gpus"] * top["nodes"]
    weights = top["memory"]["weights_gib"] * 2**30 * shards
    assert abs(weights - COGITO_TOTAL) / COGITO_TOTAL < 0.03


def test_generate_writes_a_derived_plan_for_a_hub_repo(hf_env, tmp_path):
    out = tmp_path / "cogito"
    result = run_cli("--gpu", "a100-80gb", "--model", COGITO, "--out", str(out), env=hf_env)
    assert result.code == 0, result.err
    plan = json.loads((out / "plan.json").read_text())
    assert plan["request"]["model_facts"] == "files" and plan["plans"][0]["status"] == "derived"
    assert COGITO in (out / "launch.sh").read_text()
    assert "config.json" in (out / "README.md").read_text()
    assert "--revision" not in (out / "launch.sh").read_text()


def test_a_revision_is_read_and_pinned_in_the_download(hf_env, tmp_path):
    from tests.support.hubserver import COMMIT

    out = tmp_path / "pinned"
    result = run_cli("--gpu", "a100-80gb", "--model", f"{COGITO}@{COMMIT}", "--out", str(out), env=hf_env)
    assert result.code == 0, result.err
    assert f"--revision {COMMIT}" in (out / "launch.sh").read_text().replace("'", "")
    # a catalog checkpoint at a named revision keeps the catalog's facts and pins the download
    named = tmp_path / "named"
    args = ("--gpu", "h200", "--gpus", "4", "--model", "Qwen/Qwen3-235B-A22B-FP8@v1.0", "--out", str(named))
    assert run_cli(*args, env=OFFLINE).code == 0
    assert "--revision v1.0" in (named / "launch.sh").read_text().replace("'", "")


@pytest.mark.parametrize(
    ("repo", "expected"),
    [
        ("meta-llama/Llama-3.1-8B", "gated repo"),
        ("nobody/no-such-model", "no model repo nobody/no-such-model"),
        ("Qwen/Qwen3-235B-A22B@no-such-branch", "has no revision 'no-such-branch'"),
    ],
)
def test_hub_errors_are_one_line_with_a_next_step(hf_env, repo, expected):
    result = run_cli("inspect", repo, env=hf_env)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0]
    assert " — " in lines[0] and "Traceback" not in result.err


def test_no_network_is_one_line(tmp_path):
    result = run_cli("inspect", COGITO, env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path)})
    assert result.code == 2
    assert "cannot read the file list" in result.err and "HF_HUB_OFFLINE" in result.err


def test_token_is_sent_and_never_written(hub, hf_env, monkeypatch):
    _, state = hub
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    before = len(state.requests)
    anonymous = run_cli("inspect", "Qwen/Qwen3-8B", "--no-headers", env=hf_env)
    assert anonymous.code == 0, anonymous.err
    assert all(auth is None for _, _, auth in state.requests[before:])
    secret = "hf_test_secret_token_0123456789"
    before = len(state.requests)
    result = run_cli("inspect", "Qwen/Qwen3-235B-A22B", "--no-headers", env={**hf_env, "HF_TOKEN": secret})
    assert result.code == 0, result.err
    assert any(auth == f"Bearer {secret}" for _, _, auth in state.requests[before:])
    home = Path(hf_env["HF_HOME"])
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in result.out


def test_offline_reads_the_local_cache_and_says_when_it_cannot(hf_env):
    online = run_cli("inspect", COGITO, "--format", "json", env=hf_env)
    assert online.code == 0, online.err
    offline_env = {**hf_env, **OFFLINE, "HF_HOME": hf_env["HF_HOME"]}
    cached = run_cli("inspect", COGITO, "--format", "json", env=offline_env)
    assert cached.code == 0, cached.err
    assert cached.json()["derived"] == online.json()["derived"]
    missing = run_cli("inspect", "Qwen/Qwen3-235B-A22B", env=offline_env)
    assert missing.code == 2
    assert "HF_HUB_OFFLINE is set" in missing.err and "not in the local cache" in missing.err


# One real config.json per attention kind, for models the catalog curates: the derived facts and the
# memory figures must equal the curated ones.
KINDS = [
    ("Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"),  # GQA + MoE
    ("openai/gpt-oss-120b", "gpt-oss-120b"),  # GQA + sliding windows + sinks, MXFP4
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),  # MLA
    ("zai-org/GLM-5.2", "glm-5.2"),  # DSA sparse MLA with IndexShare
    ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),  # MLA, 1 dense layer, no MTP
    # and the families added with this catalog: their hand-written YAML against their real configs
    ("Qwen/Qwen3-0.6B", "qwen3-0.6b"),  # tied embeddings
    ("Qwen/Qwen3-1.7B", "qwen3-1.7b"),
    ("Qwen/Qwen3-8B", "qwen3-8b"),
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder-480b-a35b"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder-30b-a3b"),  # 262,144-token native context
    ("meta-llama/Meta-Llama-3.1-70B", "llama-3.1-70b"),
    ("moonshotai/Kimi-K2.5", "kimi-k2.5"),  # MLA under a multimodal text_config
    ("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5"),  # GQA + MoE + 3 MTP modules
    ("MiniMaxAI/MiniMax-M2.7", "minimax-m2.7"),
    # chunked attention with NoPE layers, MoE on every k-th layer, a shared expert the config does not name
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "llama-4-maverick"),
    # Gemma 3: five 1024-token sliding-window layers per global one (sliding_window_pattern), under text_config
    ("unsloth/gemma-3-12b-it-qat", "gemma-3-12b"),
    ("microsoft/phi-4", "phi-4"),  # Phi3ForCausalLM whose sliding_window equals its context: no window
    ("Qwen/Qwen3-VL-8B-Instruct", "qwen3-vl-8b"),  # dense Qwen3 decoder under a vision-language text_config
    ("Qwen/Qwen3-VL-4B-Instruct", "qwen3-vl-4b"),  # tied embeddings
    ("Qwen/Qwen3-VL-32B-Instruct", "qwen3-vl-32b"),
    ("Qwen/Qwen3-VL-30B-A3B-Instruct", "qwen3-vl-30b-a3b"),  # MoE under text_config
    ("Qwen/Qwen3-VL-235B-A22B-Instruct", "qwen3-vl-235b-a22b"),
]


@pytest.mark.parametrize(("repo", "model_id"), KINDS)
def test_derived_facts_equal_curated(hub, tmp_path, monkeypatch, catalog, repo, model_id):
    from recipegen.checkpoint import hub as hub_edge
    from recipegen.checkpoint.derive import derive
    from recipegen.plan.footprint import footprint

    url, _ = hub
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    derived = derive(hub_edge.read(repo, headers=False)).model
    curated = catalog.models[model_id]
    assert derived is not None
    assert_same_facts(derived, curated)
    assert abs(derived.params_total_b - curated.params_total_b) / curated.params_total_b < 0.03
    if curated.architecture == "Llama4ForConditionalGeneration":  # every 4th of 48 layers is a global NoPE layer
        shown = run_cli("inspect", repo, "--format", "json", "--no-headers").json()["derived"]
        assert shown["nope_layers"] == 12
    for kv, tp in (("bf16", 1), ("fp8_e4m3", 8)):
        assert footprint(derived, kv, tp, 1, 1) == footprint(curated, kv, tp, 1, 1)  # type: ignore[arg-type]


def test_a_gemma3_config_that_leaves_fields_out_gets_the_class_defaults(tmp_path):
    # google/gemma-3-*-it configs state only part of text_config; Gemma3TextConfig's defaults fill the rest
    folder = tmp_path / "gemma-3-12b-it"
    folder.mkdir()
    config = json.loads((HUB_DATA / "unsloth" / "gemma-3-12b-it-qat" / "config.json").read_text())
    for key in ("vocab_size", "max_position_embeddings", "sliding_window_pattern"):
        del config["text_config"][key]
    (folder / "config.json").write_text(json.dumps(config))
    result = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    derived = result.json()["derived"]
    assert derived["attention"]["sliding_window"] == 1024 and derived["attention"]["sliding_window_layers"] == 40
    assert derived["max_context"] == 131072 and derived["layers"] == 48
    # a text-only export (Gemma3ForCausalLM, the text fields at the top level) derives the same decoder
    text_only = {**config["text_config"], "architectures": ["Gemma3ForCausalLM"], "torch_dtype": "bfloat16"}
    (folder / "config.json").write_text(json.dumps(text_only))
    flat = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()
    assert flat["derived"]["attention"] == derived["attention"] and flat["derived"]["layers"] == 48
    # the same layout spelled as layer_types (newer transformers) reads the same
    config["text_config"]["layer_types"] = (["sliding_attention"] * 5 + ["full_attention"]) * 8
    (folder / "config.json").write_text(json.dumps(config))
    again = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()["derived"]
    assert again["attention"] == derived["attention"]


def test_quant_configs_map_to_catalog_formats(hf_env):
    formats = {}
    repos = (
        "Qwen/Qwen3-235B-A22B-FP8",
        "nvidia/Qwen3-235B-A22B-NVFP4",
        "openai/gpt-oss-120b",
        "moonshotai/Kimi-K2.5",
        "nvidia/MiniMax-M2.7-NVFP4",
    )
    for repo in repos:
        result = run_cli("inspect", repo, "--format", "json", "--no-headers", env=hf_env)
        assert result.code == 0, result.err
        formats[repo] = (result.json()["weight_format"]["quant"], result.json()["family"]["confidence"])
    assert formats == {
        "Qwen/Qwen3-235B-A22B-FP8": ("fp8_block", "certain"),
        "nvidia/Qwen3-235B-A22B-NVFP4": ("nvfp4", "certain"),
        "openai/gpt-oss-120b": ("mxfp4", "certain"),
        "moonshotai/Kimi-K2.5": ("int4", "certain"),  # compressed-tensors W4A16 inside text_config
        "nvidia/MiniMax-M2.7-NVFP4": ("nvfp4", "certain"),  # hf_quant_config.json
    }


def test_a_class_with_window_layers_of_their_own_shape_is_derived_and_planned_on_the_diff_kv_backend(tmp_path):
    # a local copy of the checkpoint's files is derived from them, although the catalog has a recipe of the model
    folder = tmp_path / "MiMo-V2-Flash"
    shutil.copytree(HUB_DATA / "XiaomiMiMo" / "MiMo-V2-Flash", folder)
    inspected = run_cli("inspect", str(folder), env=OFFLINE)
    assert inspected.code == 0
    assert "status derived" in inspected.out.splitlines()[0]
    # the engines' harvested registries load the class (sglang/srt/models/mimo_v2.py, vLLM's registry.py); the
    # generic rule reads its window layers' own shape (swa_*) and V narrower than K (v_head_dim)
    assert "MiMoV2FlashForCausalLM (model_type mimo_v2_flash); loaded by sglang-0.5.23" in inspected.out
    assert "sliding window 128 on 39 layers" in inspected.out
    planned = run_cli("explain", "--gpu", "h200", "--gpus", "8", "--model", str(folder), env=OFFLINE)
    assert planned.code == 0, planned.err
    # V narrower than K: vLLM's mimo_v2.py hands the layers to FLASH_ATTN_DIFFKV on Hopper (data/diff_kv.yaml)
    assert "VERDICT: runnable" in planned.out, planned.out
    verbose = run_cli(
        "explain", "--gpu", "h200", "--gpus", "8", "--model", str(folder), "--engine", "vllm", "--verbose", env=OFFLINE,
    )  # fmt: skip
    assert "FLASH_ATTN_DIFFKV (attention.gqa)" in verbose.out
    # the repo id names the catalog's recipe, which plans the same way
    by_name = run_cli("explain", "--gpu", "h200", "--gpus", "8", "--model", "XiaomiMiMo/MiMo-V2-Flash", env=OFFLINE)
    assert by_name.code == 0 and "VERDICT: runnable" in by_name.out, by_name.out


# -- local folders ---------------------------------------------------------------------------------


@pytest.fixture
def cogito_folder(tmp_path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "cogito-14b"
    shutil.copytree(HUB_DATA / COGITO, folder)
    return folder


def test_local_folder_inspect_and_explain(cogito_folder):
    inspected = run_cli("inspect", str(cogito_folder), "--format", "json", env=OFFLINE)
    assert inspected.code == 0, inspected.err
    facts = inspected.json()
    assert facts["status"] == "derived"
    assert abs(facts["size_bytes"] - COGITO_TOTAL) / COGITO_TOTAL < 0.03
    assert facts["base_model"] == ["Qwen/Qwen2.5-14B"]
    plan = run_cli("explain", "--gpu", "a100-80gb", "--model", str(cogito_folder), "--format", "json", env=OFFLINE)
    assert plan.code == 0, plan.err
    data = plan.json()
    assert data["request"]["model_facts"] == "files" and data["plans"][0]["status"] == "derived"
    top = data["plans"][0]
    weights = top["memory"]["weights_gib"] * 2**30 * top["gpus"] * top["nodes"]
    assert abs(weights - COGITO_TOTAL) / COGITO_TOTAL < 0.03


def _tiny_shard(path: Path) -> None:
    """A real safetensors file: 8-byte header length, JSON header, tensor bytes."""
    header = {
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]},
        "lm_head.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [64, 88]},
    }
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(88))


def test_hub_safetensors_headers_are_counted_per_dtype(tmp_path):
    repo = tmp_path / "hub" / "tiny" / "model"
    repo.mkdir(parents=True)
    shutil.copy(HUB_DATA / COGITO / "config.json", repo / "config.json")
    _tiny_shard(repo / "model.safetensors")
    with serve(root=tmp_path / "hub") as (url, _):
        env = {"HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
        result = run_cli("inspect", "tiny/model", "--format", "json", env=env)
    assert result.code == 0, result.err
    facts = result.json()
    assert facts["dtype_elements"] == {"BF16": 32, "F32": 6}
    assert facts["size_bytes"] == 88 and "headers" in facts["size_from"]


def test_online_a_gguf_repo_lists_its_quantizations_as_variants(tmp_path):
    repo = tmp_path / "hub" / "unsloth" / "GLM-4.6-GGUF"
    repo.mkdir(parents=True)
    (repo / "README.md").write_text("---\nbase_model: zai-org/GLM-4.6\n---\n")
    for name, gib in (("GLM-4.6-UD-Q2_K_XL.gguf", 135), ("GLM-4.6-Q4_K_M.gguf", 216)):
        with (repo / name).open("wb") as handle:
            handle.truncate(gib * 2**30)
    with serve(root=tmp_path / "hub") as (url, _):
        env = {"HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}
        args = ("--gpu", "h200", "--model", "unsloth/GLM-4.6-GGUF", "--engine", "llama.cpp", "--format", "json")
        result = run_cli("explain", *args, env=env)
        picked = run_cli("explain", *args, "--variant", "gguf-q4-k-m", env=env)
    assert result.code in (0, 3), result.err
    request = result.json()["request"]
    assert request["model"] == "glm-4.6" and request["model_facts"] == "files"
    assert "gguf-q4-k-m, gguf-ud-q2-k-xl" in request["understood_as"]
    assert picked.code == 0, picked.err
    plan = picked.json()["plans"][0]
    assert plan["variant"] == "gguf-q4-k-m" and plan["memory"]["weights_gib"] * plan["gpus"] == pytest.approx(216, 0.01)


def test_local_safetensors_headers_are_counted(cogito_folder):
    _tiny_shard(cogito_folder / "model-00001-of-00001.safetensors")
    result = run_cli("inspect", str(cogito_folder), "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    assert result.json()["dtype_elements"] == {"BF16": 32, "F32": 6}


def test_gguf_only_folder_maps_through_the_card_base_model(tmp_path):
    folder = tmp_path / "my-gguf"
    folder.mkdir()
    (folder / "README.md").write_text("---\nbase_model: Qwen/Qwen3-32B\n---\n# a local GGUF copy\n")
    (folder / "Qwen3-32B-Q4_K_M.gguf").write_bytes(bytes(4096))
    result = run_cli("explain", "--gpu", "rtx-3090", "--model", str(folder), "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    data = result.json()
    assert data["request"]["model"] == "qwen3-32b" and data["request"]["model_facts"] == "files"
    top = data["plans"][0]
    assert top["engine"] == "llama.cpp" and top["quant"] == "gguf" and top["repo"] == "local/my-gguf"
    assert top["variant"] == "gguf-q4-k-m"
    # several quantizations: each is a variant with its own file and size; --variant picks one
    with (folder / "Qwen3-32B-Q8_0.gguf").open("wb") as handle:
        handle.truncate(3 * 2**30)  # sparse: the size is what counts
    (folder / "mmproj-F16.gguf").write_bytes(bytes(16))
    both = run_cli("explain", "--gpu", "rtx-3090", "--model", str(folder), "--format", "json", env=OFFLINE).json()
    assert "pick one with --variant: gguf-q4-k-m, gguf-q8-0" in both["request"]["understood_as"]
    args = ("--gpu", "rtx-3090", "--model", str(folder), "--variant", "gguf-q8-0", "--format", "json")
    picked = run_cli("explain", *args, env=OFFLINE).json()
    assert {p["variant"] for p in picked["plans"]} == {"gguf-q8-0"}
    assert picked["plans"][0]["memory"]["weights_gib"] == pytest.approx(3.0, abs=0.01)
    # without a base model the catalog knows, nothing is guessed
    (folder / "README.md").write_text("---\nbase_model: nobody/unknown\n---\n")
    unknown = run_cli("explain", "--gpu", "rtx-3090", "--model", str(folder), env=OFFLINE)
    assert unknown.code == 2 and "no config.json" in unknown.err and "nobody/unknown" in unknown.err


def test_yaml_draft_validates_in_a_user_folder(cogito_folder, tmp_path):
    draft = run_cli("inspect", str(cogito_folder), "--format", "yaml", env=OFFLINE)
    assert draft.code == 0, draft.err
    recipes = tmp_path / "recipes"
    (recipes / "models").mkdir(parents=True)
    (recipes / "models" / "cogito-14b.yaml").write_text(draft.out)
    assert run_cli("validate", str(recipes)).code == 0
    args = ("--recipes", str(recipes), "--gpu", "a100-80gb", "--model", "cogito-14b", "--format", "json")
    plan = run_cli("explain", *args)
    assert plan.code == 0, plan.err
    assert plan.json()["request"]["model_facts"] == "catalog"


# -- names without the network -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "model", "quant"),
    [
        ("unsloth/GLM-4.6-GGUF", "glm-4.6", "gguf"),  # community GGUF of a known family
        ("ZhipuAI/GLM-4.6", "glm-4.6", "bf16"),  # ModelScope / mirror organisation
        ("someone/Qwen3-32B-AWQ", "qwen3-32b", "awq"),  # same name as the official AWQ build
        ("RedHatAI/Qwen3-14B-NVFP4", "qwen3-14b", "nvfp4"),  # family + format word
        ("RedHatAI/Qwen3-14B-FP8-dynamic", "qwen3-14b", "fp8"),  # FP8 without a word for block scales
        ("RedHatAI/Llama-3.1-8B-Instruct-quantized.w4a16", "llama-3.1-8b", "int4"),
        ("someone/Qwen3-32B-GPTQ-Int4", "qwen3-32b", "gptq"),
        ("mradermacher/Qwen_Qwen3-14B-GGUF", "qwen3-14b", "gguf"),  # re-upload with the original org as prefix
        ("unsloth/gemma-3-27b-it-GGUF", "gemma-3-27b", "gguf"),
        ("bartowski/google_gemma-3-27b-it-GGUF", "gemma-3-27b", "gguf"),
        ("RedHatAI/gemma-3-12b-it-FP8-dynamic", "gemma-3-12b", "fp8"),
        ("unsloth/phi-4-GGUF", "phi-4", "gguf"),
        ("Qwen/Qwen3-VL-8B-Instruct-FP8", "qwen3-vl-8b", "fp8"),
    ],
)
def test_names_resolve_offline(name, model, quant):
    result = run_cli("explain", "--gpu", "h200", "--model", name, "--format", "json", env=OFFLINE)
    assert result.code in (0, 3), result.err
    data = result.json()
    assert data["request"]["model"] == model
    assert data["request"]["model_facts"] == "name"
    assert "inferred from the name" in data["request"]["understood_as"]
    assert name in data["request"]["understood_as"]
    variants = {p["variant"]: p for p in data["plans"]}
    chosen = data["request"]["variant"]
    assert chosen is not None
    if chosen in variants:
        assert variants[chosen]["quant"] == quant and variants[chosen]["repo"] == name
    else:  # blocked: the rejections still name the inferred variant
        assert any(r["variant"] == chosen for r in rejections(data))


def test_online_the_files_confirm_or_correct_the_name(hf_env):
    confirmed = run_cli(
        "explain", "--gpu", "h200", "--model", "mirror-org/Qwen3-235B-A22B-FP8", "--format", "json", env=hf_env
    )
    assert confirmed.code == 0, confirmed.err
    data = confirmed.json()
    assert data["request"]["model"] == "qwen3-235b-a22b" and data["request"]["model_facts"] == "files"
    assert "config.json confirms" in data["request"]["understood_as"]
    chosen = [p for p in data["plans"] if p["variant"] == data["request"]["variant"]]
    assert chosen and chosen[0]["quant"] == "fp8_block" and chosen[0]["repo"] == "mirror-org/Qwen3-235B-A22B-FP8"
    corrected = run_cli("explain", "--gpu", "h200", "--model", "liar/Qwen3-32B-FP8", "--format", "json", env=hf_env)
    assert corrected.code == 0, corrected.err
    request = corrected.json()["request"]
    assert request["model"] != "qwen3-32b" and request["model_facts"] == "files"
    assert "its name suggested Qwen3-32B, its files do not match it" in request["understood_as"]
    # no network: the name stands, and the output says so
    offline_env = {**hf_env, "HF_ENDPOINT": "http://127.0.0.1:9"}
    named = run_cli("explain", "--gpu", "h200", "--model", "ZhipuAI/GLM-4.6", "--format", "json", env=offline_env)
    assert named.code in (0, 3), named.err
    assert named.json()["request"]["model"] == "glm-4.6"
    assert "its files were not read" in named.json()["request"]["understood_as"]
    # the Hub says it has no such repo (a ModelScope name): a download of it would fail, so the plan
    # downloads the catalog repo of the same name, and says so
    moved = run_cli("explain", "--gpu", "h200", "--model", "ZhipuAI/GLM-4.6", "--format", "json", env=hf_env)
    assert moved.code == 0, moved.err
    doc = moved.json()
    assert "ZhipuAI/GLM-4.6 is not on" in doc["request"]["understood_as"]
    assert "the plan downloads zai-org/GLM-4.6" in doc["request"]["understood_as"]
    assert {p["repo"] for p in doc["plans"]} == {"zai-org/GLM-4.6"}
    # any other name the Hub does not have is an error naming it, never a download that will fail
    missing = run_cli("explain", "--gpu", "h200", "--model", "unsloth/GLM-4.6-GGUF", env=hf_env)
    assert missing.code == 2 and "no model repo unsloth/GLM-4.6-GGUF" in missing.err
    assert "zai-org/GLM-4.6-FP8" in missing.err and len(missing.err.strip().splitlines()) == 1


def test_names_that_no_engine_can_load_or_that_name_a_family():
    mlx = run_cli("explain", "--gpu", "h200", "--model", "mlx-community/Qwen3-32B-4bit-MLX", env=OFFLINE)
    assert mlx.code == 2 and "MLX" in mlx.err and "Qwen/Qwen3-32B" in mlx.err
    family = run_cli("explain", "--gpu", "h200", "--model", "qwen3", env=OFFLINE)
    assert family.code == 2 and "qwen3-32b (32B)" in family.err and "qwen3-14b" in family.err
    assert "qwen3-30b-a3b (30.5B, 3.3B active)" in family.err and len(family.err.strip().splitlines()) == 1
    # smallest first, so the list reads as a size ladder
    assert family.err.index("qwen3-0.6b") < family.err.index("qwen3-8b") < family.err.index("qwen3-235b")


def test_free_text_in_a_config_never_reaches_a_plan(tmp_path):
    folder = tmp_path / "hostile"
    folder.mkdir()
    config = json.loads((HUB_DATA / COGITO / "config.json").read_text())
    config["model_type"] = "qwen2\n$(touch /tmp/pwned)"
    config["torch_dtype"] = "bfloat16`id`"
    (folder / "config.json").write_text(json.dumps(config))
    result = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    facts = result.json()
    assert facts["model_type"] is None and "$(" not in result.out and "`" not in result.out
    assert facts["weight_format"]["quant"] is None  # an unreadable dtype is no format to plan with
    config["architectures"] = ["$(touch /tmp/pwned)"]
    (folder / "config.json").write_text(json.dumps(config))
    planned = run_cli("explain", "--gpu", "h100", "--model", str(folder), env=OFFLINE)
    assert planned.code == 2 and "names no architecture" in planned.err and "$(" not in planned.err


# -- the broader catalog -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hardware", "sm"),
    [
        ("rtx-a4000", "rtx-a4000", "sm86"),
        ("a6000", "rtx-a6000", "sm86"),
        ("rtx 6000 ada", "rtx-6000-ada", "sm89"),
        ("a40", "a40", "sm86"),
        ("a30", "a30", "sm80"),
        ("a10g", "a10", "sm86"),
        ("l40", "l40", "sm89"),
        ("3080", "rtx-3080", "sm86"),
        ("4080", "rtx-4080", "sm89"),
        ("5080", "rtx-5080", "sm120"),
        ("h100-nvl", "h100-nvl", "sm90"),
        ("gb300", "gb300", "sm103"),
        ("dgx station", "dgx-station-gb300", "sm103"),
        ("dell pro max gb10", "gb10", "sm121"),
        ("thinkstation-pgx", "gb10", "sm121"),
        ("a5000", "rtx-a5000", "sm86"),
        ("NVIDIA RTX A5000", "rtx-a5000", "sm86"),  # nvidia-smi's name
        ("3080 ti", "rtx-3080-ti", "sm86"),
        ("NVIDIA GeForce RTX 3080 Ti", "rtx-3080-ti", "sm86"),
    ],
)
def test_gpus_people_serve_on_resolve(name, hardware, sm):
    result = run_cli("explain", "--gpu", name, "--model", "qwen3-8b", "--format", "json")
    assert result.code in (0, 3), result.err
    request = result.json()["request"]
    assert request["hardware"] == hardware
    assert f"sm{request['compute_capability'].replace('.', '')}" == sm


def test_list_models_shows_the_new_families_with_their_sources():
    result = run_cli("list", "models", "--format", "json")
    assert result.code == 0
    table = {row["id"]: row for row in result.json()}
    families = ("qwen3-8b", "qwen3-30b-a3b", "qwen3-coder-480b-a35b", "llama-3.1-8b", "kimi-k2.5", "minimax-m2.7")
    families += ("gemma-3-1b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "phi-4", "devstral-small-2507")
    families += ("qwen3-vl-4b", "qwen3-vl-8b", "qwen3-vl-32b", "qwen3-vl-30b-a3b", "qwen3-vl-235b-a22b")
    families += ("qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b-thinking-2507")
    for family in families:
        assert table[family]["sources"] >= 2, family
    assert all(row["sources"] >= 1 for row in table.values())


def test_diagnose_takes_any_model_name_too():
    log = str(Path(__file__).resolve().parents[1] / "data" / "logs" / "vllm-no-attention-backend.log")
    args = ("diagnose", log, "--gpu", "a100", "--model", "unsloth/GLM-4.6-GGUF", "--format", "json")
    result = run_cli(*args, env=OFFLINE)
    assert result.code == 0, result.err
    assert result.json()["log"]["model"] == "glm-4.6"


def test_the_core_never_imports_huggingface_hub_for_catalog_names_or_folders(cogito_folder):
    import subprocess
    import sys as _sys

    for args in (["explain", "--gpu", "h200", "--model", "glm-5.2"], ["inspect", str(cogito_folder)]):
        run = subprocess.run(
            [_sys.executable, "-X", "importtime", "-m", "recipegen", *args], capture_output=True, text=True, check=False
        )
        assert run.returncode == 0, run.stderr[-500:]
        assert "huggingface_hub" not in run.stderr, args


# -- the families added for issue 12: Gemma 3, Phi-4, Devstral, Qwen3-VL --------------------------------------


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("microsoft/phi-4", "phi-4"),
        ("mistralai/Devstral-Small-2507", "devstral-small-2507"),
        ("Qwen/Qwen3-VL-30B-A3B-Instruct", "qwen3-vl-30b-a3b"),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b-instruct-2507"),
        ("Qwen/Qwen3-235B-A22B-Thinking-2507-FP8", "qwen3-235b-a22b-thinking-2507"),
        # point releases (issue 12)
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b-instruct-2507"),
        ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-4b-instruct-2507"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder-30b-a3b"),
        ("meta-llama/Llama-3.2-1B-Instruct", "llama-3.2-1b"),
        ("meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b"),
        ("MiniMaxAI/MiniMax-M2.1", "minimax-m2.1"),
        ("zai-org/GLM-4.7", "glm-4.7"),
        ("zai-org/GLM-4.7-FP8", "glm-4.7"),
    ],
)
def test_official_repo_ids_are_catalog_names_offline(name, model):
    result = run_cli("explain", "--gpu", "h100", "--model", name, "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    assert result.json()["request"]["model"] == model and result.json()["request"]["model_facts"] == "catalog"


def test_gemma3_27b_on_one_rtx_4090_runs_the_qat_gguf():
    result = run_cli("explain", "--gpu", "rtx-4090", "--model", "google/gemma-3-27b-it", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["verdict"] == "runnable" and data["request"]["gpus_per_node"] == 1
    qat = [p for p in data["plans"] if p["variant"] == "gguf-qat-q4-0"]
    assert qat and qat[0]["engine"] == "llama.cpp"
    assert qat[0]["memory"]["weights_gib"] == pytest.approx(17.2e9 / 2**30, rel=0.01)
    assert "gemma-3-27b-it-q4_0.gguf" in " ".join(qat[0]["argv"])
    # bf16 (about 54 GB) does not fit one 24 GiB card: forced, it runs only with weights offloaded to host RAM
    args = ("explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "gemma-3-27b", "--variant", "bf16")
    bf16 = run_cli(*args, "--engine", "vllm", "--build", "vllm-0.33.0", "--verbose")
    assert bf16.code == 0, bf16.err
    assert "the GPUs alone are too small" in bf16.out and "in host RAM" in bf16.out
    assert "sliding window: 52 layers × 1024 tokens" in bf16.out  # 10 of the 62 layers keep the full context


def test_phi4_on_rtx_4090_gguf_on_one_card_bf16_on_two_or_offloaded():
    best = run_cli("explain", "--gpu", "rtx-4090", "--model", "phi-4", "--format", "json")
    assert best.code == 0, best.err
    top = best.json()["plans"][0]
    # Q6_K (12.0 GB) and Q8_0 (15.6 GB) fit one 24 GB card with a usable context: either comes before the 4-bit Q4_K_M
    sizes = {"gguf-bartowski-q6-k": 12.03e9, "gguf-q8-0": 15.58e9}
    assert (top["gpus"], top["engine"]) == (1, "llama.cpp") and top["variant"] in sizes
    assert top["memory"]["weights_gib"] == pytest.approx(sizes[top["variant"]] / 2**30, rel=0.01)
    bf16 = run_cli("explain", "--gpu", "rtx-4090", "--model", "phi-4", "--variant", "bf16", "--format", "json")
    assert bf16.code == 0, bf16.err
    plan = bf16.json()["plans"][0]
    assert plan["gpus"] == 2 and plan["repo"] == "microsoft/phi-4" and "--cpu-offload-gb" not in plan["argv"]
    # ~29 GB of bf16 weights on one 24 GiB card: the plan says it offloads, and how much
    args = ("explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "phi-4", "--variant", "bf16", "--engine", "vllm")
    one = run_cli(*args, "--format", "json")
    assert one.code == 0, one.err
    argv = one.json()["plans"][0]["argv"]
    assert float(argv[argv.index("--cpu-offload-gb") + 1]) > 0


def test_devstral_vllm_plan_carries_the_mistral_format_flags(tmp_path):
    out = tmp_path / "devstral"
    args = ("--gpu", "rtx-4090", "--model", "mistralai/Devstral-Small-2507", "--engine", "vllm", "--out", str(out))
    result = run_cli(*args)
    assert result.code == 0, result.err
    plan = json.loads((out / "plan.json").read_text())["plans"][0]
    argv = plan["argv"]
    for flag in ("--tokenizer-mode", "--config-format", "--load-format"):
        assert argv[argv.index(flag) + 1] == "mistral", flag
    assert argv[argv.index("--tool-call-parser") + 1] == "mistral"
    assert "--tokenizer-mode" in (out / "README.md").read_text()


def test_qwen3_vl_needs_vllm_0_11_or_later():
    args = ("explain", "--gpu", "h200", "--model", "qwen3-vl-8b", "--engine", "vllm", "--build", "vllm==0.10.2")
    result = run_cli(*args, "--format", "json")
    assert result.code in (0, 3) and result.json()["verdict"] == "blocked"
    gates = {(r["build"], r["gate"]) for r in rejections(result.json())}
    assert ("vllm-0.10.2", "architecture") in gates
    newer = run_cli("explain", "--gpu", "h200", "--model", "qwen3-vl-8b", "--engine", "vllm", "--format", "json")
    assert newer.code == 0 and newer.json()["plans"][0]["engine"] == "vllm"


def test_thinking_2507_uses_the_thinking_reasoning_parser_in_sglang():
    args = ("explain", "--gpu", "h200", "--model", "Qwen/Qwen3-235B-A22B-Thinking-2507", "--engine", "sglang")
    result = run_cli(*args, "--format", "json")
    assert result.code == 0, result.err
    argv = result.json()["plans"][0]["argv"]
    assert argv[argv.index("--reasoning-parser") + 1] == "qwen3-thinking"
    instruct = run_cli("explain", "--gpu", "h200", "--model", "qwen3-235b-a22b-instruct-2507", "--format", "json")
    assert instruct.code == 0 and "--reasoning-parser" not in instruct.json()["plans"][0]["argv"]
    assert instruct.json()["plans"][0]["memory"]["context"] <= 262144

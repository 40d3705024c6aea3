"""The attention layouts beyond GQA/MLA/DSA, derived from real config.json files: DeepSeek-V4's compressed
attention, NoPE DSA with pooled indexer keys, and the hybrids whose other layers keep a recurrent state (KDA,
gated DeltaNet, MiniMax lightning attention). Derived facts and memory figures must equal the catalog's."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.hubserver import HUB_DATA, serve
from tests.support.same_facts import assert_same_facts

DATA = Path(__file__).resolve().parents[1] / "data"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
GLM53 = DATA / "reconstructed" / "GLM-5.3-Flash"  # see data/PROVENANCE.md: no copy of the real file was found


@pytest.fixture(scope="module")
def hub():  # type: ignore[no-untyped-def]
    with serve() as (url, state):
        yield url, state


@pytest.fixture
def hf_env(hub, tmp_path):  # type: ignore[no-untyped-def]
    url, _ = hub
    return {"HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0"}


def _bf16_shard(path: Path) -> None:
    """A real (tiny) safetensors file with one BF16 tensor: what a checkpoint's headers say about its dtype."""
    header = {"model.embed_tokens.weight": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [0, 16]}}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(16))


def _minimax_m1(tmp_path: Path) -> Path:
    """MiniMax-M1's config.json names no dtype; its safetensors headers do (BF16)."""
    folder = tmp_path / "MiniMax-M1"
    folder.mkdir()
    shutil.copy(HUB_DATA / "MiniMax-AI" / "MiniMax-M1" / "config.json", folder / "config.json")
    _bf16_shard(folder / "model-00000-of-00413.safetensors")
    return folder


def _read(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str):  # type: ignore[no-untyped-def]
    from recipegen.checkpoint import hub as hub_edge
    from recipegen.checkpoint.derive import derive

    if where == "minimax-m1":
        return derive(hub_edge.read(str(_minimax_m1(tmp_path)), headers=True))
    if where == "glm53":
        return derive(hub_edge.read(str(GLM53), headers=False))
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return derive(hub_edge.read(where, headers=False))


LAYOUTS = [
    ("deepseek-ai/DeepSeek-V4-Flash", "deepseek-v4-flash"),  # dsv4: CSA 4:1 + HCA 128:1 + window-only layers
    ("glm53", "glm-5.3-flash"),  # NoPE DSA (512-wide, keys pooled 4:1) + 34 KDA layers
    ("minimax-m1", "minimax-m1"),  # 10 GQA layers + 70 lightning-attention layers
    ("Qwen/Qwen3-Next-80B-A3B-Thinking", "qwen3-next-80b-a3b-thinking"),  # 12 gated GQA + 36 gated DeltaNet
    ("Qwen/Qwen3-Next-80B-A3B-Thinking", "qwen3-next-80b-a3b-instruct"),  # the Instruct release: same architecture
    ("moonshotai/Kimi-K3", "kimi-k3"),  # 24 NoPE MLA + 69 KDA layers under text_config, latent MoE
]


@pytest.mark.parametrize(("where", "model_id"), LAYOUTS)
def test_derived_layout_and_memory_equal_curated(hub, tmp_path, monkeypatch, catalog, where, model_id):
    from recipegen.plan.footprint import footprint

    derivation = _read(where, tmp_path, monkeypatch, hub[0])
    derived, curated = derivation.model, catalog.models[model_id]
    assert derived is not None, derivation.problem
    assert_same_facts(derived, curated)
    total = derived.params_total_b * 1e9
    if derivation.params_how != "computed from config.json shapes":  # the test's tiny shard was counted instead
        from recipegen.checkpoint.configfields import text_config
        from recipegen.checkpoint.sizes import estimate_params

        assert derivation.checkpoint.config is not None
        config = text_config(derivation.checkpoint.config)
        total, _ = estimate_params(
            config, derived.attention, derived.moe, derived.layers, None, derived.linear_attention
        )
    assert abs(total / 1e9 - curated.params_total_b) / curated.params_total_b < 0.03
    # KV bytes per token and the per-request window/state, as each engine layout stores them
    for kv, tp, slots in (("bf16", 1, 1), ("fp8_e4m3", 8, 1), ("fp8_ds_mla", 4, 1), ("bf16", 2, 3)):
        mine = footprint(derived, kv, tp, 1, slots)  # type: ignore[arg-type]
        assert mine == footprint(curated, kv, tp, 1, slots)  # type: ignore[arg-type]
    if curated.linear_attention is not None:  # the recurrent state is per request, never per token
        assert footprint(derived, "bf16", 1, 1, 1).state_per_request > 0  # type: ignore[union-attr]


def test_minimax_m1_weights_are_bf16_from_the_headers(tmp_path):
    folder = _minimax_m1(tmp_path)
    shown = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert shown.code == 0, shown.err
    facts = shown.json()
    assert facts["weight_format"]["quant"] == "bf16" and "headers" in facts["weight_format"]["label"]
    assert facts["derived"]["linear_attention"]["kind"] == "lightning"
    assert facts["derived"]["attention"]["layers"] == 10


@pytest.mark.parametrize(
    ("repo", "attention", "linear"),
    [
        (
            "deepseek-ai/DeepSeek-V4-Flash",
            {"kind": "dsv4", "num_kv_heads": 1, "head_dim": 512, "sliding_window": 128, "sliding_window_layers": 2},
            None,
        ),
        (
            "Qwen/Qwen3-Next-80B-A3B-Thinking",
            {"kind": "gqa", "num_heads": 16, "num_kv_heads": 2, "head_dim": 256, "layers": 12},
            {"kind": "gdn", "layers": 36, "num_heads": 32, "num_k_heads": 16, "conv_kernel": 4},
        ),
        (
            "Qwen/Qwen3.5-35B-A3B",  # a later GDN release: layer_types under text_config, mamba_ssm_dtype float32
            {"kind": "gqa", "num_heads": 16, "num_kv_heads": 2, "head_dim": 256, "layers": 10},
            {"kind": "gdn", "layers": 30, "num_heads": 32, "num_k_heads": 16, "state_bytes": 4},
        ),
        (
            "moonshotai/Kimi-K3",  # KimiLinear text model: KDA layers beside NoPE MLA layers
            {"kind": "mla", "num_heads": 96, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "layers": 24},
            {"kind": "kda", "layers": 69, "num_heads": 96, "head_k_dim": 128, "conv_kernel": 4},
        ),
    ],
)
def test_inspect_derives_the_layout_from_a_hub_repo(hf_env, repo, attention, linear):
    result = run_cli("inspect", repo, "--format", "json", "--no-headers", env=hf_env)
    assert result.code == 0, result.err
    facts = result.json()
    assert facts["status"] in ("derived", "catalog")  # catalog: the repo is a variant the catalog lists
    derived = facts["derived"]  # either way the facts were read from its config.json
    assert {k: derived["attention"].get(k) for k in attention} == attention
    if linear is None:
        assert derived["linear_attention"] is None
    else:
        assert {k: derived["linear_attention"].get(k) for k in linear} == linear
    text = run_cli("inspect", repo, "--no-headers", env=hf_env)
    if linear is not None:
        assert f"on {linear['layers']} layers" in text.out and "a fixed state per request" in text.out


def test_dsv4_compressed_layers_and_its_fp4_experts(hf_env):
    facts = run_cli("inspect", "deepseek-ai/DeepSeek-V4-Flash", "--format", "json", env=hf_env).json()
    assert facts["derived"]["attention"]["compressed"] == [{"ratio": 4, "layers": 21}, {"ratio": 128, "layers": 20}]
    assert facts["derived"]["attention"]["indexer"]["layers"] == 21  # only the CSA (4:1) layers carry it
    assert facts["weight_format"]["quant"] == "mixed_fp4_fp8"  # fp8 quantization_config, expert_dtype fp4
    assert facts["family"]["model"] == "deepseek-v4-flash"


def test_kimi_k3_mxfp4_and_latent_experts(hf_env):
    facts = run_cli("inspect", "moonshotai/Kimi-K3", "--format", "json", "--no-headers", env=hf_env).json()
    assert facts["weight_format"]["quant"] == "mxfp4"  # compressed-tensors mxfp4-pack-quantized, not NVFP4
    moe = facts["derived"]["moe"]
    assert (moe["experts"], moe["top_k"], moe["shared_experts"]) == (896, 16, 2)  # num_experts_per_token
    assert 2700 < facts["derived"]["params_total_b"] < 2900  # routed experts at routed_expert_hidden_size
    # vLLM 0.33.0 loads the class and has its KDA and MLA kernels; no checkpoint size is known, so memory is "?"
    planned = run_cli("explain", "--gpu", "b200", "--gpus", "8", "--model", "moonshotai/Kimi-K3", env=hf_env)
    assert planned.code == 0, planned.err
    assert "the size of moonshotai/Kimi-K3 is not in the catalog" in planned.out
    # SGLang's own model modules register the class from 0.5.17 on (EntryClass in sglang/srt/models/kimi_k3.py)
    assert "blocked (architecture: does not load KimiK3ForConditionalGeneration) until sglang-0.5.17" in planned.out
    history = run_cli("history", "--gpu", "b200", "--gpus", "8", "--model", "kimi-k3", "--engine", "vllm")
    # vLLM's registry lists the class from 0.27.1 on (its harvested registry.py)
    assert "blocked (architecture: does not load KimiK3ForConditionalGeneration) until vllm-0.27.1" in history.out


@pytest.mark.parametrize(
    ("folder", "gpu", "ops"),
    [
        (HUB_DATA / "Qwen" / "Qwen3-Next-80B-A3B-Thinking", ("h200", "2"), {"attention.gqa", "linear_attention.gdn"}),
        (GLM53, ("h200", "8"), {"attention.sparse_mla_nope", "indexer.dsa", "linear_attention.kda"}),
    ],
)
def test_explain_a_local_folder_of_such_a_config_is_derived(tmp_path, folder, gpu, ops):
    local = tmp_path / folder.name
    shutil.copytree(folder, local)
    args = ("explain", "--gpu", gpu[0], "--gpus", gpu[1], "--model", str(local), "--format", "json")
    result = run_cli(*args, env=OFFLINE)
    assert result.code == 0, result.err
    data = result.json()
    assert data["request"]["model_facts"] == "files"
    top = data["plans"][0]
    assert top["status"] == "derived"
    text = run_cli(*args[:-2], env=OFFLINE).out
    for op in ops:
        assert op in text, op


def test_a_hybrid_config_missing_its_state_fields_is_said_plainly(tmp_path):
    folder = tmp_path / "broken-next"
    folder.mkdir()
    config = json.loads((HUB_DATA / "Qwen" / "Qwen3-Next-80B-A3B-Thinking" / "config.json").read_text())
    del config["linear_num_value_heads"]
    (folder / "config.json").write_text(json.dumps(config))
    planned = run_cli("explain", "--gpu", "h200", "--model", str(folder), env=OFFLINE)
    assert planned.code == 2
    lines = planned.err.strip().splitlines()
    assert len(lines) == 1 and "linear_num_value_heads missing" in lines[0]
    del config["full_attention_interval"]
    (folder / "config.json").write_text(json.dumps(config))
    shown = run_cli("inspect", str(folder), env=OFFLINE)
    assert shown.code == 0 and "gated DeltaNet" in shown.out and "not derivable" in shown.out


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_gdn_state_per_request_is_vllms_state_shape(catalog, tp):
    """vLLM's gated_delta_net_state_shape, applied to config.json's fields: a bf16 conv state of
    (kernel-1) x (2 x key heads x key dim + value heads x value dim) / TP and an fp32 temporal state of
    value heads / TP x key dim x value dim, per gated DeltaNet layer."""
    from recipegen.plan.footprint import footprint

    config = json.loads((HUB_DATA / "Qwen" / "Qwen3-Next-80B-A3B-Thinking" / "config.json").read_text())
    layers = config["num_hidden_layers"] - config["num_hidden_layers"] // config["full_attention_interval"]
    kh, vh = config["linear_num_key_heads"], config["linear_num_value_heads"]
    kd, vd = config["linear_key_head_dim"], config["linear_value_head_dim"]
    conv = (config["linear_conv_kernel_dim"] - 1) * (kd * kh * 2 + vd * vh) // tp * 2
    temporal = vh // tp * kd * vd * 4
    fp = footprint(catalog.models["qwen3-next-80b-a3b-instruct"], "bf16", tp, 1, 1)
    assert fp.state_per_request == layers * (conv + temporal)  # type: ignore[union-attr]


def test_a_class_without_a_rule_still_shows_its_layout_fields(tmp_path):
    folder = tmp_path / "next-gen"
    folder.mkdir()
    config = json.loads((HUB_DATA / "deepseek-ai" / "DeepSeek-V4-Flash" / "config.json").read_text())
    config["architectures"] = ["DeepseekV5ForCausalLM"]  # a class recipegen has no rule for
    (folder / "config.json").write_text(json.dumps(config))
    shown = run_cli("inspect", str(folder), env=OFFLINE)
    assert shown.code == 0
    assert "status not derivable" in shown.out.splitlines()[0]
    assert "no engine in the catalog registers DeepseekV5ForCausalLM" in shown.out
    assert "compress_ratios: 3× 0, 21× 4, 20× 128" in shown.out
    planned = run_cli("explain", "--gpu", "h200", "--model", str(folder), env=OFFLINE)
    assert planned.code == 2 and "DeepseekV5ForCausalLM" in planned.err

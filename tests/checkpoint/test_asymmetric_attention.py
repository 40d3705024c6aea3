"""Attention whose window layers have a shape of their own and whose V is narrower than K, read from config.json
by the generic rule, as vLLM's model file for MiMo-V2-Flash builds it
(https://github.com/vllm-project/vllm/blob/01ed47b4166b26251895a9c298352fcdb2385149/vllm/model_executor/models/mimo_v2_flash.py):
MiMoV2FlashDecoderLayer gives a layer whose hybrid_layer_pattern entry is 1 swa_num_attention_heads,
swa_num_key_value_heads, swa_head_dim and swa_v_head_dim (default swa_head_dim) and a window of
sliding_window_size; the other layers num_attention_heads, num_key_value_heads, head_dim and v_head_dim. K is
head_dim wide and V v_head_dim wide (QKVParallelLinear with v_head_size; o_proj reads heads × v_head_dim), and the
cache of such a layer holds num_kv_heads × (head_size + head_size_v) per token (FlashAttentionDiffKVBackend's
get_kv_cache_shape, vllm/v1/attention/backends/flash_attn_diffkv.py at
https://github.com/vllm-project/vllm/blob/0305565b770a00c5e829360f28ce3228b38890ea/vllm/v1/attention/backends/flash_attn_diffkv.py),
num_kv_heads being max(1, total // tensor parallel size) per GPU (MiMoV2Attention). A window layer keeps at most
its window per request (SlidingWindowSpec). moe_layer_freq lists per layer whether it routes to experts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from recipegen.checkpoint.derive import derive
from recipegen.checkpoint.folder import read_folder
from recipegen.plan.footprint import footprint
from tests.support.cli import run_cli

MIMO = Path(__file__).resolve().parents[1] / "data" / "hub" / "XiaomiMiMo" / "MiMo-V2-Flash"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def _folder(tmp_path: Path, config: dict[str, Any], name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _mimo(tmp_path: Path) -> Path:
    folder = tmp_path / "MiMo-V2-Flash"
    folder.mkdir()
    shutil.copy(MIMO / "config.json", folder / "config.json")
    return folder


def _vllm_kv(c: dict[str, Any], tp: int, elem: int) -> tuple[int, int]:
    """(bytes per context token, bytes per request) on one GPU, as mimo_v2_flash.py and the DiffKV backend keep
    them: full layers per token, window layers at most the window per request."""
    per_token = per_request = 0
    for flag in c["hybrid_layer_pattern"][: c["num_hidden_layers"]]:
        if flag == 1:
            kv, k = c["swa_num_key_value_heads"], c["swa_head_dim"]
            v = c.get("swa_v_head_dim", k)
            per_request += max(1, kv // tp) * (k + v) * elem * c["sliding_window_size"]
        else:
            kv, k = c["num_key_value_heads"], c["head_dim"]
            v = c.get("v_head_dim", k)
            per_token += max(1, kv // tp) * (k + v) * elem
    return per_token, per_request


@pytest.mark.parametrize(("tp", "kv_dtype", "elem"), [(1, "bf16", 2), (4, "bf16", 2), (8, "fp8_e4m3", 1)])
def test_mimo_v2_flash_keeps_the_kv_cache_vllm_does(tmp_path, tp, kv_dtype, elem):
    folder = _mimo(tmp_path)
    derivation = derive(read_folder(folder, str(folder), headers=False))
    assert derivation.model is not None, derivation.problem
    c = json.loads((folder / "config.json").read_text())
    fp = footprint(derivation.model, kv_dtype, tp, 1, 1)
    assert not isinstance(fp, str) and hasattr(fp, "per_token"), fp
    per_token, per_request = _vllm_kv(c, tp, elem)
    assert (fp.per_token, fp.per_request) == (per_token, per_request)
    # 9 full layers × 4 KV heads × (192 + 128): not 2 × 192 per head, and not the full layers' heads in the window
    assert per_token == 9 * max(1, 4 // tp) * 320 * elem


def test_mimo_v2_flash_is_derived_with_its_window_shape_and_published_size(tmp_path):
    folder = _mimo(tmp_path)
    shown = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert shown.code == 0, shown.err
    derived = shown.json()["derived"]
    att = derived["attention"]
    assert (att["num_kv_heads"], att["head_dim"], att["v_head_dim"]) == (4, 192, 128)
    assert (att["sliding_window"], att["sliding_window_layers"]) == (128, 39)
    assert (att["window_num_kv_heads"], att["window_head_dim"], att["window_v_head_dim"]) == (8, 192, 128)
    assert derived["moe"]["dense_layers"] == 1  # moe_layer_freq: only layer 0 keeps a dense MLP
    published = json.loads((MIMO / "published-params.json").read_text())
    assert derived["params_total_b"] * 1e9 == pytest.approx(published["params_total"], rel=0.03)
    assert derived["params_active_b"] * 1e9 == pytest.approx(published["params_active"], rel=0.05)
    text = run_cli("inspect", str(folder), env=OFFLINE)
    assert "192 (K) / 128 (V)" in text.out and "8 KV heads" in text.out
    assert "attention.gqa(192/128)" in text.out


def _explained(folder: Path, gpu: str, build: str) -> dict[str, Any]:
    explained = run_cli(
        "explain", "--gpu", gpu, "--gpus", "8", "--model", str(folder), "--build", build, "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    return dict(explained.json())


def _kernel_gate(plan: dict[str, Any]) -> dict[str, Any]:
    return next(g for g in plan["gates"] if g["gate"] == "kernel")


@pytest.mark.parametrize(
    ("gpu", "backend"),
    [("h200", "FLASH_ATTN_DIFFKV"), ("a100", "TRITON_ATTN_DIFFKV"), ("l40s", "TRITON_ATTN_DIFFKV")],
)
def test_mimo_v2_flash_runs_on_the_backend_vllms_model_file_picks_for_a_v_narrower_than_k(tmp_path, gpu, backend):
    # vLLM 0.33.0's mimo_v2.py hands a layer whose V is narrower than K to FLASH_ATTN_DIFFKV where FlashAttention 3
    # or 4 is usable (9.0, 10.x), else to TRITON_ATTN_DIFFKV (any K width from 32, every capability Triton attention
    # runs on), past the selector whose harvested cases state one width for K and V: the kernel gate says which,
    # citing that file, and the cache keeps K 192 + V 128 per KV head
    doc = _explained(_mimo(tmp_path), gpu, "vllm-0.33.0")
    assert doc["plans"], doc["rejected"]
    plan = doc["plans"][0]
    gate = _kernel_gate(plan)
    assert gate["outcome"] == "pass" and f"{backend} (attention.gqa)" in gate["reason"], gate
    urls = [s["url"] for s in doc["sources"].values()]
    assert "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/models/mimo_v2.py" in urls
    c = json.loads((MIMO / "config.json").read_text())
    elem = 1 if "fp8" in plan["settings"]["kv_cache_dtype"] else 2
    assert plan["memory"]["kv_bytes_per_token"] == _vllm_kv(c, 8, elem)[0]


def test_mimo_v2_flash_on_the_releases_that_pad_v_caches_v_as_wide_as_k(tmp_path):
    # vLLM 0.14.0-0.19.0's mimo_v2_flash.py pads V with zeros to head_dim and builds Attention with head_dim alone:
    # the ordinary selector serves it at K's width, and the cache holds V 192 wide too
    doc = _explained(_mimo(tmp_path), "h200", "vllm-0.19.0")
    plan = doc["plans"][0]
    assert "FLASH_ATTN" in _kernel_gate(plan)["reason"]
    c = {**json.loads((MIMO / "config.json").read_text()), "v_head_dim": 192, "swa_v_head_dim": 192}
    elem = 1 if "fp8" in plan["settings"]["kv_cache_dtype"] else 2
    assert plan["memory"]["kv_bytes_per_token"] == _vllm_kv(c, 8, elem)[0] == 9 * 1 * 384 * elem


def test_mimo_v2_flash_is_unknown_where_the_release_runs_code_not_read(tmp_path):
    # vLLM 0.20.1-0.23.0 always use FlashAttentionDiffKVBackend: FlashAttention 3 on Hopper, else FlashAttention 2
    # (or 4), whose support for V narrower than K was not read
    folder = _mimo(tmp_path)
    assert _kernel_gate(_explained(folder, "h200", "vllm-0.21.0")["plans"][0])["outcome"] == "pass"
    for gpu, build, cited in (
        (
            "a100",
            "vllm-0.21.0",
            "https://github.com/vllm-project/vllm/blob/v0.23.0/vllm/model_executor/models/mimo_v2.py",
        ),
    ):
        doc = _explained(folder, gpu, build)
        assert not doc["plans"]
        assert [(r["gate"], r["outcome"]) for r in doc["rejected"]] == [("kernel", "unknown")]
        reason = doc["reasons"][doc["rejected"][0]["reason_id"]]
        assert "V width 128" in reason["reason"] and "unknown" in reason["reason"], reason
        assert cited in [doc["sources"][sid]["url"] for sid in reason["sources"]], reason


@pytest.mark.parametrize(
    ("gpu", "build", "backend", "flag"),
    [
        ("h200", "sglang-0.5.8", "fa3", None),  # the Hopper default, and the authors' --attention-backend fa3
        ("l40s", "sglang-0.5.9", "triton", "triton"),  # the default there, flashinfer, holds K and V at one width
        ("b200", "sglang-0.5.12", "triton", "triton"),  # the 10.x default trtllm_mha refuses unequal widths
        ("rtx-pro-6000", "sglang-0.5.12", "triton", None),  # the default for a model with attention sinks
        ("b200", "sglang-0.5.23", "fa4", None),  # 0.5.17 on: fa4 on 10.x when K and V widths differ
        ("h200", "sglang-0.5.23", "fa3", None),
    ],
)
def test_mimo_v2_flash_on_sglang_runs_on_the_server_wide_backend_that_carries_v_s_own_width(
    tmp_path, gpu, build, backend, flag
):
    # SGLang's MiMoV2Attention hands RadixAttention its v_head_dim and lets the server-wide backend serve it; the
    # release's code carries V's width through fa3, fa4 and triton only, so the plan passes --attention-backend
    # where the release's default on that GPU is another one
    doc = _explained(_mimo(tmp_path), gpu, build)
    assert doc["plans"], doc["rejected"]
    plan = doc["plans"][0]
    assert f"{backend} (attention.gqa)" in _kernel_gate(plan)["reason"]
    pinned = [f.get("value") for f in plan["flags"] if f["flag"] == "--attention-backend"]
    assert pinned == ([flag] if flag else [])
    urls = [s["url"] for s in doc["sources"].values()]
    assert any(u.startswith("https://github.com/sgl-project/sglang/blob/v0.5.") for u in urls)


def test_a_sglang_command_pinning_flashinfer_for_mimo_v2_flash_is_refused_and_a_missing_triton_pin_flagged(
    tmp_path,
):
    serve = ("--", "python", "-m", "sglang.launch_server", "--model-path", "XiaomiMiMo/MiMo-V2-Flash", "--tp-size", "8")
    pinned = run_cli("lint", "--format", "json", "--gpu", "rtx-pro-6000", "--build", "sglang-0.5.23", *serve,
                     "--attention-backend", "flashinfer", env=OFFLINE)  # fmt: skip
    assert pinned.code == 1, pinned.err
    (hit,) = [f for f in pinned.json()["findings"] if f["flag"] == "--attention-backend"]
    assert hit["severity"] == "error" and "one width" in hit["why"]
    bare = run_cli("lint", "--format", "json", "--gpu", "b200", "--build", "sglang-0.5.12", *serve, env=OFFLINE)
    (need,) = [f for f in bare.json()["findings"] if f["flag"] == "--attention-backend"]
    assert need["code"] == "required-arg" and need["fix"] == "--attention-backend triton"
    fine = run_cli("lint", "--format", "json", "--gpu", "b200", "--build", "sglang-0.5.23", *serve, env=OFFLINE)
    assert not [f for f in fine.json()["findings"] if f["flag"] == "--attention-backend"]


# a smaller config of the same class and traits (window layers with KV heads of their own), K and V equally
# wide, so the default attention backends serve it and the catalog's kernels cover it: the plan is made
SAME_SHAPE: dict[str, Any] = {
    "architectures": ["MiMoV2FlashForCausalLM"],
    "model_type": "mimo_v2_flash",
    "num_hidden_layers": 8,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "swa_num_attention_heads": 16,
    "swa_num_key_value_heads": 8,
    "swa_head_dim": 128,
    "intermediate_size": 8192,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "sliding_window_size": 512,
    "hybrid_layer_pattern": [1, 1, 1, 0, 1, 1, 1, 0],
    "attention_bias": False,
    "layernorm_epsilon": 1e-05,
    "hidden_act": "silu",
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def test_window_layers_with_their_own_kv_heads_plan_their_own_cache(tmp_path):
    folder = _folder(tmp_path, SAME_SHAPE, "window-shaped")
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    plan = explained.json()["plans"][0]
    elem = 1 if "fp8" in plan.get("kv_dtype", "") else 2
    memory = plan["memory"]
    assert memory["kv_bytes_per_token"] == 2 * 2 * (128 + 128) * elem  # 2 full layers × 2 KV heads
    assert memory["per_request_bytes"] == 6 * 8 * (128 + 128) * elem * 512  # 6 window layers × 8 KV heads
    c = SAME_SHAPE
    full = c["hidden_size"] * (16 * 128 * 2 + 2 * 2 * 128)
    window = c["hidden_size"] * (16 * 128 * 2 + 2 * 8 * 128)
    expected = 2 * 32000 * 2048 + 2 * full + 6 * window + 8 * 3 * 2048 * 8192
    shown = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()
    assert shown["derived"]["params_total_b"] == pytest.approx(expected / 1e9, abs=0.0005)


def test_window_layers_whose_heads_do_not_split_are_refused_at_the_topology_gate(tmp_path):
    config = {**SAME_SHAPE, "swa_num_key_value_heads": 3}
    folder = _folder(tmp_path, config, "odd-window")
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "2", "--model", str(folder), "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    doc = explained.json()
    assert not doc["plans"]
    reasons = [doc["reasons"][r["reason_id"]]["reason"] for r in doc["rejected"] if r["gate"] == "topology"]
    assert reasons and "window layers' 3 KV heads" in reasons[0]


def test_a_window_shape_with_no_window_layers_named_is_refused_naming_the_field(tmp_path):
    config = {k: v for k, v in SAME_SHAPE.items() if k != "hybrid_layer_pattern"}
    folder = _folder(tmp_path, config, "no-pattern")
    shown = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert shown.code == 0, shown.err
    assert "swa_num_key_value_heads" in shown.json()["problem"]


def test_window_layers_named_by_layer_types_take_the_window_shape_too(tmp_path):
    # another spelling of the same traits: layer_types names the window layers, swa_* states their shape
    config = {k: v for k, v in SAME_SHAPE.items() if k not in ("hybrid_layer_pattern", "sliding_window_size")}
    types = ["sliding_attention"] * 3 + ["full_attention"]
    config |= {"architectures": ["WindowShapedForCausalLM"], "layer_types": types * 2, "sliding_window": 512}
    shown = run_cli("inspect", str(_folder(tmp_path, config, "layer-types")), "--format", "json", env=OFFLINE)
    assert shown.code == 0, shown.err
    att = shown.json()["derived"]["attention"]
    assert (att["sliding_window"], att["sliding_window_layers"], att["window_num_kv_heads"]) == (512, 6, 8)


def test_an_absurd_window_head_count_is_named_in_one_line(tmp_path):
    config = {**SAME_SHAPE, "swa_num_key_value_heads": 10**12}
    shown = run_cli("inspect", str(_folder(tmp_path, config, "absurd")), env=OFFLINE)
    assert shown.code == 0, shown.err
    assert "swa_num_key_value_heads 1000000000000 is out of range" in shown.out
    assert "Traceback" not in shown.out + shown.err

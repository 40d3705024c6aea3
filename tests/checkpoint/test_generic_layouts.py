"""Classes without a recipe in recipes/models are laid out from their own config.json: real config.json files
(tests/data/configs, see PROVENANCE.md; tests/data/transcribed holds the ones a public repository quotes as a
dict, not byte for byte), each planned from a local folder, parameters within 3 % of the
index's total_size (or of the weight file's size where the repo has one file and no index, or of the parameter
count the authors publish where no index was found), the KV cache per token as vLLM v0.33.0 computes it per GPU
(or the last vLLM release that registers the class, where v0.33.0 no longer does), by the rule KV_RULE names for
the class, each assertion citing the model file vLLM's registry names for it in that release (its harvested
registry's module, _formula_file). A multimodal config's language model is its text_config, InternVL's llm_config
or DeepSeek-OCR's language_config. A float32 checkpoint is
served in 16 bits (vLLM's dtype auto: _resolve_auto_dtype in vllm/config/model.py), so its cache is 16-bit too,
and its weights on the GPU are half the files' bytes; the plan's weights are the index's total_size so served
(within 3 %), less a stored copy of a tied head vLLM does not load. A vision-language class's parameters include
its vision tower (vLLM loads it beside the language model).

vLLM's formula, per GPU: get_num_kv_heads = max(1, total KV heads // tensor parallel size)
(https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/model.py); the total KV heads and the head size
from ModelArchConfigConvertorBase.get_total_num_kv_heads / get_head_size
(https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/transformers_utils/model_arch_config_convertor.py:
n_head_kv / num_kv_heads / num_key_value_heads / multi_query_group_num, else the heads, Falcon's multi_query
without new_decoder_architecture 1; head_dim, else hidden_size // heads). Per kind of layer
(https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/kv_cache_interface.py):
- full attention (FullAttentionSpec): 2 (K and V) × KV heads per GPU × head size × dtype bytes, every layer;
- sliding-window layers (SlidingWindowSpec): at most the window's tokens per request, so none per context
  token; Gemma 2 alternates them with full layers (Gemma2Config's layer_types, read by
  vllm/model_executor/models/gemma2.py); a layer given no window of its own takes the model-level
  sliding_window (Attention's cache_config.sliding_window, vllm/model_executor/layers/attention/attention.py,
  set from ModelConfig.get_sliding_window in vllm/engine/arg_utils.py), so a config whose sliding_window is
  shorter than its context windows every layer (PhiMoE);
- gated-DeltaNet hybrids (MambaSpec for the linear layers, vllm/model_executor/models/qwen3_5.py): a fixed
  state per request; only the full-attention layers (every full_attention_interval-th, or layer_types) keep
  KV per token;
- Mamba / short-conv hybrids (MambaSpec, vllm/model_executor/models/lfm2.py: the attention layers are
  full_attn_idxs): the same, with the state shaped by MambaStateShapeCalculator
  (https://github.com/vllm-project/vllm/blob/02d710837549a368073552333f66d714477415d2/vllm/model_executor/layers/mamba/mamba_utils.py);
  Nemotron-H names each layer in hybrid_override_pattern (vllm/model_executor/models/nemotron_h.py: M Mamba-2,
  * attention, - MLP, E MoE), so only its * layers keep KV;
- Nemotron-NAS (DeciLM, vllm/model_executor/models/nemotron_nas.py): block_configs per layer; a layer whose
  attention is no_op has none, the others num_attention_heads // n_heads_in_group KV heads;
- full layers of a shape of their own (Gemma 4, vllm/model_executor/models/gemma4.py: each layer's head_dim and
  KV heads from the config's per_layer_config, global_head_dim and num_global_key_value_heads on a full_attention
  layer): K and V of that shape on the full layers per token, the window layers' base shape per request;
- multi-head latent attention (MLAAttentionSpec, vllm/model_executor/models/deepseek_v2.py): one latent of
  kv_lora_rank + qk_rope_head_dim per layer and token, the same on every GPU (it is not split by heads).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from recipegen.catalog import harvest
from tests.support.cli import Result, run_cli
from tests.support.contract import rejections

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
TRANSCRIBED = CONFIGS.parent / "transcribed"
HUB = CONFIGS.parent / "hub"
# each class's folder of test data: a verbatim config.json, or one a public repository quotes as a dict
CLASSES = {p.name: p for root in (CONFIGS, TRANSCRIBED) for p in root.iterdir() if p.is_dir()}
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
# the field names older classes use for the same facts (transformers' attribute_map, vLLM's ChatGLMConfig)
ALIASES = {
    "num_hidden_layers": ("n_layer", "num_layers", "n_layers"),
    "num_attention_heads": ("n_head", "n_heads"),
    "hidden_size": ("n_embd", "n_embed", "d_model"),
    "vocab_size": ("padded_vocab_size",),
}
# the repo's index lists lm_head.weight beside the word embeddings it is tied to (the configs state no
# tie_word_embeddings, whose default is true); vLLM's falcon.py and gemma.py use the embeddings as the head,
# so that stored copy is not part of the weights on the GPU
STORED_TIED_HEAD = {"FalconForCausalLM", "GemmaForCausalLM"}
# GPT-2's model.safetensors also stores each layer's causal-mask buffer h.N.attn.bias (1×1×n_positions×n_positions
# float32), which vLLM's gpt2.py drops on load (".attn.bias": None): file bytes, not weights
STORED_MASKS = {"GPT2LMHeadModel"}
# BLOOM's config.json (transformers 4.21) names no dtype, so it reads as float32, but its shards hold bfloat16
# tensors: the index's total_size is 2 bytes a parameter (https://huggingface.co/bigscience/bloom lists the
# weights as bf16)
STORED_16_BIT = {"BloomForCausalLM"}
# AIN (a Qwen2-VL-7B fine-tune): config.json names bfloat16, but its index's total_size is 4 bytes for each of the
# 8.29B parameters (https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct lists 8.29B): float32 shards, which vLLM's
# dtype auto loads in the config's bfloat16, half the files' bytes on the GPU; the same for a MiniCPM-Llama3-V-2.5
# copy whose config names float16 (https://huggingface.co/openbmb/MiniCPM-Llama3-V-2_5 lists 8.54B parameters), and
# the InternVideo2.5 and DeepSeek-OCR copies whose language model config names bfloat16 (float32 at the top level)
STORED_32_BIT = {"Qwen2VLForConditionalGeneration", "MiniCPMV", "InternVLChatModel", "DeepseekOCRForCausalLM"}


def _language_model(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's own fields: text_config, InternVL's llm_config (the text model vLLM's internvl.py
    builds), DeepSeek-OCR's language_config (deepseek_ocr.py's text_config)."""
    return next((config[k] for k in ("text_config", "llm_config", "language_config") if k in config), {})


def _field(c: dict[str, Any], key: str) -> Any:
    return next((c[k] for k in (key, *ALIASES.get(key, ())) if c.get(k) is not None), None)


def _published(arch: str) -> int | None:
    """The parameter count the model's authors publish, where no index of the checkpoint was found."""
    published = CLASSES[arch] / "published-params.json"
    return int(json.loads(published.read_text())["params_total"]) if published.exists() else None


def _total(arch: str) -> int:
    index = CLASSES[arch] / "index-metadata.json"
    if index.exists():
        return int(json.loads(index.read_text())["metadata"]["total_size"])
    files = CLASSES[arch] / "weight-files.json"
    if files.exists():
        return sum(json.loads(files.read_text())["files"].values())
    config = json.loads((CLASSES[arch] / "config.json").read_text())
    dtype = config.get("torch_dtype") or config.get("dtype") or "float32"
    return (_published(arch) or 0) * BYTES[dtype]  # no index found: the published count, in its dtype


def _folder(tmp_path: Path, arch: str) -> Path:
    folder = tmp_path / arch
    folder.mkdir()
    shutil.copy(CLASSES[arch] / "config.json", folder / "config.json")
    # the weight_map's one entry that matters here: the stored copy of a tied head, which the real index lists
    weight_map = {"lm_head.weight": "model-00002-of-00002.safetensors"} if arch in STORED_TIED_HEAD else {}
    index = {"metadata": {"total_size": _total(arch)}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return folder


def _explain_on_vllm(folder: Path, tp: int) -> Result:
    """`recipegen explain --format json` of a local folder on tp × H200 with vLLM, which must answer."""
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", str(tp), "--model", str(folder), "--engine", "vllm",
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    return explained


def _kv_heads(c: dict[str, Any]) -> int:
    if c.get("multi_query") and not c.get("new_decoder_architecture"):
        return 1
    for key in ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num"):
        if c.get(key):
            return int(c[key])
    if isinstance(c.get("block_configs"), list):  # nemotron_nas.py: heads // n_heads_in_group, per attention layer
        groups = {b["attention"]["n_heads_in_group"] for b in c["block_configs"] if not b["attention"]["no_op"]}
        assert len(groups) == 1, groups
        return int(c["num_attention_heads"]) // groups.pop()
    if isinstance(c.get("attn_config"), dict) and c["attn_config"].get("kv_n_heads"):
        return int(c["attn_config"]["kv_n_heads"])  # DbrxModelArchConfigConvertor.get_total_num_kv_heads
    return int(_field(c, "num_attention_heads"))


# The rule by which vLLM keeps K and V per context token, per class (the kinds in the module docstring), read in
# the model file that vLLM's registry names for the class (_formula_file, cited in every assertion):
# full: every layer; layer_types: the layers typed full_attention; gemma2: every other layer (gemma2.py);
# window: none, the model-level sliding_window windows every layer; block_configs: the NAS blocks whose attention
# is not no_op (nemotron_nas.py); pattern: the * layers of hybrid_override_pattern (nemotron_h.py);
# full_attn_idxs: the attention layers of a short-conv hybrid (lfm2.py); mla: one latent per layer (deepseek_v2.py);
# every_nth: a config with no layer_types but sliding_window_pattern N, whose every N-th layer is global and the
# others windowed (Gemma3TextConfig builds layer_types so, and gemma3.py reads them);
# global: the layers typed full_attention, each num_global_key_value_heads × global_head_dim (gemma4.py's
# per_layer_config), the window layers keeping the base shape per request.
KV_RULE = {
    "BaichuanForCausalLM": "full", "BailingMoeForCausalLM": "full", "BloomForCausalLM": "full",
    "ChatGLMForConditionalGeneration": "full", "ChatGLMModel": "full", "CohereForCausalLM": "full",
    "DbrxForCausalLM": "full", "DeciLMForCausalLM": "block_configs", "DeepseekForCausalLM": "full",
    "DeepseekOCR2ForCausalLM": "full", "DeepseekOCRForCausalLM": "full", "DeepseekV2ForCausalLM": "mla",
    "Ernie4_5_ForCausalLM": "full", "FalconForCausalLM": "full", "FuyuForCausalLM": "full", "GPT2LMHeadModel": "full",
    "GPTBigCodeForCausalLM": "full", "GPTJForCausalLM": "full", "GPTNeoXForCausalLM": "full",
    "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "every_nth", "Gemma4ForConditionalGeneration": "global",
    "GemmaForCausalLM": "full",
    "GraniteMoeForCausalLM": "full", "HunYuanMoEV1ForCausalLM": "full", "Idefics3ForConditionalGeneration": "full",
    "InternLM2ForCausalLM": "full", "InternLMForCausalLM": "full", "InternVLChatModel": "full",
    "Lfm2ForCausalLM": "full_attn_idxs", "LightOnOCRForConditionalGeneration": "layer_types", "MPTForCausalLM": "full",
    "MiMoForCausalLM": "full", "MiniCPMV": "full", "MixtralForCausalLM": "full", "NemotronHForCausalLM": "pattern",
    "OPTForCausalLM": "full", "Olmo2ForCausalLM": "full", "OlmoeForCausalLM": "full",
    "PaliGemmaForConditionalGeneration": "full", "PanguEmbeddedForCausalLM": "full", "PhiForCausalLM": "full",
    "PhiMoEForCausalLM": "window", "QWenLMHeadModel": "full", "Qwen2MoeForCausalLM": "full",
    "Qwen2VLForConditionalGeneration": "full", "Qwen2_5_VLForConditionalGeneration": "full",
    "Qwen3_5ForCausalLM": "layer_types", "Qwen3_5ForConditionalGeneration": "layer_types",
    "Qwen3_5MoeForConditionalGeneration": "layer_types",
    "SmolLM3ForCausalLM": "layer_types", "StableLMEpochForCausalLM": "full", "StableLmForCausalLM": "full",
    "Starcoder2ForCausalLM": "window",
}  # fmt: skip


def _kv_layers(c: dict[str, Any], rule: str) -> int:
    """The layers that keep K and V per context token, by the class's rule."""
    layers = int(_field(c, "num_hidden_layers"))
    if rule in ("layer_types", "global"):
        return sum(1 for t in c["layer_types"][:layers] if t == "full_attention")
    if rule == "block_configs":
        return sum(1 for b in c["block_configs"][:layers] if not b["attention"]["no_op"])
    if rule == "pattern":
        return int(c["hybrid_override_pattern"][:layers].count("*"))
    if rule == "full_attn_idxs":
        return len(c["full_attn_idxs"])
    if rule == "gemma2":
        return layers // 2
    if rule == "every_nth":  # every sliding_window_pattern-th layer global, the others windowed
        return layers // int(c["sliding_window_pattern"])
    if rule == "window":
        assert c["sliding_window"] < c["max_position_embeddings"], "a window as long as the context windows nothing"
        return 0
    return layers


def _formula_file(build: str, arch: str) -> str:
    """The model file vLLM's registry names for the class in that release (its harvested registry)."""
    release = build.split("-", 1)[1]
    module = harvest.detail("vllm", release)["architectures"][arch]["module"]
    path = f"{module}/" if module == "transformers" else f"{module}.py"  # the Transformers backend is a package
    return f"https://github.com/vllm-project/vllm/blob/v{release}/vllm/model_executor/models/{path}"


def _version(build: str) -> tuple[int, ...]:
    return tuple(int(p) for p in build.split("-", 1)[1].split(".") if p.isdigit())


def _tp(heads: int, kv: int) -> int:
    """The widest tensor-parallel split of 8 GPUs that vLLM accepts for these heads."""
    return next(tp for tp in (8, 4, 2, 1) if heads % tp == 0 and (kv % tp == 0 or tp % kv == 0))


def test_every_class_with_a_real_config_names_the_rule_vllm_keeps_its_cache_by():
    assert sorted(KV_RULE) == sorted(CLASSES)


@pytest.mark.parametrize("arch", sorted(CLASSES))
def test_a_class_without_a_recipe_is_planned_from_its_config(tmp_path, arch):
    folder = _folder(tmp_path, arch)
    config = json.loads((folder / "config.json").read_text())
    c = {**config, **_language_model(config)}
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    data = report.json()
    assert data["status"] == "derived", data["problem"]
    assert data["rule_from"] in ("generic", "class"), data["rule_from"]
    per_weight = 2 if arch in STORED_16_BIT else BYTES[c.get("torch_dtype") or c.get("dtype") or "float32"]
    per_weight = 4 if arch in STORED_32_BIT else per_weight
    total = _total(arch)
    if arch in STORED_TIED_HEAD:
        total -= _field(c, "vocab_size") * _field(c, "hidden_size") * per_weight
    if arch in STORED_MASKS:
        total -= _field(c, "num_hidden_layers") * c["n_positions"] ** 2 * per_weight
    expected = _published(arch) or total / per_weight
    assert data["derived"]["params_total_b"] * 1e9 == pytest.approx(expected, rel=0.03)

    heads = int(_field(c, "num_attention_heads"))
    head_dim = c.get("head_dim") or _field(c, "hidden_size") // heads
    kv = _kv_heads(c)
    tp = _tp(heads, kv)
    # vLLM's newest release where it loads the class, else the newest vLLM build that did (MPT left vLLM's
    # registry after 0.28.0, Qwen v1 after 0.23.0): the per-token K and V per layer are the same formula there
    loaded_by = data["loaded_by"]
    vllm_builds = sorted((b for b in loaded_by if b.startswith("vllm-")), key=_version)
    vllm_build = "vllm-0.33.0" if "vllm-0.33.0" in loaded_by else vllm_builds[-1]
    build = ["--engine", "vllm"] if vllm_build == "vllm-0.33.0" else ["--build", vllm_build]
    formula = _formula_file(vllm_build, arch)
    engine = "vllm"
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", str(tp), "--model", str(folder), *build, "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    plans = explained.json()["plans"]
    assert plans, [r["reason"] for r in rejections(explained.json()) if r["engine"] == engine][:3]
    if data["rule_from"] == "generic":
        assert "generic" in explained.json()["request"]["understood_as"]
    plan = plans[0]
    assert plan["gpus"] == tp
    # the weights the plan puts on the GPUs: the files' tensor bytes, in 16 bits where the files hold float32
    # (vLLM's dtype auto), less what vLLM does not load (a stored copy of a tied head, GPT-2's mask buffers)
    served = (total if _published(arch) is None else expected * per_weight) * 2 / per_weight
    if arch not in STORED_MASKS:  # not yet: the plan counts GPT-2's mask buffers, 3.5 % of its file
        rounding = 0.005 * 2**30 * tp  # weights_gib is stated per GPU to 2 decimals
        assert plan["memory"]["weights_gib"] * 2**30 * tp == pytest.approx(served, rel=0.03, abs=rounding)
    per_element = 1 if "fp8" in plan.get("kv_dtype", "") else 2
    per_gpu = max(1, kv // tp)  # vLLM: max(1, total KV heads // tensor parallel size)
    rule = KV_RULE[arch]
    if rule == "global":  # the full layers' own shape: vLLM's gemma4.py reads it per layer (per_layer_config)
        per_gpu, head_dim = max(1, c["num_global_key_value_heads"] // tp), c["global_head_dim"]
    expected = _kv_layers(c, rule) * 2 * per_gpu * head_dim * per_element
    if rule == "mla":  # one latent per layer, whatever the split
        expected = _kv_layers(c, "full") * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * per_element
    assert plan["memory"]["kv_bytes_per_token"] == expected, f"{arch}: vLLM's {rule} rule in {formula}"


def test_a_missing_layer_count_is_named_with_the_names_that_stand_for_it(tmp_path):
    # GPT-J's real config with its layer count (n_layer) taken out: the plan stops at one line naming it
    folder = _folder(tmp_path, "GPTJForCausalLM")
    config = json.loads((folder / "config.json").read_text())
    del config["n_layer"]
    (folder / "config.json").write_text(json.dumps(config))
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.json()["status"] == "not derivable"
    assert "num_hidden_layers (nor n_layer / num_layers / n_layers)" in report.json()["problem"]
    planned = run_cli("--gpu", "h200", "--gpus", "1", "--model", str(folder), env=OFFLINE)
    assert planned.code != 0 and "Traceback" not in planned.err
    assert "the generic rule does not apply: config.json has no num_hidden_layers (nor n_layer" in planned.err


def test_a_model_whose_every_layer_is_windowed_plans_its_cache_per_request(tmp_path):
    # zephyr-7b-beta (MistralForCausalLM): sliding_window 4096 on all 32 layers, below its 32768-token context.
    # vLLM's SlidingWindowSpec keeps at most the window per request, so no KV grows with the context.
    source = CONFIGS.parent / "windowed" / "MistralForCausalLM"
    folder = tmp_path / "zephyr"
    folder.mkdir()
    shutil.copy(source / "config.json", folder / "config.json")
    total = json.loads((source / "index-metadata.json").read_text())["metadata"]["total_size"]
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
    c = json.loads((folder / "config.json").read_text())
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    plan = explained.json()["plans"][0]
    memory = plan["memory"]
    per_element = 1 if "fp8" in plan.get("kv_dtype", "") else 2
    window = c["num_hidden_layers"] * 2 * c["num_key_value_heads"] * 128 * per_element * c["sliding_window"]
    assert memory["kv_bytes_per_token"] == 0
    assert memory["per_request_bytes"] == window
    assert memory["full_length_requests"] > 0


# vLLM's MambaStateShapeCalculator and MambaStateDtypeCalculator, per layer and request (mamba_utils.py at the
# commit cited in the module docstring): short_conv_state_shape(tp, hidden_size, conv_L_cache) is one conv state
# of (hidden_size / tp) × (conv_L_cache − 1) elements, in the model dtype (mamba_cache_dtype auto).
def _short_conv_state_bytes(c: dict[str, Any], tp: int) -> int:
    conv_layers = c["num_hidden_layers"] - len(c["full_attn_idxs"])
    return conv_layers * (c["hidden_size"] // tp) * (c["conv_L_cache"] - 1) * BYTES[c["torch_dtype"]]


@pytest.mark.parametrize("tp", [1, 2])
def test_a_short_conv_hybrid_charges_its_state_per_running_sequence(tmp_path, tp):
    # LiquidAI/LFM2-1.2B (real config.json): 10 short-convolution layers keep a fixed conv window per request,
    # the 6 attention layers keep K and V per token
    folder = _folder(tmp_path, "Lfm2ForCausalLM")
    c = json.loads((folder / "config.json").read_text())
    explained = _explain_on_vllm(folder, tp)
    plan = explained.json()["plans"][0]
    memory = plan["memory"]
    state = _short_conv_state_bytes(c, tp)
    assert memory["state_bytes_per_request"] == state
    assert memory["per_request_bytes"] == state  # no sliding window: the state is all that is fixed per request
    per_element = 1 if "fp8" in plan.get("kv_dtype", "") else 2
    kv_heads = max(1, c["num_key_value_heads"] // tp)
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    assert memory["kv_bytes_per_token"] == len(c["full_attn_idxs"]) * 2 * kv_heads * head_dim * per_element
    assert "per running sequence, whatever its context" in memory["reason"]
    assert memory["weights_gib"] * 2**30 * tp == pytest.approx(_total("Lfm2ForCausalLM"), rel=0.01)


def test_a_short_conv_hybrid_plans_from_its_folder_and_says_the_state_is_per_request(tmp_path):
    folder = _folder(tmp_path, "Lfm2ForCausalLM")
    out = tmp_path / "out"
    planned = run_cli("--gpu", "h200", "--gpus", "1", "--model", str(folder), "--out", str(out), env=OFFLINE)
    assert planned.code == 0, planned.err
    assert "plan #1: vLLM" in planned.out
    assert "derived by the generic GQA/MHA/MQA + short_conv rule" in planned.out
    explained = run_cli("explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--verbose", env=OFFLINE)
    assert explained.code == 0, explained.err
    assert "recurrent state: 0.08 MiB per running sequence, whatever its context" in explained.out
    assert "conv state: 10 layers × 2048 channels × 2 × 2 B (per request, whatever its context)" in explained.out


HYBRIDS = CONFIGS.parent / "hybrids"


# mamba_utils.py (module docstring): mamba1_state_shape conv (intermediate / tp) × (d_conv − 1) and ssm
# (intermediate / tp) × d_state; mamba2_state_shape raises n_groups to tp where tp does not divide it
# (extra_groups_for_head_shards), conv ((intermediate + 2 · n_groups · d_state) / tp) × (d_conv − 1), ssm
# (heads / tp) × head_dim × d_state; both in the model dtype. vLLM's mamba.py reads intermediate_size,
# state_size and conv_kernel; mamba2.py expand × hidden_size, n_groups, num_heads, head_dim, state_size and
# conv_kernel.
def _mamba_state_bytes(c: dict[str, Any], tp: int) -> int:
    per_element = BYTES[c["torch_dtype"]]
    d_state, window = c["state_size"], c["conv_kernel"] - 1
    if c["architectures"][0] == "Mamba2ForCausalLM":
        inner = c["expand"] * c["hidden_size"]
        groups = c["n_groups"] if c["n_groups"] % tp == 0 else tp
        conv = (inner + 2 * groups * d_state) // tp * window
        ssm = c["num_heads"] // tp * c["head_dim"] * d_state
    else:
        conv = c["intermediate_size"] // tp * window
        ssm = c["intermediate_size"] // tp * d_state
    return c["num_hidden_layers"] * (conv + ssm) * per_element


@pytest.mark.parametrize("tp", [1, 2])
@pytest.mark.parametrize("arch", ["FalconMambaForCausalLM", "Mamba2ForCausalLM"])
def test_a_pure_mamba_stack_keeps_no_kv_and_a_fixed_state_per_sequence(tmp_path, arch, tp):
    # tiiuae/falcon-mamba-7b (Mamba-1) and mistralai/Mamba-Codestral-7B-v0.1 (Mamba-2), their config.json as a
    # benchmark repo quotes it (tests/data/PROVENANCE.md); no index: the weights are estimated from the shapes
    folder = tmp_path / arch
    folder.mkdir()
    shutil.copy(HYBRIDS / arch / "config.json", folder / "config.json")
    c = json.loads((folder / "config.json").read_text())
    explained = _explain_on_vllm(folder, tp)
    plans = explained.json()["plans"]
    assert plans, [r["reason"] for r in rejections(explained.json()) if r["engine"] == "vllm"][:3]
    memory = plans[0]["memory"]
    assert memory["kv_bytes_per_token"] == 0
    assert memory["state_bytes_per_request"] == _mamba_state_bytes(c, tp)
    # nothing grows with the context, so the pool holds state for as many sequences as it can fit
    assert memory["concurrency"] > 4
    assert memory["concurrency"] * memory["state_bytes_per_request"] <= memory["kv_pool_gib"] * 2**30
    assert "no attention" in explained.json()["request"]["understood_as"]


def test_a_mistral_config_in_the_format_transformers_5_writes_plans_as_the_older_one(tmp_path):
    # issue 21 saw an internal error ("cannot convert float NaN to integer") for a Mistral config whose RoPE
    # fields are the rope_parameters block transformers 5 writes (and dtype for torch_dtype). The real zephyr
    # config, re-spelled that way, plans exactly as the file it came from.
    source = CONFIGS.parent / "windowed" / "MistralForCausalLM"
    total = json.loads((source / "index-metadata.json").read_text())["metadata"]["total_size"]
    old = json.loads((source / "config.json").read_text())
    new = {k: v for k, v in old.items() if k not in ("rope_theta", "rope_scaling", "torch_dtype")}
    new["rope_parameters"] = {"rope_theta": old["rope_theta"], "rope_type": "default"}
    new["dtype"] = old["torch_dtype"]
    memories = []
    for name, config in (("old", old), ("new", new)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
        explained = run_cli(
            "explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--engine", "vllm", "--format",
            "json", env=OFFLINE,
        )  # fmt: skip
        assert explained.code == 0 and "Traceback" not in explained.err, explained.err
        memories.append(explained.json()["plans"][0]["memory"])
    assert memories[0] == memories[1]


def test_a_class_the_newest_vllm_dropped_is_said_plainly_with_the_last_build_that_loads_it(tmp_path):
    # MPT's real config: vLLM's registry lists MPTForCausalLM up to 0.28.0; asked for today's vLLM, the
    # refusal names the class and the last release that registers it
    folder = _folder(tmp_path, "MPTForCausalLM")
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    reasons = [r["reason"] for r in rejections(explained.json()) if r["engine"] == "vllm"]
    assert any("does not load MPTForCausalLM" in r and "supported until 0.28.0" in r for r in reasons), reasons


# Zamba2: no public copy of a Zamba2 config.json was found, so the config is the one transformers' Zamba2Config()
# writes with its defaults, its "Zamba2-2.7B style configuration" (every derived field as __init__ sets it:
# https://github.com/huggingface/transformers/blob/02f58079962e1924e01844d0c9581241695d5a58/src/transformers/models/zamba2/configuration_zamba2.py).
def _zamba2_config(mem_blocks: int = 1, hybrid_at: tuple[int, ...] = ()) -> dict[str, Any]:
    hidden, heads = 2560, 32
    types = ["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3
    types += ["hybrid"] + ["mamba"] * 2
    for i in hybrid_at:
        types[i] = "hybrid"
    return {
        "architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2", "vocab_size": 32000,
        "max_position_embeddings": 4096, "hidden_size": hidden, "num_hidden_layers": 54, "layers_block_type": types,
        "hybrid_layer_ids": [i for i, t in enumerate(types) if t == "hybrid"], "mamba_d_state": 64,
        "mamba_d_conv": 4, "mamba_expand": 2, "mamba_ngroups": 1, "n_mamba_heads": 8, "mamba_headdim": 640,
        "use_conv_bias": True, "add_bias_linear": False, "intermediate_size": 4 * hidden, "hidden_act": "gelu",
        "num_attention_heads": heads, "num_key_value_heads": heads, "num_mem_blocks": mem_blocks,
        "attention_hidden_size": 2 * hidden, "attention_head_dim": 2 * hidden // heads, "kv_channels": 80,
        "use_shared_mlp_adapter": False, "use_shared_attention_adapter": False, "adapter_rank": 128,
        "use_mem_rope": False, "rope_theta": 10000, "rms_norm_eps": 1e-5, "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }  # fmt: skip


def _zamba2_weights(c: dict[str, Any]) -> int:
    """The parameters vLLM's zamba2.py builds (its module shapes, with MambaMixer2's in_proj / conv / out_proj,
    https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/models/zamba2.py): a Mamba-2 mixer
    in every layer (a hybrid layer's mamba_decoder too); num_mem_blocks shared blocks, each one attention
    (qkv from the 2 × hidden concatenation, o_proj to hidden) and one gated MLP; a hidden × hidden linear per
    hybrid layer."""
    h, inner, heads = c["hidden_size"], c["mamba_expand"] * c["hidden_size"], c["n_mamba_heads"]
    conv = inner + 2 * c["mamba_ngroups"] * c["mamba_d_state"]
    mamba = h * (inner + conv + heads) + conv * c["mamba_d_conv"] + inner * h + inner + 3 * heads
    width, hd = c["attention_hidden_size"], c["attention_head_dim"]
    block = width * 3 * c["num_attention_heads"] * hd + width * h + 3 * h * c["intermediate_size"]
    hybrid = c["layers_block_type"].count("hybrid")
    return c["vocab_size"] * h + c["num_hidden_layers"] * mamba + c["num_mem_blocks"] * block + hybrid * h * h


def _zamba2_folder(tmp_path: Path, name: str, c: dict[str, Any]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(c))
    return folder


@pytest.mark.parametrize("tp", [1, 2])
def test_zamba2_counts_its_shared_blocks_once_and_keeps_kv_in_every_hybrid_layer(tmp_path, tp):
    c = _zamba2_config()
    explained = _explain_on_vllm(_zamba2_folder(tmp_path, "zamba2", c), tp)
    memory = explained.json()["plans"][0]["memory"]
    # each hybrid layer has its own Attention (dpa_list), so its own K and V, though the weights are shared
    hybrid = c["layers_block_type"].count("hybrid")
    per_element = 1 if "fp8" in explained.json()["plans"][0].get("kv_dtype", "") else 2
    per_gpu = c["num_attention_heads"] // tp
    assert memory["kv_bytes_per_token"] == hybrid * 2 * per_gpu * c["attention_head_dim"] * per_element
    assert memory["weights_gib"] * 2**30 * tp == pytest.approx(_zamba2_weights(c) * 2, rel=0.01)


def test_zamba2_weights_grow_by_a_block_per_shared_block_not_per_hybrid_layer(tmp_path):
    def params(name: str, c: dict[str, Any]) -> float:
        report = run_cli("inspect", str(_zamba2_folder(tmp_path, name, c)), "--format", "json", env=OFFLINE)
        assert report.code == 0, report.err
        return float(report.json()["derived"]["params_total_b"]) * 1e9

    base = _zamba2_config()
    more_hybrid = _zamba2_config(hybrid_at=(1, 2))  # two more layers reuse the same block
    two_blocks = _zamba2_config(mem_blocks=2)
    counted = params("base", base)
    assert counted == pytest.approx(_zamba2_weights(base), abs=1e6)
    # each further hybrid layer adds only its own hidden × hidden linear; a second block adds a whole block
    assert params("more", more_hybrid) - counted == pytest.approx(2 * 2560 * 2560, abs=2e6)
    assert params("two", two_blocks) == pytest.approx(_zamba2_weights(two_blocks), abs=1e6)
    # use_shared_mlp_adapter: each hybrid layer's own LoRA on gate_up (Zamba2LoRA: hidden → rank → 2 × intermediate)
    adapted = {**base, "use_shared_mlp_adapter": True}
    lora = 2560 * 128 + 128 * 2 * 4 * 2560
    assert params("adapted", adapted) - counted == pytest.approx(9 * lora, abs=2e6)


def test_a_class_no_build_loads_is_said_plainly_with_the_nearest_class_a_build_does(tmp_path):
    # stepfun-ai/Step-3.7-Flash's real config.json: no engine build in the catalog registers
    # Step3p7FlashForCausalLM; vLLM 0.33.0 and SGLang 0.5.23 register the multimodal Step3p7ForConditionalGeneration
    # (their harvested registries), a different class, so the answer names it and plans nothing
    folder = tmp_path / "step"
    folder.mkdir()
    shutil.copy(CONFIGS.parent / "unloaded" / "Step3p7FlashForCausalLM" / "config.json", folder / "config.json")
    report = run_cli("inspect", str(folder), env=OFFLINE)
    assert "Step3p7FlashForCausalLM (model_type step3p7); no engine build in the catalog loads it" in report.out
    planned = run_cli("--gpu", "h200", "--gpus", "8", "--model", str(folder), env=OFFLINE)
    assert planned.code != 0 and "Traceback" not in planned.err
    assert "vllm-0.33.0 does not load Step3p7FlashForCausalLM" in planned.out
    assert "the nearest class a build registers is Step3p7ForConditionalGeneration" in planned.out
    assert "vllm-0.33.0" in planned.out.split("the nearest class a build registers is", 1)[1]


def test_a_nas_block_replaced_by_a_linear_layer_is_named_in_one_line(tmp_path):
    # Nemotron-Super-49B's real config.json with one MLP block turned into a linear replacement, which
    # nemotron_nas.py's block_configs allow but recipegen does not size: one line naming the block, no traceback
    folder = _folder(tmp_path, "DeciLMForCausalLM")
    config = json.loads((folder / "config.json").read_text())
    config["block_configs"][3]["ffn"]["replace_with_linear"] = True
    (folder / "config.json").write_text(json.dumps(config))
    planned = run_cli("--gpu", "h200", "--gpus", "8", "--model", str(folder), env=OFFLINE)
    assert planned.code != 0 and "Traceback" not in planned.err
    assert "config.json: block_configs[3] replaces a block with a linear layer" in planned.err


def test_a_pixel_shuffle_projector_is_counted_at_its_width(tmp_path):
    # SmolVLM-256M-Instruct (Idefics3): its projector takes scale_factor² SigLIP patches (768 wide each) to the
    # text width in one linear (idefics3.py Idefics3SimpleMLP), 7.1M of its 256.5M parameters; the plain
    # projector reading left the count 2.9 % short of the file
    folder = _folder(tmp_path, "Idefics3ForConditionalGeneration")
    c = json.loads((folder / "config.json").read_text())
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    projector = c["vision_config"]["hidden_size"] * c["scale_factor"] ** 2 * c["text_config"]["hidden_size"]
    assert projector == 768 * 16 * 576
    file_params = _total("Idefics3ForConditionalGeneration") / 2  # bfloat16; the header is a few kB
    assert report.json()["derived"]["params_total_b"] * 1e9 == pytest.approx(file_params, rel=0.005)


def test_full_layers_with_a_shape_of_their_own_keep_it_and_the_window_layers_the_base_one(tmp_path):
    # gemma-4-31B-it: its 10 full_attention layers are num_global_key_value_heads 4 × global_head_dim 512, its 50
    # sliding layers num_key_value_heads 16 × head_dim 256 (gemma4.py reads each layer's shape from
    # per_layer_config); the cache grows per token only in the full layers, the window layers per request
    folder = _folder(tmp_path, "Gemma4ForConditionalGeneration")
    att = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()["derived"]["attention"]
    assert (att["num_kv_heads"], att["head_dim"]) == (4, 512)
    assert (att["window_num_kv_heads"], att["window_head_dim"], att["sliding_window_layers"]) == (16, 256, 50)
    memory = _explain_on_vllm(folder, 8).json()["plans"][0]["memory"]
    assert memory["kv_bytes_per_token"] == 10 * 1 * (512 + 512) * 2
    assert memory["per_request_bytes"] == 50 * 2 * (256 + 256) * 2 * 1024


def test_gemma_4_moe_routes_each_token_to_the_experts_its_config_names(tmp_path):
    # google/gemma-4-26B-A4B names its routed experts per token top_k_experts (8 of 128), not num_experts_per_tok;
    # gemma4.py reads config.top_k_experts. Read as 1, the active parameters (and the speed) were off by a third.
    folder = tmp_path / "gemma-4-26B-A4B"
    folder.mkdir()
    shutil.copy(HUB / "google" / "gemma-4-26B-A4B" / "config.json", folder / "config.json")
    derived = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()["derived"]
    assert (derived["moe"]["experts"], derived["moe"]["top_k"]) == (128, 8)
    assert derived["params_active_b"] == pytest.approx(3.8, abs=0.15)  # "A4B": Google's 3.8B active


def test_a_latent_moe_counts_its_experts_at_the_latent_width(tmp_path):
    # NVIDIA-Nemotron-3-Super-120B-A12B: 512 relu2 experts (up and down only) of 2688 that read and write a
    # 1024-wide latent (vLLM nemotron_h.py: fc1_latent_proj hidden → moe_latent_size, experts, fc2_latent_proj
    # back); counted at hidden_size with three projections they came to 458B instead of the published 120B / 12B
    folder = tmp_path / "Nemotron-3-Super"
    shutil.copytree(HUB / "nvidia" / "NVIDIA-Nemotron-3-Super-120B-A12B-FP8", folder)
    inspected = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    derived = inspected.json()["derived"]
    assert (derived["moe"]["expert_hidden"], derived["moe"]["expert_matrices"]) == (1024, 2)
    assert derived["params_total_b"] == pytest.approx(120, rel=0.02)
    assert derived["params_active_b"] == pytest.approx(12, rel=0.07)
    text = run_cli("inspect", str(folder), env=OFFLINE).out
    assert "expert width 2688 on a 1024-wide latent" in text


@pytest.mark.parametrize(
    ("repo", "total_b", "active_b"),
    [
        # the published counts: recipes/models/deepseek-v4-flash.yaml (284B / 13B); DeepSeek-V4-Pro 1.6T / 49B
        # (https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/deepseek-ai/DeepSeek-V4-Pro.yaml)
        ("DeepSeek-V4-Flash", 284, 13),
        ("DeepSeek-V4-Pro", 1600, 49),
    ],
)
def test_deepseek_v4_counts_its_grouped_low_rank_output(tmp_path, repo, total_b, active_b):
    # wo_a takes the heads × head_dim to o_groups × o_lora_rank, wo_b that back to hidden; counted as one dense
    # heads × head_dim × hidden projection, V4-Pro came to 66B active instead of 49B
    folder = tmp_path / repo
    shutil.copytree(HUB / "deepseek-ai" / repo, folder)
    derived = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()["derived"]
    assert derived["params_total_b"] == pytest.approx(total_b, rel=0.02)
    assert derived["params_active_b"] == pytest.approx(active_b, rel=0.03)


QUANTIZED = CONFIGS.parent / "quantized"


@pytest.mark.parametrize("tp", [1, 8])
def test_an_int4_checkpoint_of_a_class_without_a_recipe_plans_its_file_bytes_and_vllms_cache(tmp_path, tp):
    # EXAONE-4.0-1.2B as llm-compressor's GPTQ W4A16 left it (tests/data/quantized: compressed-tensors
    # pack-quantized, group 128, embeddings and head kept 16-bit): the generic rule lays the class out, the weights
    # on the GPUs are the file's bytes (not its 1.28B parameters × 2), and the cache is vLLM's exaone4.py formula
    # (every layer_types entry full_attention, no window): layers × 2 × max(1, KV heads // tp) × head_dim × 2 B
    source = QUANTIZED / "Exaone4ForCausalLM"
    folder = tmp_path / "exaone4-w4a16"
    folder.mkdir()
    shutil.copy(source / "config.json", folder / "config.json")
    size = sum(json.loads((source / "weight-files.json").read_text())["files"].values())
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": size}}))
    c = json.loads((folder / "config.json").read_text())
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    assert (report.json()["status"], report.json()["rule_from"]) == ("derived", "generic")
    plan = _explain_on_vllm(folder, tp).json()["plans"][0]
    memory = plan["memory"]
    assert memory["weights_gib"] * 2**30 * tp == pytest.approx(size, rel=0.03, abs=0.005 * 2**30 * tp)
    per_element = 1 if "fp8" in plan.get("kv_dtype", "") else 2
    full = c["layer_types"].count("full_attention")
    assert full == c["num_hidden_layers"] and c["sliding_window"] is None
    per_gpu = max(1, c["num_key_value_heads"] // tp)
    assert memory["kv_bytes_per_token"] == full * 2 * per_gpu * c["head_dim"] * per_element

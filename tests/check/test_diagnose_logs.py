"""`recipegen diagnose` on real engine logs from public issues (tests/data/logs, each with its source): what a user
is told — the cause, the stage, the gate or flag, the fix from the log's own numbers — and what the log says about
its run (engine, version, GPU and capability, layout, kernels, KV budget, the command)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recipegen.check.diagnose import diagnose_log
from recipegen.check.diagnose_output import diagnosis_json, format_diagnosis
from recipegen.check.log_facts import Hints
from recipegen.check.log_rules import FLAG_CATEGORIES, category, selector_reasons

from .test_diagnose import LOGS, fixture

EXPECTED = sorted(p for p in LOGS.glob("*.log") if "\n# expect: " in p.read_text(encoding="utf-8")[:2000])


def expectations(path: Path) -> dict[str, str]:
    line = path.read_text(encoding="utf-8").splitlines()[2]
    pairs = (item.split("=", 1) for item in line.removeprefix("# expect: ").split("; ") if item)
    return {k.strip(): v.strip() for k, v in pairs}


def test_the_logs_cover_every_engine_and_stage(catalog):
    assert len(EXPECTED) >= 40
    told = [expectations(p) for p in EXPECTED]
    assert {"vLLM", "SGLang", "llama.cpp", "ik_llama.cpp", "KTransformers"} <= {e.get("engine") for e in told}
    stages = {fp.stage for fp in catalog.fingerprints.values()}
    assert stages - {"parser", "other"} <= {e["stage"] for e in told if "stage" in e} | {"parser", "other"}


@pytest.mark.parametrize("path", EXPECTED, ids=[p.stem for p in EXPECTED])
def test_a_real_log_tells_the_cause_stage_and_fix(catalog, path):
    _, fingerprint, body = fixture(path)
    want = expectations(path)
    d = diagnose_log(catalog, body, Hints(gpu=want.get("hint_gpu"), model=want.get("hint_model")))
    doc, text = diagnosis_json(d), format_diagnosis(d)
    log = doc["log"]
    if fingerprint == "none":
        assert not d.known
    else:
        top = doc["matches"][0]
        assert top["fingerprint"] == fingerprint, text
        assert f"[{top['stage']} · " in text and "fix:" in text
        checks = {
            "stage": top["stage"],
            "gate": top["gate"] or "none",
            "flag": "yes" if top["flag_cause"] else "no",
        }
        for key, value in checks.items():
            if key in want:
                assert value == want[key], (key, text)
        if want.get("flag") == "yes":
            assert "no gate: a flag choice" in text and "change GPU" not in text
        for key, field in (("why_has", "explanation"), ("fix_has", "fix"), ("cause_has", "cause")):
            if key in want:
                assert want[key] in (top[field] or ""), (key, text)
        if "fix_lacks" in want:
            assert want["fix_lacks"] not in top["fix"], text
    facts = {
        "engine": log["flavor"],
        "version": log["version"],
        "tp": str(log["tensor_parallel"]),
        "pp": str(log["pipeline_parallel"]),
        "cc": log["capability"],
        "gpu": log["hardware"] or "none",
        "model": log["model"],
        "model_text": log["model_text"],
        "served": log["served_name"],
        "arch": log["architecture"],
        "util": str(log["gpu_memory_utilization"]),
    }
    for key, value in facts.items():
        if key in want:
            assert value == want[key], (key, log)
    if "gpu_not" in want:
        assert log["hardware"] != want["gpu_not"], log
    if "command" in want:
        assert want["command"] in (log["command"] or ""), log
    if "kv" in want:
        for pair in want["kv"].split(","):
            name, value = pair.split(":")
            assert log["kv_cache"][name] == float(value), log
    if "backend" in want:
        kind, name = want["backend"].split(":")
        assert {"kind": kind, "name": name} in log["backends"], log
    if "slow_has" in want:
        assert any(want["slow_has"] in line for line in doc["slow_path"]), doc["slow_path"]
        assert "slow path:" in text


SELECTOR_LOGS = [p for p in LOGS.glob("*.log") if "No valid attention backend" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", SELECTOR_LOGS, ids=[p.stem for p in SELECTOR_LOGS])
def test_the_explanation_never_contradicts_the_selectors_own_reasons(catalog, path):
    _, _, body = fixture(path)
    line = next(line for line in body.splitlines() if "No valid attention backend" in line)
    reasons = selector_reasons(line)
    match = diagnose_log(catalog, body).matches[0]
    if not reasons:
        return
    kinds = {name: {category(r) for r in rs} for name, rs in reasons.items()}
    flag_curable = any(cats and cats <= set(FLAG_CATEGORIES) for cats in kinds.values())
    every_backend_capability = all("capability" in cats for cats in kinds.values())
    assert match.ruling is not None
    # the cause the user is told follows from the reasons, and only from them
    assert match.ruling.flag == flag_curable
    assert (match.gate is None) == flag_curable
    if flag_curable:
        assert "no flag" not in match.why.lower() and "not the GPU" in match.why
    if not any("capability" in cats for cats in kinds.values()):
        assert "compute capability" not in match.ruling.cause
    if every_backend_capability:
        assert match.ruling.cause == "this GPU's compute capability"
    # every backend the log names, with its reasons, is in front of the user
    for name, rs in reasons.items():
        assert name in match.why and all(r in match.why for r in rs)


def test_a_hint_that_names_nothing_known_is_a_warning_and_the_log_is_still_read(cli, tmp_path):
    _, _, body = fixture(LOGS / "vllm-awq-min-capability-v100.log")
    log = tmp_path / "engine.log"
    log.write_text(body)
    result = cli("diagnose", str(log), "--gpu", "RTX 4090 Super Max", "--model", "nobody/not-a-model-xyz")
    assert result.code == 0, result.err
    assert "vllm-quant-min-capability" in result.out
    assert re.search(r"warning: --gpu 'RTX 4090 Super Max' is not used", result.out)
    assert "warning: --model 'nobody/not-a-model-xyz' is not used" in result.out
    # the GPU then comes from the log: Current capability 70 is a V100
    assert "compute capability 7.0" in result.out or "V100" in result.out


def test_the_add_model_hint_uses_what_the_log_said(catalog):
    _, _, body = fixture(LOGS / "vllm-no-cache-blocks-v0-config.log")
    text = format_diagnosis(diagnose_log(catalog, body))
    assert "--model /model_repos/CustomLLM/Qwen-7B-QAnything" in text and "add --model and --gpu" in text


def test_a_command_in_the_log_is_linted(catalog):
    body = (
        "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
        "vllm serve zai-org/GLM-4.6 --tensor-parallel-size 8 --reasoning-parser no-such-parser\n"
        "ERROR [core.py:1] Engine core initialization failed. See root cause above.\n"
    )
    d = diagnose_log(catalog, body)
    assert d.facts.command is not None and d.facts.command.startswith("vllm serve zai-org/GLM-4.6")
    assert any("--reasoning-parser" in line for line in d.lint), d.lint
    assert "lint (the command in the log):" in format_diagnosis(d)

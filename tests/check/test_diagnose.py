"""`recipegen diagnose`: every fingerprint against a real log excerpt, what the log says, the plan that runs."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from recipegen.check.diagnose import diagnose_log
from recipegen.check.diagnose_output import diagnosis_json, format_diagnosis
from recipegen.check.log_facts import Hints

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
FIXTURES = sorted(LOGS.glob("*.log"))


def fixture(path: Path) -> tuple[str, str, str]:
    """(source URL line, expected fingerprint, the log body without the header lines)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[0].startswith("# source: https://"), path.name
    assert lines[1].startswith("# fingerprint: "), path.name
    skip = 3 if len(lines) > 2 and lines[2].startswith("# expect: ") else 2
    return lines[0], lines[1].removeprefix("# fingerprint: ").strip(), "".join(lines[skip:])


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_each_real_log_matches_its_fingerprint(catalog, path):
    _, expected, body = fixture(path)
    d = diagnose_log(catalog, body)
    if expected == "none":
        assert not d.known and d.looked_at
        return
    assert d.matches[0].fingerprint.id == expected
    top = d.matches[0].fingerprint
    text = format_diagnosis(d)
    # the gate shown is the one the line's own reasons give (a flag, when a setting was the cause)
    assert top.title in text and "fix:" in text and (d.matches[0].gate or "no gate") in text


def test_every_fingerprint_has_a_real_log(catalog):
    covered = {fixture(p)[1] for p in FIXTURES}
    assert set(catalog.fingerprints) <= covered


def test_captured_values_fill_the_explanation(catalog):
    _, _, body = fixture(LOGS / "torch-cuda-oom.log")
    match = diagnose_log(catalog, body).matches[0]
    assert match.groups["want"] == "786.00 MiB" and match.groups["total"] == "79.11 GiB"
    assert "786.00 MiB allocation failed on GPU 0 (79.11 GiB in all" in match.fill(match.fingerprint.explanation)


def test_the_wrapper_line_ranks_after_the_root_cause(catalog):
    _, _, cause = fixture(LOGS / "vllm-no-attention-backend.log")
    _, _, wrapper = fixture(LOGS / "vllm-engine-core-init-failed.log")
    d = diagnose_log(catalog, wrapper + cause)  # the wrapper printed first, as the API server does
    assert [m.fingerprint.id for m in d.matches] == ["vllm-no-attention-backend", "vllm-engine-core-init-failed"]


def test_the_log_names_model_gpu_and_build_so_the_plan_that_runs_is_shown(catalog):
    _, _, body = fixture(LOGS / "context-a800-glm51.log")
    d = diagnose_log(catalog, body)
    assert (d.facts.engine, d.facts.version, d.facts.tp) == ("vllm", "0.19.1", 8)
    assert d.facts.model is not None and d.facts.model.id == "glm-5.1"
    assert d.facts.hardware is not None and d.facts.hardware.id == "a800-80gb"
    assert "vLLM 0.19.1: answering for vllm-0.19.0" in format_diagnosis(d)  # the nearest known release below it
    # GLM-5.1's NVFP4 checkpoint, its size estimated from the parameters (4-bit with an FP8 scale per 16, said so),
    # fits the eight A800s through Marlin: the diagnosis shows that plan
    assert d.plan_json is not None and d.plan_json["quant"] == "nvfp4"
    assert any("estimated as" in n for n in d.plan_json["notes"])
    # GLM-5.2 on the same A800s: the community sm80 image runs it, and the diagnosis shows its command
    d = diagnose_log(catalog, body.replace("GLM-5.1", "GLM-5.2"))
    assert d.plan_json is not None and d.plan_json["build"] == "vllm-glm52-sm80-pr38476"
    assert "vllm serve /models/" in format_diagnosis(d)


def test_hints_fill_in_what_the_log_does_not_say(catalog):
    _, _, body = fixture(LOGS / "context-l40-glm5.log")
    # the log names an NVIDIA L40, which the catalog knows
    named = diagnose_log(catalog, body)
    assert named.facts.hardware is not None and named.facts.hardware.id == "l40"
    # without the GPU's name the diagnosis asks for it
    body = body.replace("NVIDIA L40", "a GPU")
    d = diagnose_log(catalog, body)
    assert d.facts.model is not None and d.facts.model.id == "glm-5" and d.facts.hardware is None
    assert "add --gpu" in format_diagnosis(d)
    hinted = diagnose_log(catalog, body, Hints(gpu="h200"))
    assert hinted.plan_json is not None and "plan that runs:" in format_diagnosis(hinted)


def test_unknown_log_says_so_and_shows_the_lines_it_read(cli, tmp_path):
    log = tmp_path / "engine.log"
    log.write_text("INFO starting\nWARNING something odd\nRuntimeError: a failure nobody catalogued\nINFO bye\n")
    result = cli("diagnose", str(log))
    assert result.code == 0, result.err
    assert "no known failure" in result.out and "3: RuntimeError: a failure nobody catalogued" in result.out


def test_cli_reads_stdin_and_prints_json(cli, monkeypatch):
    _, _, body = fixture(LOGS / "vllm-kv-cache-too-small.log")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body.encode())))
    result = cli("diagnose", "-", "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["schema"] == "recipegen.diagnosis/1" and doc["known"]
    assert doc["matches"][0]["fingerprint"] == "vllm-kv-cache-too-small"
    assert doc["matches"][0]["captured"]["want"] == "100000" and doc["matches"][0]["gate"] == "memory"


def test_missing_log_file_is_bad_input(cli, tmp_path):
    result = cli("diagnose", str(tmp_path / "nope.log"))
    assert result.code == 2 and "no log file" in result.err and "Traceback" not in result.err


def test_a_user_fingerprint_from_a_recipe_folder_is_used(cli, tmp_path):
    folder = tmp_path / "recipes" / "fingerprints"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text(
        "id: my-oom\ntitle: our cluster's OOM killer\npattern: 'Killed process \\d+'\nstage: oom\ngate: memory\n"
        "explanation: the host ran out of RAM\nfix: give the container more host memory\n"
    )
    log = tmp_path / "x.log"
    log.write_text("kernel: Killed process 1234 (python3)\n")
    result = cli("diagnose", str(log), "--recipes", str(tmp_path / "recipes"), "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["matches"][0]["fingerprint"] == "my-oom"
    bad = folder / "bad.yaml"
    bad.write_text("id: bad\ntitle: t\npattern: '('\nstage: oom\ngate: memory\nexplanation: e\nfix: f\n")
    result = cli("diagnose", str(log), "--recipes", str(tmp_path / "recipes"))
    assert result.code == 2 and "bad.yaml" in result.err and "regular expression" in result.err


def test_json_contract_has_a_plan_when_model_and_gpu_are_known(catalog):
    _, _, body = fixture(LOGS / "vllm-no-attention-backend.log")
    doc = diagnosis_json(diagnose_log(catalog, body, Hints(gpu="rtx-pro-6000", model="deepseek-v3.2")))
    assert doc["log"]["hardware"] == "rtx-pro-6000" and doc["log"]["model"] == "deepseek-v3.2"
    assert doc["matches"][0]["stage"] == "attention-backend"
    assert doc["plan"] is None or doc["plan"]["argv"]


def test_an_sglang_log_names_its_version_and_gpu(catalog):
    _, _, body = fixture(LOGS / "sglang-not-enough-memory.log")
    d = diagnose_log(catalog, body)
    assert (d.facts.engine, d.facts.version) == ("sglang", "0.4.3.post2")
    assert d.facts.hardware is not None and d.facts.hardware.id == "l40s"
    assert d.matches[0].fingerprint.gate == "memory"


def test_terminal_control_characters_from_the_log_are_not_printed(catalog):
    d = diagnose_log(catalog, "RuntimeError: boom \x1b]2;title\x07 \x9b31m\nfatal \x08\x08 error\n")
    text = format_diagnosis(d)
    assert not any(ch in text for ch in "\x1b\x07\x9b\x08") and "boom ?]2;title?" in text


def test_build_defects_that_name_their_log_line_are_recognised(catalog):
    defects = [(engine, build, d) for engine, build in catalog.builds() for d in build.defects if d.log_line]
    assert defects
    for engine, _, defect in defects:
        log = f"INFO {engine.id} starting\n(Worker pid=7) ERROR 08-27 10:00:00 [core.py:1] {defect.log_line}\n"
        top = diagnose_log(catalog, log).matches[0]
        # a release that inherits the defect matches too, and so does another release's defect that quotes the same
        # line (one crash in two releases): with no version in the log, the first build carrying either ranks first
        same = {d.id for _, _, d in defects if d.log_line == defect.log_line}
        (first, *_) = [(b.id, d) for _, b in catalog.builds() for d in b.defects if d.id in same]
        assert top.fingerprint.id == f"{first[0]}+{first[1].id}" and top.line_number == 2
        assert first[1].title in top.fingerprint.explanation
        assert top.fingerprint.gate == first[1].gate and (first[1].workaround or "") in top.fingerprint.fix


def test_a_defect_releases_inherit_is_reported_once_naming_every_release_that_carries_it(catalog):
    carriers: dict[tuple[str, str], list[str]] = {}
    for _, build in catalog.builds():
        for d in build.defects:
            if d.log_line:
                carriers.setdefault((d.id, d.log_line), []).append(build.id)
    (defect_id, log_line), builds = next((key, ids) for key, ids in carriers.items() if len(ids) > 1)
    matches = diagnose_log(catalog, f"ERROR [core.py:1] {log_line}\n").matches
    mine = [m for m in matches if m.fingerprint.id.endswith(f"+{defect_id}")]
    assert len(mine) == 1
    assert all(build in mine[0].fingerprint.title and build in mine[0].fingerprint.explanation for build in builds)


def test_a_crash_two_releases_log_alike_is_told_apart_by_the_logs_version_line(catalog):
    line = "(Worker pid=7) ERROR [core.py:1] BatchPrefillWithPagedKVCache failed with error invalid argument"
    for version, defect in (
        ("0.23.0", "vllm-0.23-sm75-flashinfer-prefill"),
        ("0.22.0", "vllm-0.22-t4-flashinfer-paged-prefill-invalid-argument"),
    ):
        top = diagnose_log(catalog, f"INFO 06-03 vLLM API server version {version}\n{line}\n").matches[0]
        assert top.fingerprint.id == f"vllm-{version}+{defect}"

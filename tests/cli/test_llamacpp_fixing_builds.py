"""The llama.cpp builds that fix a defect, pinned where a source names them: history flips at the fixing build,
diagnose maps the defect's log line, and a plan dated before the fix answers with the build that carries it."""

from __future__ import annotations

from tests.support.cli import run_cli
from tests.support.release_history import history_of, verdicts

CPY_ABORT = "llama.cpp-cuda-cpy-over-2gib-long-context-abort"
SM120_KV = "llama.cpp-b9333-sm120-quantized-kv-fa-garbled"


def test_history_of_a_long_context_model_shows_the_cuda_copy_abort_until_b8036():
    builds = verdicts(history_of(run_cli, "llama.cpp", "h200", "qwen3-next-80b-a3b-instruct", 1))
    assert CPY_ABORT in builds["llama.cpp-b7186"]["defects"]
    for fixed in ("llama.cpp-b8036", "llama.cpp-b9333", "llama.cpp-0c1e570"):
        assert CPY_ABORT not in builds[fixed]["defects"], fixed
    # a model whose context stays under the reported threshold is not marked on the same builds
    short = verdicts(history_of(run_cli, "llama.cpp", "h200", "qwen3-8b", 1))
    assert CPY_ABORT not in short["llama.cpp-b7186"]["defects"]


def test_diagnose_maps_the_cpy_assert_of_a_b7499_log_to_the_defect_and_its_fix(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "version: 7499 (fd05c51ce)\n"
        "slot update_slots: id  1 | task 16 | prompt processing progress, n_tokens = 143360, batch.n_tokens = 4096\n"
        "/src/llama.cpp/ggml/src/ggml-cuda/cpy.cu:359: GGML_ASSERT(ggml_nbytes(src0) <= INT_MAX) failed\n"
    )
    result = run_cli("diagnose", str(log), "--gpu", "rtx-3090", "--format", "json")
    assert result.code == 0, result.err
    doc = result.json()
    (match,) = [m for m in doc["matches"] if m["fingerprint"].endswith(CPY_ABORT)]
    assert match["line_number"] == 3 and "llama.cpp-b7186" in match["title"] and "llama.cpp-b8036" not in match["title"]
    assert "--ubatch-size" in match["fix"]
    assert "https://github.com/ggml-org/llama.cpp/pull/18433" in match["sources"]


def test_the_b9333_garbling_is_fixed_in_b9334_the_tag_of_pr_23690():
    builds = verdicts(
        history_of(run_cli, "llama.cpp", "rtx-5090", "qwen3-8b", 1, "--kv-cache-dtype", "q8_0", "--as-of", "2026-06-01")
    )
    assert SM120_KV in builds["llama.cpp-b9333"]["defects"]
    assert SM120_KV not in builds["llama.cpp-b9334"]["defects"]
    assert builds["llama.cpp-b9334"]["released"] == "2026-05-26"

"""The 2026-12-07 sm120 / sm121 survey of Kimi and DeepSeek (issue 28): the community vLLM image that served Kimi K2.5
with an FP8 KV cache on 8x RTX PRO 6000 before any vLLM release let Triton MLA take one, and the searches that found
nothing for the other cells."""

from __future__ import annotations

from tests.support.contract import sources
from tests.support.release_history import explain, history_of, verdicts

IMAGE_BUILD = "vllm-sm120-voipmonitor-cu130-patched"
KIMI_FP8 = (
    "--gpu",
    "rtx-pro-6000",
    "--model",
    "kimi-k2.5",
    "--gpus",
    "8",
    "--engine",
    "vllm",
    "--kv-cache-dtype",
    "fp8",
)


def test_kimi_k25_with_fp8_kv_on_8_rtx_pro_6000_in_march_2026_runs_on_the_community_image(cli):
    doc = explain(cli, *KIMI_FP8, "--as-of", "2026-03-10")
    assert doc["verdict"] == "runnable"
    plan = doc["plans"][0]
    assert plan["build"] == IMAGE_BUILD and plan["provenance"] == "community"
    assert plan["image"] == "voipmonitor/vllm-openai:cu130-nightly-patched"
    flags = {(f["flag"], f.get("value")) for f in plan["flags"]}
    assert {("--attention-backend", "TRITON_MLA"), ("--kv-cache-dtype", "fp8")} <= flags
    assert ("--decode-context-parallel-size", "8") in flags  # the curated deployment of the wiki's command
    assert any("rtx6kpro" in s["url"] and s.get("date") == "2026-03-09" for s in sources(doc, plan["sources"]))
    # the release it was cut from rejects the FP8 latent cache on SM120
    gates = {r["gate"] for r in doc["rejected"] if r.get("build") == "vllm-0.17.0" and r.get("variant") == "int4"}
    assert gates == {"kernel"}


def test_a_report_dated_before_the_wiki_page_answers_blocked_for_vllm(cli):
    before = explain(cli, *KIMI_FP8, "--as-of", "2026-03-08")
    assert before["verdict"] != "runnable"
    assert IMAGE_BUILD not in {p["build"] for p in before["plans"]}


def test_history_shows_the_image_between_0_17_and_the_0_18_release_that_took_over(cli):
    engine = history_of(cli, "vllm", "rtx-pro-6000", "kimi-k2.5", 8, "--kv-cache-dtype", "fp8")
    builds = verdicts(engine)
    assert builds["vllm-0.17.0"]["verdict"] == "blocked"
    assert builds["vllm-0.18.0"]["verdict"] == "runnable"
    text = cli("history", *KIMI_FP8).out
    assert f"community path: {IMAGE_BUILD} (2026-03-09): runnable" in text
    # with a BF16 cache the official releases already run, so the image is not the only way
    bf16 = verdicts(history_of(cli, "vllm", "rtx-pro-6000", "kimi-k2.5", 8))
    assert bf16["vllm-0.17.0"]["verdict"] == "runnable"


DSPARK = "sglang-dsv4-sm120-dspark-image"
DSV4_2X = ("--gpu", "rtx-pro-6000", "--model", "deepseek-v4-flash", "--gpus", "2", "--engine", "sglang")


def test_dsv4_flash_0731_on_2_rtx_pro_6000_with_sglang_runs_on_the_dspark_dev_image_with_its_curated_command(cli):
    doc = explain(cli, *DSV4_2X, "--variant", "0731")
    assert doc["verdict"] == "runnable"
    plan = doc["plans"][0]
    assert plan["build"] == DSPARK and plan["provenance"] == "community"
    assert plan["image"].startswith("lmsysorg/sglang:dev-cu13-inkling-dspark@sha256:fbea1a4e")
    flags = {(f["flag"], f.get("value")) for f in plan["flags"]}
    assert {("--tp-size", "2"), ("--context-length", "131072"), ("--disable-custom-all-reduce", None)} <= flags
    assert any("local-ai-registry" in s["url"] and s.get("date") for s in sources(doc, plan["sources"]))
    # the newest release alone stays unknown: its SM120 indexer fallback has no serving report of its own
    release = explain(cli, *DSV4_2X, "--variant", "0731", "--build", "sglang-0.5.23")
    assert release["plans"] == []
    assert [(r["outcome"], r["gate"]) for r in release["rejected"]] == [("unknown", "kernel")]


def test_before_the_report_sglang_has_no_known_dsv4_path_on_sm120_and_coverage_counts_the_image(cli):
    before = explain(cli, *DSV4_2X, "--variant", "0731", "--as-of", "2026-08-24")
    assert before["verdict"] != "runnable"
    assert DSPARK not in {p["build"] for p in before["plans"]}
    cells = cli("coverage", "--format", "json").json()["cells"]
    (cell,) = [c for c in cells if c["family"] == "deepseek-v4-flash" and c["gpu_class"] == "sm120"]
    assert {"build": DSPARK, "released": "2026-08-25"} in cell["community"]


def test_kimi_and_deepseek_cells_on_sm120_and_sm121_read_surveyed_on_2026_12_07_or_later(cli):
    families = {"kimi-k2", "kimi-k2.5", "kimi-k3", "deepseek-v3", "deepseek-r1", "deepseek-v3.1", "deepseek-v3.2"}
    families.add("deepseek-v4-flash")
    cells = cli("coverage", "--format", "json").json()["cells"]
    ours = {(c["family"], c["gpu_class"]): c["surveyed"] for c in cells if c["gpu_class"] in ("sm120", "sm121")}
    missing = {(f, g) for f in families for g in ("sm120", "sm121")} - set(ours)
    assert not missing
    # this survey's day, or a later survey's that covers the cell again (the newest search is the one shown)
    assert all(ours[(f, g)] >= "2026-12-07" for f in families for g in ("sm120", "sm121"))
    listed = cli("list", "surveys").out
    assert "sm12x-kimi-deepseek" in listed

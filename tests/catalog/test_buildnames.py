"""The build a user names, the way they name it (issue 22): every rule of the resolver through the CLI, each
visible in `understood:` and in `request.build_resolution`, and the refusal line when nothing fits."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

ASK = ("explain", "--gpu", "h200", "--model", "llama-3.3-70b")


def resolution(cli: Any, build: str, *extra: str) -> dict[str, Any]:
    result = cli(*ASK, "--build", build, *extra, "--format", "json")
    assert result.code in (0, 3), result.err  # runnable or blocked: either way for the build named
    request = result.json()["request"]
    found = request["build_resolution"]
    assert found["build"] == request["build"] and found["how"] in request["understood_as"]
    assert {p["build"] for p in result.json()["plans"]} <= {found["build"]}
    return dict(found)


def release_on(catalog: Any, engine: str, day: dt.date) -> Any:
    """The newest official release of the engine out by that day, from the catalog's own dates."""
    line = [b for b in catalog.engines[engine].builds if b.provenance == "official" and b.released <= day]
    return max(line, key=lambda b: b.released)


@pytest.mark.parametrize(
    ("given", "build", "rule"),
    [
        ("vllm/vllm-openai:gptoss", "vllm-gptoss-image", "image"),  # an exact catalog tag
        ("docker.io/vllm/vllm-openai:v0.30.0", "vllm-0.30.0", "version"),  # Docker Hub's registry spelled out
        ("vllm/vllm-openai:v0.30.0-cu129", "vllm-0.30.0", "version"),  # a CUDA variant of a release tag
        ("vllm/vllm-openai:glm53-flash", "vllm-glm53-flash-image", "family"),  # catalog: glm53-flash-cu129
        ("vllm/vllm-openai:glm53-flash-cu130", "vllm-glm53-flash-image", "family"),
    ],
)
def test_tags_and_families_name_their_build(cli, given, build, rule):
    found = resolution(cli, given)
    assert (found["given"], found["build"], found["rule"]) == (given, build, rule)


def test_a_newer_tag_of_a_community_image_answers_for_its_build_and_says_so(cli):
    found = resolution(cli, "openguardrails/vllm-glm52-sm80:9ab12cd3f-pr38476-pr39012")
    # the repository's newest build in the catalog (two are: PR #38476's image and its successor, PR #47629's)
    assert (found["build"], found["rule"], found["confidence"]) == (
        "vllm-glm52-sm80-pr47629",
        "community-tag",
        "approximate",
    )
    assert "newer than the catalog's facts (764b6bfa0-pr47629-pr47644" in found["how"]


@pytest.mark.parametrize("option", ["--as-of", "--pulled"])
def test_latest_is_the_release_it_pointed_to_on_that_date(cli, catalog, option):
    day = dt.date(2026, 8, 1)
    expected = release_on(catalog, "vllm", day)
    for tag in ("latest", "latest-cu129"):
        found = resolution(cli, f"vllm/vllm-openai:{tag}", option, str(day))
        assert (found["build"], found["rule"]) == (expected.id, "rolling")
        assert f":{tag} on {day} was vLLM {expected.version}" in found["how"]


def test_rolling_tags_without_a_date_are_read_today(cli, catalog):
    newest = release_on(catalog, "sglang", dt.date.today())
    found = resolution(cli, "lmsysorg/sglang:latest-cu129")
    assert found["build"] == newest.id and f"on {dt.date.today()} was SGLang" in found["how"]
    blackwell = resolution(cli, "lmsysorg/sglang:blackwell", "--as-of", "2026-07-01")
    assert blackwell["build"] == release_on(catalog, "sglang", dt.date(2026, 7, 1)).id
    assert blackwell["confidence"] == "approximate"  # what the tag follows is not published


def test_main_branch_tags_answer_for_the_release_before_them(cli, catalog):
    dev = resolution(cli, "lmsysorg/sglang:dev-glm52-nvfp4", "--pulled", "2026-07-20")
    assert dev["build"] == release_on(catalog, "sglang", dt.date(2026, 7, 20)).id
    assert dev["rule"] == "rolling" and "the release before it" in dev["how"]
    dated = resolution(cli, "lmsysorg/sglang:nightly-dev-cu13-20260624-b2c8f7a2")  # the tag carries its date
    assert (
        dated["build"] == release_on(catalog, "sglang", dt.date(2026, 6, 24)).id and "built 2026-06-24" in dated["how"]
    )


@pytest.mark.parametrize(
    ("tag", "day"),
    [("nightly-435f82d61", dt.date(2026, 6, 22)), ("cu129-nightly-ace95c9cf", dt.date(2026, 6, 3))],
)
def test_a_nightly_commit_answers_for_the_release_before_its_date(cli, catalog, tag, day):
    found = resolution(cli, f"vllm/vllm-openai:{tag}")
    assert (found["build"], found["rule"], found["confidence"]) == (
        release_on(catalog, "vllm", day).id,
        "nightly-commit",
        "approximate",
    )
    assert f"is of {day}" in found["how"]


def test_ngc_containers_map_by_their_release_notes(cli):
    # 26.03 is not a catalog build of its own: its release notes name the vLLM release inside (0.17.1)
    exact = resolution(cli, "nvcr.io/nvidia/vllm:26.03-py3")
    assert (exact["build"], exact["rule"]) == ("vllm-0.17.0", "vendor")
    assert "rel-26-03.html" in exact["how"]
    # 25.11 and 26.01 are catalog builds (the DGX Spark playbook's images), however the tag is spelled
    for spelling in ("nvcr.io/nvidia/vllm:25.11-py3", "nvidia/vllm:25.11-py3", "nvcr.io/nvidia/vllm:25.11"):
        assert resolution(cli, spelling)["build"] == "vllm-ngc-25.11"
    for spelling in ("nvcr.io/nvidia/vllm:26.01-py3", "nvidia/vllm:26.01-py3"):
        assert (resolution(cli, spelling)["build"], resolution(cli, spelling)["rule"]) == ("vllm-ngc-26.01", "image")
    between = resolution(cli, "nvcr.io/nvidia/vllm:25.12-py3")  # not in the table: bounded by 25.10 and 26.01
    assert (between["build"], between["confidence"]) == ("vllm-0.10.2", "approximate")
    assert "between 25.10 (vLLM 0.10.2) and 26.01 (0.11.1)" in between["how"]
    unknown = cli(*ASK, "--build", "nvcr.io/nvidia/sglang:25.10-py3")
    assert unknown.code == 2 and len(unknown.err.strip().splitlines()) == 1
    assert "sglang-release-notes" in unknown.err and "--build sglang==X" in unknown.err
    assert "nearest SGLang releases by date: sglang-0.5.3 (2025-10-12)" in unknown.err  # 25.10: October 2025


@pytest.mark.parametrize(
    ("given", "build", "rule"),
    [
        ("0.5.3", "sglang-0.5.3", "version"),  # what `python -m sglang.launch_server --version` prints
        ("SGLang version: 0.5.3", "sglang-0.5.3", "version"),
        ("sglang==0.5.3rc0", "sglang-0.5.2", "version-string"),  # a pre-release: the release before it
        ("sglang==0.5.0rc2", "sglang-0.5.0rc2", "version"),  # a pre-release the catalog has: itself
        ("vllm 0.11.1rc2.dev123+g0123abc", "vllm-0.11.0", "version-string"),
        (
            "Name: vllm\nVersion: 0.22.1rc1.dev124+gace95c9cf.d20260603\nSummary: A high-throughput …",
            "vllm-0.22.0",
            "version-string",
        ),
    ],
)
def test_version_strings_as_users_paste_them(cli, given, build, rule):
    found = resolution(cli, given)
    assert (found["build"], found["rule"]) == (build, rule)
    if rule == "version-string":
        assert found["confidence"] == "approximate" and "the release before it" in found["how"]
    else:
        assert found["confidence"] == "exact" and "the release before it" not in found["how"]


def test_a_digest_names_the_build_that_lists_it(cli, tmp_path):
    digest = "sha256:" + "ab" * 32
    private(tmp_path, "vllm-0.30.0-pinned", "vllm-0.30.0", f"vllm/vllm-openai:v0.30.0@{digest}")
    found = resolution(cli, f"vllm/vllm-openai@{digest}", "--recipes", str(tmp_path))
    assert (found["build"], found["rule"], found["confidence"]) == ("vllm-0.30.0-pinned", "digest", "exact")


def private(root: Path, build_id: str, parent: str, image: str) -> None:
    folder = root / "engines" / "vllm"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{build_id}.yaml").write_text(
        f"id: {build_id}\nextends: {parent}\nversion: private build of {parent}\nreleased: 2026-10-01\n"
        f"images:\n  x86_64: {image}\n"
    )


def test_an_unknown_tag_is_refused_with_the_nearest_builds_and_how_to_say_it(cli, tmp_path):
    tag = "vllm/vllm-openai:deepseekv41-flash-0909"
    result = cli(*ASK, "--build", tag)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    line = result.err
    assert f"--build {tag}:" in line and "nearest known: " in line and "vllm-glm53-flash-image" in line
    assert "say it as --build vllm==" in line and "--recipes DIR" in line
    parent = line.split("`extends: ")[1].split("`")[0]
    private(tmp_path, "my-dsv41", parent, tag)  # doing what the line says makes the tag a build
    found = resolution(cli, tag, "--recipes", str(tmp_path))
    assert (found["build"], found["rule"]) == ("my-dsv41", "image")


def test_history_and_generate_take_the_same_names(cli, catalog, tmp_path):
    history = cli(
        "history", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm/vllm-openai:latest", "--pulled",
        "2026-08-01", "--format", "json",
    )  # fmt: skip
    assert history.code == 0, history.err
    expected = release_on(catalog, "vllm", dt.date(2026, 8, 1)).id
    assert history.json()["request"]["build_resolution"]["build"] == expected
    assert [e["engine"] for e in history.json()["engines"]] == ["vllm"]
    out = tmp_path / "out"
    text = cli("generate", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm/vllm-openai:latest",
               "--out", str(out))  # fmt: skip
    assert text.code == 0, text.err
    today = dt.date.today()
    assert f":latest on {today} was vLLM" in text.out
    # the artifacts' command pins the day the tag was read, so rerunning it answers for the same build
    assert f"--build vllm/vllm-openai:latest --pulled {today}" in (out / "README.md").read_text()


def llama_cpp(cli: Any, build: str, *extra: str) -> Any:
    return cli("explain", "--gpu", "rtx-4090", "--model", "qwen3-8b", "--build", build, *extra, "--format", "json")


def numbered(catalog: Any, at_most: int) -> Any:
    """The newest llama.cpp release tag bN with N <= at_most, from the catalog's own builds."""
    line = [
        (int(b.version[1:]), b)
        for b in catalog.engines["llama.cpp"].builds
        if b.provenance == "official" and b.version[1:].isdigit()
    ]
    return max((pair for pair in line if pair[0] <= at_most), key=lambda pair: pair[0])[1]


@pytest.mark.parametrize(
    "given",
    ["llama.cpp==b{n}", "llama-server==b{n}", "b{n}", "ghcr.io/ggml-org/llama.cpp:server-cuda-b{n}"],
)
def test_llama_cpp_build_numbers_name_the_release_at_or_below_them(cli, catalog, given):
    tagged = numbered(catalog, 10**7)
    exact = llama_cpp(cli, given.format(n=tagged.version[1:]))
    assert exact.code == 0, exact.err
    assert exact.json()["request"]["build"] == tagged.id
    between = numbered(catalog, int(tagged.version[1:]) - 1)  # a number between two release tags
    found = llama_cpp(cli, given.format(n=int(between.version[1:]) + 1))
    assert found.code == 0, found.err
    resolution = found.json()["request"]["build_resolution"]
    assert (resolution["build"], resolution["confidence"]) == (between.id, "nearest")
    assert "at or below" in resolution["how"]


def test_llama_cpp_images_are_read_by_flavour_and_build_number(cli, catalog):
    # the moving CUDA tags are master builds: answered for the newest release out by that day
    rolling = llama_cpp(cli, "ghcr.io/ggml-org/llama.cpp:server-cuda", "--as-of", "2026-03-01")
    assert rolling.json()["request"]["build"] == release_on(catalog, "llama.cpp", dt.date(2026, 3, 1)).id
    assert "main-branch build" in rolling.json()["request"]["build_resolution"]["how"]
    old_owner = llama_cpp(cli, f"ghcr.io/ggerganov/llama.cpp:full-cuda-{numbered(catalog, 10**7).version}")
    assert old_owner.code == 0, old_owner.err
    # a CPU or Vulkan image has no CUDA kernels: refused in one line that names the CUDA flavour
    for tag in ("server", "server-vulkan-b7186"):
        cpu = llama_cpp(cli, f"ghcr.io/ggml-org/llama.cpp:{tag}")
        assert cpu.code == 2 and len(cpu.err.strip().splitlines()) == 1
        assert "not a CUDA build" in cpu.err and "server-cuda" in cpu.err


def test_a_build_number_is_no_version_of_another_engine_and_an_older_one_is_refused(cli):
    other = llama_cpp(cli, "vllm==b7000")
    assert other.code == 2 and "is a build number" in other.err and "vllm==0." in other.err
    older = llama_cpp(cli, "llama.cpp==b100")
    assert older.code == 2 and "older than the oldest llama.cpp" in older.err
    assert "say it as --build llama.cpp==b" in older.err


def test_a_fork_or_engine_at_a_commit_names_the_build_made_there(cli, catalog):
    forks = [b for b in catalog.engines["llama.cpp"].builds if b.id.startswith("ik_llama.cpp-") and b.ref]
    assert forks
    for build in forks:
        found = llama_cpp(cli, f"ik_llama.cpp=={build.ref[:8]}")
        assert found.code in (0, 3), found.err
        resolution = found.json()["request"]["build_resolution"]
        assert (resolution["build"], resolution["rule"]) == (build.id, "commit")
    unknown = llama_cpp(cli, "ik_llama.cpp==deadbeef1")
    assert unknown.code == 2 and len(unknown.err.strip().splitlines()) == 1
    assert "no ik_llama.cpp build in the catalog was made at commit deadbeef1" in unknown.err
    assert all(b.id in unknown.err for b in forks)

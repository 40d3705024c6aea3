"""lint on a flag an engine removed: the last release whose code had it and what its code says replaces it."""

from __future__ import annotations

from tests.support.cli import run_cli


def _lint(*args: str) -> tuple[int, dict[str, dict]]:
    result = run_cli("lint", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return result.code, {f["flag"]: f for f in result.json()["findings"] if f["flag"]}


def test_llama_cpp_no_mmap_and_mlock_name_the_load_mode_value_that_replaces_each():
    code, found = _lint("--", "llama-server", "-m", "/models/x.gguf", "--no-mmap", "--mlock", "-dio")
    assert code == 1
    for flag, fix in (("--no-mmap", "--load-mode none"), ("--mlock", "--load-mode mlock"), ("-dio", "--load-mode dio")):
        finding = found[flag]
        assert (finding["severity"], finding["code"], finding["fix"]) == ("error", "flag-removed", fix)
        # the newest llama.cpp read that still had it, and the code that deprecated it there
        assert "4df29be (2026-08-17) is the newest release read that still has it" in finding["why"]
        assert finding["sources"][0] == "https://github.com/ggml-org/llama.cpp/blob/4df29be/common/arg.cpp"


def test_a_llama_cpp_build_older_than_the_removal_keeps_the_flag_and_is_told_what_replaces_it():
    code, found = _lint("--build", "llama.cpp-b9333", "--", "llama-server", "-m", "/models/x.gguf", "--no-mmap")
    assert code == 0  # the build still accepts it: nothing fails
    finding = found["--no-mmap"]
    assert (finding["severity"], finding["code"]) == ("warn", "flag-removed-later")
    assert finding["fix"] == "keep it on b9333; when you upgrade past 4df29be, use --load-mode none"
    assert "newer than b9333, still had --no-mmap, 0c1e570 no longer" in finding["why"]


def test_a_vllm_flag_removed_between_releases_names_the_last_release_that_had_it():
    code, found = _lint("--", "vllm", "serve", "Qwen/Qwen3-32B", "--use-v2-block-manager")
    assert code == 1
    finding = found["--use-v2-block-manager"]
    assert (finding["code"], finding["fix"]) == ("flag-removed", "drop --use-v2-block-manager")
    assert "vLLM 0.9.2 (2025-07-08) is the newest release read that still has it (0.10.0 has not)" in finding["why"]
    # its last release's own code says why dropping it is safe, and the file it says so in comes first
    assert "Setting this flag to True or False has no effect on vLLM behavior" in finding["why"]
    assert finding["sources"][:2] == [
        "https://github.com/vllm-project/vllm/blob/v0.9.2/vllm/engine/arg_utils.py",
        "https://pypi.org/project/vllm/0.9.2/",
    ]
    # named release harvested and older than the shipped vocabulary: said of that release
    code, found = _lint("--build", "vllm==0.10.0", "--", "vllm", "serve", "Qwen/Qwen3-32B", "--use-v2-block-manager")
    assert found["--use-v2-block-manager"]["code"] == "flag-removed"
    assert "not a vLLM 0.10.0 option" in found["--use-v2-block-manager"]["why"]


def test_an_sglang_flag_removed_between_releases_names_when_it_left():
    args = ("python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-32B", "--enable-flashinfer-mla")
    code, found = _lint("--", *args)
    assert code == 1
    finding = found["--enable-flashinfer-mla"]
    # 0.4.6 and 0.4.7 parse it only to stop with a message: 0.4.5 is the last that accepts it
    assert "SGLang 0.4.5 (2025-04-07) is the newest release read that still has it (0.4.6 has not)" in finding["why"]
    assert finding["fix"] == "--attention-backend flashinfer"  # what 0.4.5's own help names instead
    assert finding["sources"][0] == "https://github.com/sgl-project/sglang/blob/v0.4.5/python/sglang/srt/server_args.py"


def test_an_sglang_build_that_keeps_a_flag_only_to_refuse_it_quotes_its_message():
    args = ("python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-32B", "--enable-flashinfer-mla")
    code, found = _lint("--build", "sglang==0.4.6", "--", *args)
    assert code == 1
    finding = found["--enable-flashinfer-mla"]
    assert (finding["severity"], finding["code"], finding["fix"]) == (
        "error",
        "flag-removed",
        "--attention-backend flashinfer",
    )
    assert "SGLang 0.4.6 stops at start" in finding["what"]


def test_a_vllm_flag_the_named_release_deprecates_names_its_replacement_and_the_release_without_it():
    code, found = _lint("--build", "vllm==0.12.0", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--cuda-graph-sizes", "8")
    finding = found["--cuda-graph-sizes"]
    assert (finding["severity"], finding["code"]) == ("warn", "flag-deprecated")
    assert finding["fix"] == "use --cudagraph-capture-sizes"
    assert finding["why"].endswith("vLLM 0.13.0 no longer accepts it")
    # the newest vLLM has dropped it: an error that names the last release with it and what that one named instead
    code, found = _lint("--", "vllm", "serve", "Qwen/Qwen3-8B", "--cuda-graph-sizes", "8")
    assert code == 1
    finding = found["--cuda-graph-sizes"]
    assert (finding["code"], finding["fix"]) == ("flag-removed", "--cudagraph-capture-sizes")
    assert "vLLM 0.12.0 (2025-12-03) is the newest release read that still has it" in finding["why"]


def test_a_flag_no_release_ever_had_stays_unknown_with_the_nearest_spelling():
    code, found = _lint("--", "llama-server", "-m", "/models/x.gguf", "--load-modes", "none")
    assert code == 1
    assert found["--load-modes"]["code"] == "unknown-flag"


def test_list_engines_shows_the_llama_cpp_commit_read_for_its_flags_as_no_build_to_name():
    result = run_cli("list", "engines", "--format", "json")
    assert result.code == 0, result.err
    row = next(r for r in result.json() if r["engine"] == "llama.cpp" and r.get("release") == "4df29be")
    assert (row["build"], row["use"], row["released"]) == (None, None, "2026-08-17")
    assert row["harvested"]["artifact"] == "llama_cpp_python-0.3.35.tar.gz"


def test_a_flag_the_named_llama_cpp_build_keeps_only_to_refuse_is_an_error_with_its_own_message():
    code, found = _lint("--", "llama-server", "-m", "/models/x.gguf", "--draft", "8")
    assert code == 1
    finding = found["--draft"]
    assert (finding["severity"], finding["code"]) == ("error", "flag-removed")
    assert finding["fix"] == "use --spec-draft-n-max or --spec-ngram-mod-n-max"
    assert finding["sources"][0] == "https://github.com/ggml-org/llama.cpp/blob/0c1e570/common/arg.cpp"


def test_a_flag_the_named_build_deprecates_is_a_warning_quoting_its_code():
    code, found = _lint("--", "llama-server", "-m", "/models/x.gguf", "--defrag-thold", "0.1")
    assert code == 0  # the build still starts
    finding = found["--defrag-thold"]
    assert (finding["severity"], finding["code"]) == ("warn", "flag-deprecated")
    assert "--defrag-thold is deprecated and no longer necessary to specify" in finding["why"]

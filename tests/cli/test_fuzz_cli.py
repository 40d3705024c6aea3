"""10,000 generated command lines: every one ends in a documented exit code, none in a traceback."""

from __future__ import annotations

import random
import time

from recipegen.errors import ExitCode

REQUESTS = 10_000
DOCUMENTED = {ExitCode.OK, ExitCode.USAGE, ExitCode.BLOCKED, ExitCode.CONFLICT}

COMMANDS = [None, None, "generate", "explain", "list", "validate", "matrix", "diagnose", "history", "gen", "--", "-"]
OPTIONS = [
    "--gpu", "--model", "--gpus", "--nodes", "--gpu-memory", "--engine", "--build", "--variant",
    "--context", "--concurrency", "--out", "--format", "--recipes", "--target", "--force", "--version", "--as-of",
    "--help", "--no-such-option", "-g", "--gpu=", "--context=",
]  # fmt: skip
FLAGS = {"--force", "--version", "--help"}
VALID = {
    "--gpu": ["sm80", "a100", "h200", "rtx-4090", "12.1", "gb10", "sm_90"],
    "--model": ["glm-5.2", "gpt-oss-20b", "qwen3-32b", "nvidia/GLM-5.2-NVFP4", "GLM-5.3-Flash"],
    "--gpus": ["1", "2", "8", "3"],
    "--nodes": ["1", "2"],
    "--gpu-memory": ["40", "80", "24.5"],
    "--engine": ["vllm", "sglang", "llama.cpp"],
    "--build": ["vllm==0.27.1", "vllm/vllm-openai:v0.27.1", "sglang==0.5.23", "vllm==99", "vllm=="],
    "--as-of": ["2026-08-27", "2020-01-01", "2026-13-45", "yesterday"],
    "--context": ["4096", "131072"],
    "--concurrency": ["1", "64"],
    "--format": ["text", "json", "md", "html"],
    "--target": ["8xa100-80gb", "2xgb10"],
}
HOSTILE = [
    "", " ", "\n", "x\ny", "\t", "\r", "\x1b[2J", "\x7f", "\u202e", "\udcff", "\u0000", "é", "🙂", "ＧＬＭ",
    "$(touch PWNED)", "`touch PWNED`", "'", '"', "\\", "{{ 7*7 }}", "{% raw %}", "../../etc", "/", ".", "..",
    "-", "--", "--gpu", "-1", "0", "nan", "inf", "-inf", "1e308", "1e-310", "1e400", "9" * 400, "1" + "0" * 5000,
    "0x10", "1_000", " 8 ", "8.0", "٣", "１２", "a" * 300, "b" * 5000, "/proc/self/mem", "/dev/zero", "~", "$HOME",
    "%s%n", "sm", "sm999", "12.", ".5", "1/0", "None", "null", "true", "[]", "{}",
]  # fmt: skip
KINDS = ["models", "hardware", "engines", "deployments", "builds", "variants", "", "MODELS"]


def _value(rng: random.Random, option: str, tmp: str) -> str:
    if option == "--out":
        return rng.choice([f"{tmp}/o{rng.randrange(4)}", tmp, "/", ".", "/proc/x", f"{tmp}/f", *HOSTILE])
    if option == "--recipes":
        return rng.choice([tmp, f"{tmp}/none", "/dev/null", *HOSTILE])
    if option in VALID and rng.random() < 0.4:
        return rng.choice(VALID[option])
    return rng.choice(HOSTILE)


def _request(rng: random.Random, tmp: str) -> list[str]:
    command = rng.choice(COMMANDS)
    args = [] if command is None else [command]
    if command in (None, "generate", "explain") and rng.random() < 0.04:  # a real request, then noise
        args += ["--gpu", rng.choice(VALID["--gpu"]), "--model", rng.choice(VALID["--model"])]
    if command == "list":
        args.append(rng.choice(KINDS))
    if command == "validate" and rng.random() < 0.5:
        args.append(rng.choice([tmp, f"{tmp}/none", *HOSTILE]))
    if command == "matrix":  # one model at most: the whole default matrix takes seconds
        args += ["--model", _value(rng, "--model", tmp)]
    if command == "diagnose":  # never "-": stdin belongs to pytest here
        args.append(rng.choice([f"{tmp}/f", f"{tmp}/none", tmp, "/dev/zero", *[h for h in HOSTILE if h[:1] != "-"]]))
    for _ in range(rng.randrange(0 if len(args) > 2 else 1, 6)):
        option = rng.choice(OPTIONS)
        if option in FLAGS:
            args.append(option)
        elif option.endswith("="):
            args.append(option + _value(rng, option.rstrip("="), tmp))
        else:
            args += [option, _value(rng, option, tmp)]
    if rng.random() < 0.3 and command != "diagnose":
        rng.shuffle(args)
    return args


def test_ten_thousand_generated_requests_end_in_documented_exit_codes(cli, tmp_path):
    (tmp_path / "f").write_text("a file, not a folder")
    rng = random.Random(20260801)
    seen: dict[int, int] = {}
    failures: list[str] = []
    start = time.monotonic()
    for _ in range(REQUESTS):
        args = _request(rng, str(tmp_path))
        result = cli(*args, cwd=tmp_path)
        seen[result.code] = seen.get(result.code, 0) + 1
        if result.code not in DOCUMENTED or "Traceback" in result.err or "internal error" in result.err:
            failures.append(f"{args!r} -> {result.code}: {result.err[:300]}")
        elif result.code != 0:
            lines = result.err.splitlines()
            if not lines or not all(line.isprintable() for line in lines):
                failures.append(f"{args!r} -> {result.code}: unprintable or missing error {result.err[:300]!r}")
    elapsed = time.monotonic() - start
    assert not failures, "\n".join(failures[:20])
    assert seen.get(0, 0) > 50 and seen.get(2, 0) > REQUESTS // 2, seen  # the generator reaches real work too
    assert list(tmp_path.glob("*/.recipegen.json")), "no request got as far as writing a folder"
    assert not (tmp_path / "PWNED").exists()
    assert elapsed < 300, f"{REQUESTS} requests took {elapsed:.0f} s (about 20 s on an idle 2-core machine)"

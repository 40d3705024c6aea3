#!/usr/bin/env python3
"""Regenerate examples/ (one folder per seed scenario, a blocked explanation, the default matrix).

python scripts/examples.py          # rewrite examples/
python scripts/examples.py --check  # exit 1 and list the drift when examples/ differs from what the code renders
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

GENERATE = {
    "glm-5.2-8xa100-80gb": ["--gpu", "sm80", "--model", "glm-5.2"],
    "deepseek-v4-flash-8xa100-80gb": ["--gpu", "a100", "--model", "deepseek-v4-flash", "--gpus", "8"],
    "glm-5.3-flash-2xgb10": ["--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2", "--k8s"],
    "glm-5.2-8xh200": ["--gpu", "h200", "--model", "glm-5.2", "--gpus", "8"],
    "deepseek-v4-flash-0731-8xh200": ["--gpu", "h200", "--model", "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpus", "8"],
    "kimi-k2-2x8xh200": [
        "--gpu",
        "h200",
        "--gpus",
        "8",
        "--nodes",
        "2",
        "--model",
        "kimi-k2",
        "--engine",
        "vllm",
        "--k8s",
    ],
    "gpt-oss-120b-2xrtx-3090": ["--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--host-memory", "128"],
}
BLOCKED = {
    "blocked-glm-5.3-flash-8xrtx-4090": [
        "--gpu",
        "rtx-4090",
        "--model",
        "glm-5.3-flash",
        "--engine",
        "vllm",
        "--build",
        "vllm==0.33.0",  # the official release's wall: the sm89 fork runs it once weights go to host RAM
        "--gpus",
        "8",
    ],
}


def recipegen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recipegen", *args], capture_output=True, text=True, cwd=ROOT)


def render(into: Path) -> None:
    for name, args in GENERATE.items():
        result = recipegen(*args, "--out", str(into / name))
        if result.returncode != 0:
            raise SystemExit(f"{name}: recipegen failed ({result.returncode}): {result.stderr}")
    for name, args in BLOCKED.items():
        folder = into / name
        folder.mkdir(parents=True)
        text = recipegen("explain", *args)
        data = recipegen("explain", "--format", "json", *args)
        (folder / "explain.txt").write_text(f"$ recipegen explain {' '.join(args)}\n\n{text.stdout}")
        (folder / "plan.json").write_text(data.stdout)
        blocked = recipegen(*args, "--out", str(folder / "not-written"))
        if blocked.returncode != 3 or (folder / "not-written").exists():
            raise SystemExit(f"{name}: expected a blocked generate (exit 3, nothing written), got {blocked.returncode}")
    (into / "matrix.md").write_text(recipegen("matrix").stdout)


def drift(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b)
    out = [f"only in {a.name}: {n}" for n in cmp.left_only] + [f"only in rendered: {n}" for n in cmp.right_only]
    out += [f"differs: {n}" for n in cmp.diff_files]
    for sub in cmp.common_dirs:
        out += [f"{sub}/{line}" for line in drift(a / sub, b / sub)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of rewriting")
    check = parser.parse_args().check
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "examples"
        fresh.mkdir()
        render(fresh)
        (fresh / "README.md").write_text(
            (EXAMPLES / "README.md").read_text() if (EXAMPLES / "README.md").exists() else ""
        )
        if check:
            problems = drift(EXAMPLES, fresh) if EXAMPLES.exists() else ["examples/ is missing"]
            for line in problems:
                print(f"examples drift: {line}")
            if problems:
                print("run: python scripts/examples.py")
            return 1 if problems else 0
        readme = EXAMPLES / "README.md"
        keep = readme.read_text() if readme.exists() else None
        if EXAMPLES.exists():
            shutil.rmtree(EXAMPLES)
        shutil.copytree(fresh, EXAMPLES)
        if keep is not None:
            (EXAMPLES / "README.md").write_text(keep)
        print(f"wrote {EXAMPLES}")
        return 0


if __name__ == "__main__":
    sys.exit(main())

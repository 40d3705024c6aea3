#!/usr/bin/env python3
"""The everyday consumer question, audited: the first plan recipegen picks for every catalog model of 7-75B
parameters on one and on two of each card named (by default the 16-96 GB cards a home or lab user buys), one line
each: engine, variant, the GGUF file type, tensor-parallel size, context, offload, decode speed and the reason.

python scripts/everyday_grid.py                            # the default cards, 1 and 2 GPUs
python scripts/everyday_grid.py --gpu rtx-4080 --gpus 1    # one card, one count
"""

from __future__ import annotations

import argparse
import json
import re

DEFAULT_CARDS = ("rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "l40s", "rtx-pro-6000", "a100-40gb", "rtx-4080")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
FILE_TYPE = re.compile(r"(?i)(?<![a-z0-9])(I?Q\d_[A-Z0-9_]+?|MXFP4|BF16|F16)(?:-\d{5}-of-\d{5})?\.gguf$")


def models() -> list[str]:
    from recipegen.catalog import load

    catalog = load.load()
    sized = [(m.params_total_b or 0.0, k) for k, m in catalog.models.items()]
    return [k for b, k in sorted(sized) if 6.5 <= b <= 75]


def pick(gpu: str, gpus: int, model: str) -> str:
    from recipegen.cli.inprocess import run

    result = run(["explain", "--gpu", gpu, "--gpus", str(gpus), "--model", model, "--format", "json"], env=OFFLINE)
    if result.code != 0:
        return f"error {result.code}: {(result.err.strip().splitlines() or [''])[-1][:120]}"
    plans = json.loads(result.out)["plans"]
    if not plans:
        return "no plan"
    p = plans[0]
    argv = p["argv"]
    found = FILE_TYPE.search(argv[argv.index("--model") + 1]) if p["quant"] == "gguf" and "--model" in argv else None
    offload = p["offload"]["mechanism"] if p["offload"] else "-"
    settings = p["settings"]
    return (
        f"{p['engine']:9} {p['variant']:28} {(found.group(1).upper() if found else ''):8} "
        f"tp{settings.get('tensor_parallel')} ctx{settings.get('context')} {offload:13} "
        f"{p['speed']['decode_tokens_per_s']:7.1f} tok/s | {p['why_first'].split(' — next:')[0]}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--gpu", action="append", help="a card id (repeatable); default: the everyday cards")
    parser.add_argument("--gpus", type=int, choices=(1, 2), action="append", help="1 or 2 (repeatable)")
    args = parser.parse_args()
    for gpu in args.gpu or DEFAULT_CARDS:
        for gpus in args.gpus or (1, 2):
            for model in models():
                print(f"{gpu:12} {gpus} {model:30} {pick(gpu, gpus, model)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

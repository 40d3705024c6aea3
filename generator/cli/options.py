"""The options the commands share, as typer types, and the catalog they load: commands import these, never the app.

Each option's value is checked where click parses it (values.py), before any catalog is loaded.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from ..catalog.kinds import KIND_NAMES
from . import values as cli_values

if TYPE_CHECKING:
    from ..catalog.index import Catalog


class Format(str, Enum):
    text = "text"
    json = "json"


class MatrixFormat(str, Enum):
    md = "md"
    json = "json"
    html = "html"


Kind = Enum("Kind", {name: name for name in KIND_NAMES}, type=str)  # type: ignore[misc]


Recipes = Annotated[
    list[str],
    typer.Option(
        "--recipes",
        metavar="DIR",
        callback=cli_values.path,
        help="extra recipe directory (repeatable; also $RECIPEGEN_RECIPES)",
        show_default=False,
    ),
]
Gpu = Annotated[
    str | None,
    typer.Option(
        "--gpu",
        metavar="GPU",
        callback=cli_values.name,
        help="GPU id, alias or compute capability (a100, rtx-4090, sm80, 12.1)",
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="MODEL",
        callback=cli_values.name,
        help="model id or alias, a Hugging Face repo id (ORG/NAME[@REV]) or a checkpoint folder",
    ),
]
Gpus = Annotated[
    int | None,
    typer.Option(
        "--gpus",
        metavar="N",
        callback=cli_values.count,
        help="GPUs per node, 1-1024 (default: smallest of 1, 2, 4, 8 that runs)",
    ),
]
Nodes = Annotated[int, typer.Option("--nodes", metavar="N", callback=cli_values.count, help="number of nodes, 1-1024")]
GpuMemory = Annotated[
    float | None,
    typer.Option(
        "--gpu-memory",
        metavar="GIB",
        callback=cli_values.gib,
        help="GiB per GPU (1-4096), to pick or override the part",
    ),
]
EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine", metavar="ENGINE", callback=cli_values.name, help="only this engine (vllm, sglang, llama.cpp …)"
    ),
]
BuildOpt = Annotated[
    str | None,
    typer.Option(
        "--build",
        metavar="BUILD",
        callback=cli_values.build_text,
        help="the build you run: a build id, ENGINE==VERSION (vllm==0.30.0), what `vllm --version` or `pip show` "
        "prints, or the image (vllm/vllm-openai:v0.30.0, :latest, :nightly-<commit>, nvcr.io/nvidia/vllm:26.01-py3)",
    ),
]
VariantOpt = Annotated[
    str | None,
    typer.Option("--variant", metavar="VARIANT", callback=cli_values.name, help="only this variant id or repo"),
]
Context = Annotated[
    int | None,
    typer.Option(
        "--context", metavar="TOKENS", callback=cli_values.count, help="context length to plan for, 1-100,000,000"
    ),
]
Concurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency", metavar="N", callback=cli_values.count, help="concurrent requests to plan for, 1-1,000,000"
    ),
]
# the run configuration a configuration-scoped defect is matched against (explain, generate, history)
KvCacheDtype = Annotated[
    str | None,
    typer.Option(
        "--kv-cache-dtype",
        metavar="DTYPE",
        callback=cli_values.name,
        help="the KV cache dtype you run with, as the engine spells it (fp8, bfloat16) or bf16/fp8_e4m3",
    ),
]
Speculative = Annotated[
    str | None,
    typer.Option(
        "--speculative",
        metavar="METHOD",
        callback=cli_values.name,
        help="the speculative decoding method you run with (mtp, eagle, eagle3, ngram)",
    ),
]
SpeculativeTokens = Annotated[
    int | None,
    typer.Option(
        "--speculative-tokens",
        metavar="N",
        callback=cli_values.count,
        help="draft tokens per speculative step you run with (vLLM num_speculative_tokens), 1-1024",
    ),
]
Dcp = Annotated[
    int | None,
    typer.Option("--dcp", metavar="N", callback=cli_values.count, help="decode context parallel size, 1-1024"),
]
Eager = Annotated[bool, typer.Option("--eager", help="you run without CUDA graphs (--enforce-eager)")]
FormatOpt = Annotated[Format, typer.Option("--format", metavar="text|json", help="text or json")]
Version = Annotated[
    bool,
    typer.Option("--version", callback=cli_values.version, is_eager=True, help="print the version and exit"),
]
AsOf = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        metavar="DATE",
        callback=cli_values.name,
        help="answer with the builds released by this date (YYYY-MM-DD)",
    ),
]
Pulled = Annotated[
    str | None,
    typer.Option(
        "--pulled",
        metavar="DATE",
        callback=cli_values.name,
        help="when you pulled a rolling tag (:latest, :nightly), YYYY-MM-DD: --build reads it at that date",
    ),
]
HostMemory = Annotated[
    float | None,
    typer.Option(
        "--host-memory",
        metavar="GIB",
        callback=cli_values.quantity,
        help="host RAM in GiB (1-65,536), for offload plans (default 64, said in the output)",
    ),
]
HostBandwidth = Annotated[
    float | None,
    typer.Option(
        "--host-bandwidth",
        metavar="GB/S",
        callback=cli_values.quantity,
        help="host RAM bandwidth in GB/s (1-10,000), for speed estimates (default 51.2: dual-channel DDR4-3200)",
    ),
]


def load_catalog(recipes: list[str]) -> Catalog:
    """The built-in catalog plus the --recipes folders (and $RECIPEGEN_RECIPES), loaded when a command needs it."""
    from ..catalog.load import load

    return load(recipes)

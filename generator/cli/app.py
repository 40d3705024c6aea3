"""The command line. Thin: parse options, call the library, print. Heavy modules load per command.

Exit codes: 0 ok · 1 a check failed (preflight, verify, up), or the output pipe closed early
(`| head`) · 2 bad input (unknown name, invalid catalog, bad value, bad usage) · 3 blocked (no path
runs the request) · 4 the output folder exists with different content or is not recipegen's (use
--force / another --out) · 70 internal error (a bug: rerun with RECIPEGEN_DEBUG=1 for the traceback
and report it) · 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import os
import sys
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main

from . import cli_values
from .errors import BlockedError, ExitCode, RecipegenError
from .frozen import frozen
from .kinds import KIND_NAMES

if TYPE_CHECKING:
    from .catalog import Catalog
    from .offload import HostFacts
    from .resolver import Request, Resolution

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Can this open LLM run on these GPUs — why or why not, and exactly how.",
)


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
        callback=cli_values.name,
        help="the build you run: a build id, ENGINE==VERSION (vllm==0.30.0) or an image (vllm/vllm-openai:v0.30.0)",
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


def _catalog(recipes: list[str]) -> Catalog:
    from .catalog import load

    return load(recipes)


@frozen
class Selectors:
    """What the user asked for, as typed; the same for generate and explain."""

    gpu: str | None
    model: str | None
    gpus: int | None = None
    nodes: int = 1
    gpu_memory: float | None = None
    engine: str | None = None
    build: str | None = None
    variant: str | None = None
    context: int | None = None
    concurrency: int | None = None
    as_of: str | None = None
    host_memory: float | None = None
    host_bandwidth: float | None = None

    def command_line(self) -> str:
        """The request as a recipegen command (written into the artifacts, so reruns are identical)."""
        import shlex

        parts = ["recipegen", "--gpu", self.gpu or "", "--model", self.model or ""]
        for flag, value in (
            ("--gpus", self.gpus),
            ("--nodes", self.nodes if self.nodes != 1 else None),
            ("--gpu-memory", self.gpu_memory),
            ("--engine", self.engine),
            ("--build", self.build),
            ("--variant", self.variant),
            ("--context", self.context),
            ("--concurrency", self.concurrency),
            ("--as-of", self.as_of),
            ("--host-memory", self.host_memory),
            ("--host-bandwidth", self.host_bandwidth),
        ):
            if value is not None:
                parts += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        return " ".join(shlex.quote(p) for p in parts)


def _request(catalog: Catalog, sel: Selectors) -> Request:
    from .anymodel import resolve_any
    from .names import resolve_engine, resolve_gpu, resolve_user_build, resolve_variant
    from .resolver import Request

    detected = None
    if sel.model is not None and (sel.gpu is None or sel.gpu.casefold() == "auto"):
        from .detect import auto_gpu

        detected = auto_gpu(catalog, required=sel.gpu is not None)
    if (sel.gpu is None and detected is None) or sel.model is None:
        missing = " and ".join(n for n, v in (("--gpu", sel.gpu or detected), ("--model", sel.model)) if v is None)
        raise RecipegenError(f"{missing} is required", "e.g. recipegen --gpu sm80 --model glm-5.2")
    choice = resolve_any(catalog, sel.model)
    if detected is not None:  # the detected part's id, so --gpu-memory still applies
        target = resolve_gpu(catalog, detected[0].id, sel.gpu_memory)
        extra = f" ({target.how})" if sel.gpu_memory is not None else ""
        target = replace(target, how=detected[1] + extra)
    else:
        assert sel.gpu is not None
        target = resolve_gpu(catalog, sel.gpu, sel.gpu_memory)
    as_of = parse_date(sel.as_of, "--as-of") if sel.as_of else None
    # a folder is named by its absolute path, so the artifacts of `./x` and of `/abs/x` are the same bytes
    notes = [f"--model {choice.folder or sel.model} → {choice.how}", f"--gpu {sel.gpu or 'auto'} → {target.how}"]
    build = resolve_user_build(catalog, sel.build, as_of) if sel.build else None
    if build is not None:
        released = catalog.build(build.build_id)[1].released
        if as_of is not None and released > as_of:
            raise RecipegenError(
                f"--build {sel.build} is {build.build_id}, released {released}, after --as-of {as_of}",
                "drop one of the two, or give a build released by that date",
            )
        notes.append(f"--build {sel.build} → {build.how}")
    if as_of is not None:
        known = sum(1 for _, b in catalog.builds() if b.released <= as_of)
        notes.append(f"--as-of {as_of} → the {known} build(s) released by then")
    return Request(
        host=_host(sel),
        model=choice.model,
        hardware=target.hardware,
        gpus_per_node=sel.gpus,
        nodes=sel.nodes,
        engine=resolve_engine(catalog, sel.engine).id if sel.engine else None,
        build=build.build_id if build else None,
        variant=resolve_variant(choice.model, sel.variant) if sel.variant else choice.variant,
        context=sel.context,
        concurrency=sel.concurrency,
        target_note="; ".join(notes),
        as_of=as_of,
        model_facts=choice.facts,
        weights_folder=choice.folder,
    )


def parse_date(value: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise RecipegenError(f"{option} {value!r} is not a date", "write it as YYYY-MM-DD, e.g. 2026-08-27") from None


def _host(sel: Selectors) -> HostFacts:
    """The host facts of the request (bounds were checked where the options were parsed: cli_values)."""
    from .offload import HostFacts

    host = HostFacts()
    return HostFacts(
        memory_gib=sel.host_memory if sel.host_memory is not None else host.memory_gib,
        bandwidth_gbs=sel.host_bandwidth if sel.host_bandwidth is not None else host.bandwidth_gbs,
        memory_default=sel.host_memory is None,
        bandwidth_default=sel.host_bandwidth is None,
    )


def _explanation(catalog: Catalog, resolution: Resolution) -> str:
    from .advice import alternatives, faster_elsewhere
    from .report import explain_text

    alts = alternatives(catalog, resolution) if not resolution.plans else faster_elsewhere(catalog, resolution)
    return explain_text(resolution, alts)


def closest_rejections(resolution: Resolution, limit: int = 5) -> list[str]:
    """The rejected paths that came closest (fewest failing gates), one line each."""
    from .resolver.resolve import rank_key

    rejected = [c for c in resolution.candidates if not c.runnable and c.gate("architecture").outcome == "pass"]
    rejected.sort(key=lambda c: (len(c.failing()), rank_key(c)))
    if not rejected:
        return []
    out = [f"  closest rejected paths ({len(rejected)} in all; README.md lists every gate failure):"]
    for cand in rejected[:limit]:
        first = cand.failing()[0]
        gates = ", ".join(g.gate for g in cand.failing())
        out.append(f"    ✗ {cand.engine.id} {cand.build.id} · {cand.variant.id} [{gates}]: {first.reason[:140]}")
    return out


def generate_command(sel: Selectors, out: str | None, force: bool, fmt: Format, recipes: list[str]) -> None:
    from .contract import resolution_json
    from .output import write
    from .render import folder_name, render
    from .report import candidate_title, target_line
    from .resolver import resolve

    catalog = _catalog(recipes)
    request = _request(catalog, sel)
    if request.weights_folder is not None:
        from .hub import mountable_blobs

        request = replace(request, weights_blobs=mountable_blobs(Path(request.weights_folder)))
    resolution = resolve(catalog, request)
    if not resolution.plans:
        if fmt is Format.json:
            typer.echo(json.dumps(resolution_json(resolution), indent=2, ensure_ascii=False))
        else:
            typer.echo(_explanation(catalog, resolution))
        if resolution.undecided:
            raise BlockedError(
                "unknown: no path is known to run this request (a fact is missing, none fails); nothing written",
                "see the reasons above",
            )
        raise BlockedError("blocked: no path runs this request; nothing written", "see the reasons above")
    if sel.gpu is None or sel.gpu.casefold() == "auto":  # rerunning the artifacts' command needs no GPU here
        sel = replace(sel, gpu=request.hardware.id)
    typed = sel.model
    if request.weights_folder is not None:  # the artifacts name the absolute folder, so a rerun finds it anywhere
        sel = replace(sel, model=request.weights_folder)
    files = render(resolution, sel.command_line())
    target = Path(out) if out is not None else Path(folder_name(resolution))
    changed = write(files, target, force)
    if fmt is Format.json:  # the same object as plan.json, container spec included
        typer.echo(files["plan.json"], nl=False)
        return
    top = resolution.plans[0]
    lines = [
        f"{target_line(resolution)}: RUNNABLE",
        f"  understood: {request.target_note}",
        *(
            [f"  weights: the local folder {request.weights_folder}, mounted read-only; nothing is downloaded"]
            + (
                [f"    (a Hugging Face cache snapshot: its links point into {request.weights_blobs}, mounted too)"]
                if request.weights_blobs
                else []
            )
            + ([f"    (--model {typed} made absolute: the artifacts name this path)"] if typed != sel.model else [])
            if request.weights_folder is not None
            else []
        ),
        f"  layout: {resolution.layout_note}",
        f"  plan #1: {candidate_title(top.candidate)}",
        f"  why: {top.why_first}",
    ]
    if top.candidate.budget is not None:
        b = top.candidate.budget
        from .memory import ESTIMATED

        estimated = " (checkpoint size estimated from the parameter count; README.md says how)" * any(
            n.startswith(ESTIMATED) for n in b.notes
        )
        lines.append(
            f"  memory: {b.weights_gib:.1f} GiB weights/GPU{estimated}, context {b.context}, "
            f"concurrency {b.concurrency} ({b.limit})"
        )
    if top.candidate.offload is not None:
        lines.append(f"  offload: {top.candidate.offload.summary()}")
    if top.candidate.speed is not None:
        lines.append(f"  speed (estimate): {top.candidate.speed.headline()}")
    if top.candidate.offload is not None:  # what the same model does on hardware that holds it
        from .advice import faster_elsewhere

        faster = faster_elsewhere(catalog, resolution)
        lines.extend(["  faster without host offload, on other hardware:"] if faster else [])
        lines.extend(f"    • {alt.target}: {alt.summary}" for alt in faster)
    lines.extend(closest_rejections(resolution))
    verb = "wrote" if changed else "unchanged"
    shown = cli_values.printable(str(target) if out is not None else f"./{target}", 2000)
    lines.append(f"  {verb} {shown}/: " + ", ".join(sorted(files)))
    typer.echo("\n".join(lines))


def generate(
    ctx: typer.Context,
    gpu: Gpu = None,
    model: ModelOpt = None,
    gpus: Gpus = None,
    nodes: Nodes = 1,
    gpu_memory: GpuMemory = None,
    engine: EngineOpt = None,
    build: BuildOpt = None,
    variant: VariantOpt = None,
    context: Context = None,
    concurrency: Concurrency = None,
    as_of: AsOf = None,
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out", metavar="DIR", callback=cli_values.path, help="output folder (default: ./<model>-<count>x<gpu>)"
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="replace the files recipegen wrote in --out earlier (other files are kept)"),
    ] = False,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006 - typer reads the default, never mutates it
    version: Version = False,
) -> None:
    """Resolve a model on a GPU fleet and write launch.sh, docker-compose.yml, README.md, verify.sh and plan.json."""
    if ctx.invoked_subcommand is not None:  # as the root callback, before another command
        _refuse_options_before(ctx)
        return
    if gpu is None and model is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    sel = Selectors(
        gpu,
        model,
        gpus,
        nodes,
        gpu_memory,
        engine,
        build,
        variant,
        context,
        concurrency,
        as_of,
        host_memory=host_memory,
        host_bandwidth=host_bandwidth,
    )
    generate_command(sel, out, force, fmt, recipes)


def _refuse_options_before(ctx: typer.Context) -> None:
    """Options typed before a subcommand belong to the root command and would be ignored: refuse them."""
    sources = {param.name: ctx.get_parameter_source(param.name) for param in ctx.command.params if param.name}
    given = [
        param.opts[0]
        for param in ctx.command.params
        if param.opts and getattr(sources.get(param.name or ""), "name", None) == "COMMANDLINE"
    ]
    if given:
        sub = ctx.invoked_subcommand
        raise RecipegenError(
            f"{', '.join(given)} given before `{sub}` would be ignored",
            f"put options after the command: recipegen {sub} … {given[0]} …",
        )


# The root command and `generate` are one function: `recipegen --gpu … --model …` needs no subcommand.
app.callback()(generate)
app.command("generate")(generate)


@app.command("explain")
def explain(
    gpu: Gpu = None,
    model: ModelOpt = None,
    gpus: Gpus = None,
    nodes: Nodes = 1,
    gpu_memory: GpuMemory = None,
    engine: EngineOpt = None,
    build: BuildOpt = None,
    variant: VariantOpt = None,
    context: Context = None,
    concurrency: Concurrency = None,
    as_of: AsOf = None,
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Decision trace: every candidate path with a ✓/✗ per gate, the memory budget, and advice when blocked."""
    from .resolver import resolve

    catalog = _catalog(recipes)
    sel = Selectors(
        gpu,
        model,
        gpus,
        nodes,
        gpu_memory,
        engine,
        build,
        variant,
        context,
        concurrency,
        as_of,
        host_memory=host_memory,
        host_bandwidth=host_bandwidth,
    )
    resolution = resolve(catalog, _request(catalog, sel))
    if fmt is Format.json:
        from .contract import resolution_json

        typer.echo(json.dumps(resolution_json(resolution), indent=2, ensure_ascii=False))
    else:
        from .history import explain_lines

        typer.echo(_explanation(catalog, resolution), nl=False)
        typer.echo("\n".join(explain_lines(catalog, resolution)))


@app.command("matrix")
def matrix(
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            metavar="MODEL",
            callback=cli_values.name,
            help="model (repeatable; default: every model)",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    target: Annotated[
        list[str],
        typer.Option(
            "--target",
            metavar="COUNTxGPU",
            callback=cli_values.name,
            help="COUNTxGPU, e.g. 8xa100-80gb (repeatable)",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    fmt: Annotated[
        MatrixFormat, typer.Option("--format", metavar="md|json|html", help="md, json or html")
    ] = MatrixFormat.md,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Verdict grid of models × targets: ✓ official, ◐ fallback/community/fork only, ✗ blocked, ? unknown."""
    from .anymodel import resolve_any
    from .matrix import build_matrix, to_html, to_json, to_markdown
    from .targets import DEFAULT_TARGETS, parse_target

    catalog = _catalog(recipes)
    models = [resolve_any(catalog, m).model for m in model] or sorted(catalog.models.values(), key=lambda m: m.id)
    targets = [parse_target(catalog, t) for t in (target or list(DEFAULT_TARGETS))]
    cells = build_matrix(catalog, models, targets)
    if fmt is MatrixFormat.json:
        typer.echo(json.dumps(to_json(cells, targets), indent=2, ensure_ascii=False))
    elif fmt is MatrixFormat.html:
        typer.echo(to_html(cells, targets), nl=False)
    else:
        typer.echo(to_markdown(cells, targets), nl=False)


@app.command("list")
def list_(
    kind: Annotated[Kind, typer.Argument(metavar="|".join(KIND_NAMES), hidden=True, show_default=False)],
    fmt: Annotated[Format, typer.Option("--format", metavar="text|json", help="text table or json")] = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """List the catalog: models, hardware, engines (one row per build), deployments or fingerprints."""
    from .listing import rows

    catalog = _catalog(recipes)
    table = rows(catalog, kind.value)
    if fmt is Format.json:
        typer.echo(json.dumps(table, indent=2, ensure_ascii=False))
        return
    if not table:
        typer.echo(f"no {kind.value} in the catalog")
        return
    columns = list(table[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in table)) for c in columns}
    typer.echo("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
    for row in table:
        typer.echo("  ".join(str(row[c]).ljust(widths[c]) for c in columns).rstrip())


@app.command("validate")
def validate(
    dirs: Annotated[
        list[str],
        typer.Argument(metavar="DIR", callback=cli_values.path, hidden=True, show_default=False),
    ] = [],  # noqa: B006
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Validate the built-in catalog plus each recipe folder DIR given; every problem on its own line."""
    catalog = _catalog([*recipes, *dirs])
    counts = ", ".join(f"{len(catalog.kind(k))} {k}" for k in ("hardware", "engines", "models", "deployments"))
    builds = sum(1 for _ in catalog.builds())
    typer.echo(f"catalog ok: {counts}, {builds} engine builds")
    for kind, entry_id, origin in catalog.overridden:
        typer.echo(f"  {kind}/{cli_values.printable(entry_id)} overridden by {cli_values.printable(origin.path, 2000)}")


from .commands import diagnose as _diagnose  # noqa: E402, F401  (registers `diagnose`)
from .commands import history as _history  # noqa: E402,F401  (registers `history`)
from .commands import inspect as _inspect  # noqa: E402,F401 - registers `inspect`
from .commands import lint as _lint  # noqa: E402, F401  (registers `lint`)
from .commands import onmachine  # noqa: E402,F401 - registers its commands


def main() -> None:
    """Run the CLI: every outcome is an exit code and, on failure, one line per problem on stderr."""
    # typer may bundle its own copy of click: take the exception classes from the one it uses
    click = sys.modules[typer.BadParameter.__module__]
    args = sys.argv[1:]
    sub = args[0] if args and args[0] in _subcommands() else None
    try:
        if sub is None:
            code = _command(None)(args=args, prog_name="recipegen", standalone_mode=False)
        else:  # the subcommand alone (see _command)
            code = _command(sub)(args=args[1:], prog_name=f"recipegen {sub}", standalone_mode=False)
    except RecipegenError as exc:
        _fail([cli_values.printable(line, 2000) for line in exc.lines()], exc.exit_code)
    except typer.Abort:  # click's name for Ctrl-C (KeyboardInterrupt) and EOF at a prompt
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        where = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx else "recipegen"
        message = " ".join(exc.format_message().split())
        _fail([f"error: {cli_values.printable(message)} — see `{where} --help`"], exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except BrokenPipeError:  # the reader went away (`recipegen list models | head -1`), as click reports it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitCode.PIPE_CLOSED)
    except Exception as exc:
        if os.environ.get("RECIPEGEN_DEBUG"):
            import traceback

            traceback.print_exc()
        detail = cli_values.printable(f"{type(exc).__name__}: {exc}", 300)
        _fail([f"internal error: {detail} — {INTERNAL_HINT}"], ExitCode.INTERNAL)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)


@functools.cache
def _subcommands() -> dict[str, Any]:
    return {
        typer.main.get_command_name(c.name or c.callback.__name__): c for c in app.registered_commands if c.callback
    }


@functools.cache
def _command(subcommand: str | None) -> Any:
    """The click command of `app` (None), or of one subcommand alone, built once per process.

    A command line that starts with a subcommand's name runs that command without the group: the group
    would build all the subcommands (a tenth of a start-up) and coerce each of the root's own options
    through a pydantic TypeAdapter only to find them unset, and nothing but the named command can run.
    Its name is `recipegen SUBCOMMAND` either way, so usage errors and --help read the same."""
    if subcommand is None:
        return typer.main.get_command(app)
    only = copy.copy(app)
    only.registered_callback = None
    only.registered_commands = [_subcommands()[subcommand]]
    return typer.main.get_command(only)


INTERNAL_HINT = "a bug in recipegen; please report it with the output of the same command run with RECIPEGEN_DEBUG=1"


def _fail(lines: list[str], code: int) -> None:
    for line in lines:
        print(line, file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()

"""`recipegen [generate]` and `recipegen explain`: resolve a request, write its folder or explain the decision."""

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import BlockedError, RecipegenError
from . import values as cli_values
from .options import (
    AsOf,
    BuildOpt,
    Concurrency,
    Context,
    Dcp,
    Eager,
    EngineOpt,
    Format,
    FormatOpt,
    Gpu,
    GpuMemory,
    Gpus,
    HostBandwidth,
    HostMemory,
    KvCacheDtype,
    ModelOpt,
    Nodes,
    Pulled,
    Recipes,
    Speculative,
    SpeculativeTokens,
    VariantOpt,
    Version,
    load_catalog,
)
from .request import Selectors, build_request

if TYPE_CHECKING:
    pass

commands = typer.Typer()


def generate_command(
    sel: Selectors, out: str | None, force: bool, fmt: Format, recipes: list[str], k8s: bool = False
) -> None:
    from ..artifacts.contract import resolution_json
    from ..artifacts.output import write
    from ..artifacts.render import folder_name, render
    from ..plan.resolve import resolve
    from ..report.summary import explanation, generate_summary

    catalog = load_catalog(recipes)
    request = build_request(catalog, sel)
    if request.weights_folder is not None:
        from ..checkpoint.folder import mountable_blobs

        request = replace(request, weights_blobs=mountable_blobs(Path(request.weights_folder)))
    resolution = resolve(catalog, request)
    if not resolution.plans:
        if fmt is Format.json:
            from ..plan.advice import advice_for

            advice = advice_for(catalog, resolution)
            typer.echo(json.dumps(resolution_json(resolution, advice), indent=2, ensure_ascii=False))
        else:
            typer.echo(explanation(catalog, resolution))
        if resolution.undecided:
            raise BlockedError(
                "unknown: no path is known to run this request (a fact is missing, none fails); nothing written",
                "see the reasons above",
            )
        raise BlockedError("blocked: no path runs this request; nothing written", "see the reasons above")
    found = request.build_resolution
    if found is not None and found.rule == "rolling" and sel.as_of is None and sel.pulled is None:
        import datetime as dt  # a rolling tag was read today: the artifacts' command says so, so a rerun agrees

        sel = replace(sel, pulled=str(dt.date.today()))
    if sel.gpu is None or sel.gpu.casefold() == "auto":  # rerunning the artifacts' command needs no GPU here
        sel = replace(sel, gpu=request.hardware.id)
    typed = sel.model
    if request.weights_folder is not None:  # the artifacts name the absolute folder, so a rerun finds it anywhere
        sel = replace(sel, model=request.weights_folder)
    top = resolution.plans[0]  # a build in its own file, else in its engine's file
    origin = catalog.origins.get(("builds", top.build.id)) or catalog.origins.get(("engines", top.engine.id))
    build_file = None if origin is None else f"{origin.path} ({origin.root})"
    files = render(resolution, sel.command_line(), build_file, k8s=k8s)
    target = Path(out) if out is not None else Path(folder_name(resolution))
    changed = write(files, target, force)
    if fmt is Format.json:  # plan.json's object, container spec included, and where it was written
        written = {"folder": str(target.resolve()), "files": sorted(files), "changed": changed}
        typer.echo(json.dumps({"written": written, **json.loads(files["plan.json"])}, indent=2, ensure_ascii=False))
        return
    shown = cli_values.printable(str(target) if out is not None else f"./{target}", 2000)
    typer.echo(generate_summary(catalog, resolution, typed, shown, sorted(files), changed))


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
    pulled: Pulled = None,
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    kv_cache_dtype: KvCacheDtype = None,
    speculative: Speculative = None,
    speculative_tokens: SpeculativeTokens = None,
    dcp: Dcp = None,
    eager: Eager = False,
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
    k8s: Annotated[
        bool,
        typer.Option(
            "--k8s", help="also write k8s/: Kubernetes manifests (a LeaderWorkerSet across nodes) for kubectl apply -k"
        ),
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
        pulled=pulled,
        kv_cache_dtype=kv_cache_dtype,
        speculative=speculative,
        speculative_tokens=speculative_tokens,
        dcp=dcp,
        eager=eager,
    )
    generate_command(sel, out, force, fmt, recipes, k8s)


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


# The root command is `generate` too (app.py): `recipegen --gpu … --model …` needs no subcommand.
commands.command("generate")(generate)


@commands.command("explain")
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
    pulled: Pulled = None,
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    kv_cache_dtype: KvCacheDtype = None,
    speculative: Speculative = None,
    speculative_tokens: SpeculativeTokens = None,
    dcp: Dcp = None,
    eager: Eager = False,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006
    verbose: Annotated[
        bool, typer.Option("--verbose", help="every plan, note and rejected path with its gates (default: one screen)")
    ] = False,
) -> None:
    """Decision trace: every candidate path with a ✓/✗ per gate, the memory budget, and advice when blocked."""
    from ..plan.resolve import resolve

    catalog = load_catalog(recipes)
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
        pulled=pulled,
        kv_cache_dtype=kv_cache_dtype,
        speculative=speculative,
        speculative_tokens=speculative_tokens,
        dcp=dcp,
        eager=eager,
    )
    memo: dict[tuple[object, ...], object] = {}  # the gate verdicts resolve reaches, reused by the history line
    resolution = resolve(catalog, build_request(catalog, sel), memo)
    if fmt is Format.json:
        from ..artifacts.contract import resolution_json
        from ..plan.advice import advice_for

        advice = advice_for(catalog, resolution)
        typer.echo(json.dumps(resolution_json(resolution, advice), indent=2, ensure_ascii=False))
    else:
        from ..report.history import explain_lines
        from ..report.summary import explanation

        typer.echo(explanation(catalog, resolution, verbose, explain_lines(catalog, resolution, memo)), nl=False)

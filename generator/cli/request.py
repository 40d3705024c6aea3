"""What the user asked for (Selectors), turned into the resolver's Request: names, the detected GPU, dates."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import RecipegenError
from ..frozen import frozen

if TYPE_CHECKING:
    from ..catalog.index import Catalog
    from ..plan.offload import HostFacts
    from ..plan.types import Request


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
    pulled: str | None = None  # the date the user pulled a rolling tag (--pulled)
    kv_cache_dtype: str | None = None  # the run configuration (--kv-cache-dtype, --speculative, --dcp, --eager)
    speculative: str | None = None
    speculative_tokens: int | None = None
    dcp: int | None = None
    eager: bool = False

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
            ("--pulled", self.pulled),
            ("--host-memory", self.host_memory),
            ("--host-bandwidth", self.host_bandwidth),
            ("--kv-cache-dtype", self.kv_cache_dtype),
            ("--speculative", self.speculative),
            ("--speculative-tokens", self.speculative_tokens),
            ("--dcp", self.dcp),
        ):
            if value is not None:
                parts += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        if self.eager:
            parts.append("--eager")
        return " ".join(shlex.quote(p) for p in parts)


def _known_kv_dtype(catalog: Catalog, name: str) -> None:
    """--kv-cache-dtype names a KV dtype some engine spells, or one of the catalog's own names."""
    from typing import get_args

    from ..catalog.schema.common import KvDtype

    known = set(get_args(KvDtype))
    for engine in catalog.engines.values():
        known.update(engine.kv_dtype_names.values(), engine.kv_dtype_aliases)
    if name not in known:
        raise RecipegenError(
            f"--kv-cache-dtype {name}: no engine in the catalog spells a KV cache dtype so",
            f"use one of {', '.join(sorted(known))}",
        )


def build_request(catalog: Catalog, sel: Selectors) -> Request:
    """The request `generate` and `explain` resolve: names resolved, the GPU detected for --gpu auto."""
    from ..catalog.names import resolve_engine, resolve_gpu, resolve_user_build, resolve_variant
    from ..checkpoint.anymodel import resolve_any
    from ..plan.types import Request

    if sel.kv_cache_dtype is not None:
        _known_kv_dtype(catalog, sel.kv_cache_dtype)

    detected = None
    if sel.model is not None and (sel.gpu is None or sel.gpu.casefold() == "auto"):
        from ..machine.detect import auto_gpu

        detected = auto_gpu(catalog, required=sel.gpu is not None)
    if (sel.gpu is None and detected is None) or sel.model is None:
        missing = " and ".join(n for n, v in (("--gpu", sel.gpu or detected), ("--model", sel.model)) if v is None)
        hint = "e.g. recipegen --gpu sm80 --model glm-5.2"
        if sel.gpu is None and sel.model is not None:  # --gpu auto found no GPU here: say so, and what to type
            hint = (
                "no NVIDIA GPU was detected on this machine, so --gpu cannot default to auto; name the target, "
                "e.g. --gpu h100, --gpu 'RTX 4090' or --gpu sm86 --gpu-memory 24 (`recipegen list gpus`)"
            )
        raise RecipegenError(f"{missing} is required", hint)
    choice = resolve_any(catalog, sel.model)
    if detected is not None:  # the detected part's id, so --gpu-memory still applies
        target = resolve_gpu(catalog, detected[0].id, sel.gpu_memory)
        extra = f" ({target.how})" if sel.gpu_memory is not None else ""
        target = replace(target, how=detected[1] + extra)
    else:
        assert sel.gpu is not None
        target = resolve_gpu(catalog, sel.gpu, sel.gpu_memory)
    if sel.speculative_tokens is not None and sel.speculative is None:
        raise RecipegenError(
            f"--speculative-tokens {sel.speculative_tokens} names no speculative method",
            "add --speculative METHOD (mtp, eagle, eagle3, ngram), or drop --speculative-tokens",
        )
    as_of = parse_date(sel.as_of, "--as-of") if sel.as_of else None
    # a folder is named by its absolute path, so the artifacts of `./x` and of `/abs/x` are the same bytes
    notes = [f"--model {choice.folder or sel.model} → {choice.how}", f"--gpu {sel.gpu or 'auto'} → {target.how}"]
    build = resolve_user_build(catalog, sel.build, as_of, rolling_date(sel)) if sel.build else None
    if build is not None:
        released = catalog.build(build.build_id)[1].released
        if as_of is not None and released > as_of:
            raise RecipegenError(
                f"--build {sel.build} is {build.build_id}, released {released}, after --as-of {as_of}",
                "drop one of the two, or give a build released by that date",
            )
        notes.append(f"--build {sel.build} → {build.how}")
    if as_of is not None:
        from ..catalog.harvested_builds import adopt_as_of

        for engine_id in list(catalog.engines):  # before the hand-written releases: those read from their code
            adopt_as_of(catalog, engine_id, as_of)
        known = sum(1 for _, b in catalog.builds() if b.released <= as_of)
        notes.append(f"--as-of {as_of} → the {known} build(s) released by then")
    return Request(
        host=host_facts(sel),
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
        build_resolution=build,
        kv_cache_dtype=sel.kv_cache_dtype,
        speculative=sel.speculative,
        speculative_tokens=sel.speculative_tokens,
        dcp=sel.dcp or 1,
        eager=sel.eager,
    )


def rolling_date(sel: Selectors) -> dt.date:
    """The date a rolling tag (:latest, :nightly) is read at: --as-of, else --pulled, else today."""
    if sel.as_of:
        return parse_date(sel.as_of, "--as-of")
    if sel.pulled:
        return parse_date(sel.pulled, "--pulled")
    return dt.date.today()


def parse_date(value: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise RecipegenError(f"{option} {value!r} is not a date", "write it as YYYY-MM-DD, e.g. 2026-08-27") from None


def host_facts(sel: Selectors) -> HostFacts:
    """The host facts of the request (bounds were checked where the options were parsed: cli_values)."""
    from ..plan.offload import HostFacts

    host = HostFacts()
    return HostFacts(
        memory_gib=sel.host_memory if sel.host_memory is not None else host.memory_gib,
        bandwidth_gbs=sel.host_bandwidth if sel.host_bandwidth is not None else host.bandwidth_gbs,
        memory_default=sel.host_memory is None,
        bandwidth_default=sel.host_bandwidth is None,
    )

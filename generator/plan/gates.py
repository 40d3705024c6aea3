"""The six gates, one registry: each is a small predicate over catalog facts that returns a reason
(and structured details), never a bare bool. Looked up by id, run in the triage order of GATES, with results
memoised across the paths of one resolve. The predicates live in build_gates.py (layout-free) and
layout_gates.py (memory, topology)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from ..catalog.schema import Deployment, Engine, Hardware, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build
from ..frozen import evolve, frozen
from .build_gates import architecture, kernel_facts, kernels, platform, weight_format
from .flags import parser_gaps
from .layout_gates import memory, topology
from .types import GATES, GateId, GateResult, Layout, Request, Settings


@frozen
class Subject:
    """One candidate path with the settings to check: what every gate's check reads."""

    request: Request
    engine: Engine
    build: Build
    variant: Variant
    layout: Layout
    deployment: Deployment | None
    settings: Settings


Check = Callable[[Subject, Mapping[GateId, GateResult]], GateResult]
_T = TypeVar("_T")


@frozen
class Gate:
    id: GateId
    short: str
    check: Check  # sees the results of the gates before it (memory plans with the KV dtype the kernel gate chose)


def kv_dtype(subject: Subject, kernel: GateResult) -> KvDtype:
    """The KV dtype the plan runs with: the chosen kernels' first, else the fixed spelling's, else the engine's."""
    if kernel.details.kv_options:
        return kernel.details.kv_options[0]
    fixed = subject.settings.kv_fixed
    return fixed[0] if fixed else subject.engine.default_kv_dtype


def heads_per_rank(subject: Subject) -> int | None:
    """The attention heads each GPU holds under the path's tensor parallelism (a release's kernel pick may turn on
    it), or None where they do not divide evenly."""
    heads, tp = subject.request.model.attention.num_heads, subject.settings.tp
    return heads // tp if tp > 0 and heads % tp == 0 else None


def _topology(s: Subject, done: Mapping[GateId, GateResult]) -> GateResult:
    tensor = s.engine.parallelism == "tensor"
    result = topology(s.request.model, s.engine, s.layout, s.request.hardware, s.settings.tp if tensor else None)
    if s.layout.nodes > 1 and s.deployment is None and s.engine.multi_node != "none" and not s.engine.flags.nnodes:
        return GateResult(
            "topology", "fail", f"{s.engine.name}'s flag vocabulary has no multi-node flags in the catalog"
        )
    return result


def _architecture(s: Subject) -> GateResult:
    """The build loads the architecture; a parser the model wants that a derived plan's build lacks is left out
    of the plan (an unknown parser name stops the server at start), so the path runs and says what it loses."""
    result = architecture(s.request.model, s.variant, s.engine, s.build)
    if result.outcome != "pass" or s.deployment is not None:
        return result
    missing, _ = parser_gaps(s.request.model, s.engine, s.build, s.request.hardware.compute_capability)
    if not missing:
        return result
    details = evolve(result.details, unparsed=tuple(missing))
    return GateResult("architecture", "pass", f"{result.reason}; " + "; ".join(missing), result.sources, details)


REGISTRY: dict[GateId, Gate] = {
    gate.id: gate
    for gate in (
        Gate("architecture", "arch", lambda s, _: _architecture(s)),
        Gate(
            "weight-format",
            "format",
            lambda s, _: weight_format(s.request.model, s.variant, s.build, s.request.hardware),
        ),
        Gate(
            "kernel",
            "kernel",
            lambda s, _: kernels(
                s.request.model,
                s.build,
                s.request.hardware,
                s.settings.kv_fixed,
                s.settings.attention_backend,
                s.deployment,
                s.engine.id,
                heads_per_rank(s),
            ),
        ),
        Gate("platform", "platform", lambda s, _: platform(s.build, s.request.hardware)),
        Gate(
            "memory",
            "memory",
            lambda s, done: memory(
                s.request,
                s.engine,
                s.variant,
                s.layout,
                s.settings,
                kv_dtype(s, done["kernel"]),
                s.deployment,
                may_offload=_loads(done) and s.request.offload,
                build=s.build,
            ),
        ),
        Gate("topology", "topology", _topology),
    )
}
assert tuple(REGISTRY) == GATES


# Gates whose result reads only the build, the checkpoint, the GPU and the fixed settings — never the
# layout — so one resolve() computes them once per path and reuses them for every layout it tries. They
# come first in GATES: the layout search runs only these on a path before planning its memory.
LAYOUT_FREE: frozenset[GateId] = frozenset({"architecture", "weight-format", "kernel", "platform"})
assert all(g in LAYOUT_FREE for g in GATES[: len(LAYOUT_FREE)])


def _loads(done: Mapping[GateId, GateResult]) -> bool:
    """The build loads the checkpoint at all: host offload is planned only for such paths."""
    return all(done[g].outcome == "pass" for g in ("architecture", "weight-format"))


def _memo_key(gate_id: GateId, s: Subject, done: Mapping[GateId, GateResult]) -> tuple[object, ...] | None:
    """What the gate's result reads besides the request (the model and the GPU are fixed within a resolve)."""
    dep = s.deployment.id if s.deployment else None
    if gate_id == "architecture" or gate_id == "weight-format":
        return _loading_key(gate_id, s.engine, s.build, s.variant, s.deployment)
    if gate_id == "kernel":
        # not the checkpoint: the needs are the model's; a recipe of the path may vouch for kernel facts
        # … and the heads each GPU holds, which some releases' kernel pick turns on
        kv, pinned = s.settings.kv_fixed, s.settings.attention_backend
        return (gate_id, s.engine.id, s.build.id, dep, kv, pinned, heads_per_rank(s))
    if gate_id == "platform":
        return _platform_key(s.engine, s.build)
    if gate_id == "memory":
        # the budget reads the engine's memory behaviour, the checkpoint, the layout and the KV dtype — not the
        # build — so builds of one engine share it (a footprint per checkpoint × layout, not per build)
        # … and whether host offload may be planned (only for a build that loads the checkpoint at all)
        return (
            gate_id,
            s.engine.id,
            s.variant.id,
            s.layout,
            dep,
            s.settings,
            kv_dtype(s, done["kernel"]),
            _loads(done) and s.request.offload,
        )
    if gate_id == "topology":  # the model and the GPU are the request's; only a recipe-less path needs multi-node flags
        return (gate_id, s.engine.id, s.layout, s.settings.tp, s.deployment is None)
    return None


def _loading_key(
    gate_id: GateId, engine: Engine, build: Build, variant: Variant, dep: Deployment | None
) -> tuple[object, ...]:
    if gate_id == "architecture":
        # a derived plan's parsers are checked too; a curated recipe vouches for its own
        return (gate_id, engine.id, build.id, variant.id, dep is None)
    return (gate_id, engine.id, build.id, variant.id)


def loading_memoised(
    memo: dict[tuple[object, ...], object], engine: Engine, build: Build, variant: Variant, dep: Deployment | None
) -> tuple[GateResult, GateResult] | None:
    """The architecture and weight-format results of a path that `run` left in the memo (None: not both)."""
    arch = memo.get(_loading_key("architecture", engine, build, variant, dep))
    fmt = memo.get(_loading_key("weight-format", engine, build, variant, dep))
    if isinstance(arch, GateResult) and isinstance(fmt, GateResult):
        return arch, fmt
    return None


def _platform_key(engine: Engine, build: Build) -> tuple[object, ...]:
    return ("platform", engine.id, build.id)


class SharedVerdicts:
    """Gate verdicts shared by the resolves of one matrix: the platform gate per build and GPU, and the kernel gate's
    passing verdicts per build and what the gate reads of the model and the GPU (kernel_facts: 85 models ask ~20
    shapes of each build).

    Platform verdicts are keyed by the objects' identity, not their ids: a `--gpu-memory` copy of a GPU is another
    object under the same id. Each entry holds the objects its key names by identity, so their ids cannot be reused
    while it lives. Kernel verdicts that are not a pass name the model's needs and the GPU, so each cell computes
    its own (the per-request memo keeps them)."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], tuple[Build, Hardware, GateResult]] = {}
        self._kernels: dict[tuple[object, ...], tuple[Build, Deployment | None, GateResult]] = {}
        self._facts: dict[Hashable, tuple[tuple[object, ...], Any]] = {}

    def fact(self, key: Hashable, held: tuple[object, ...], make: Callable[[], _T]) -> _T:
        """A fact every cell of the matrix reads alike (the builds a request tries, a GPU's builds that pass its
        platform gate), made once. `key` names the objects it reads by identity; `held` are those objects, kept
        alive with the entry so that their ids cannot be reused while it lives."""
        known = self._facts.get(key)
        if known is None:
            known = self._facts[key] = (held, make())
        return known[1]

    def of(self, build: Build, hw: Hardware) -> GateResult:
        key = (id(build), id(hw))
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = (build, hw, platform(build, hw))
        return known[2]

    def kernel(self, s: Subject, done: Mapping[GateId, GateResult]) -> GateResult:
        model, hw = s.request.model, s.request.hardware
        heads = heads_per_rank(s)
        facts = kernel_facts(model, s.build, hw, heads)
        key = (id(s.build), id(s.deployment), s.engine.id, s.settings.kv_fixed, s.settings.attention_backend, facts)
        known = self._kernels.get(key)
        if known is not None and known[2].outcome == "pass":
            return known[2]
        result = REGISTRY["kernel"].check(s, done)
        if known is None:
            self._kernels[key] = (s.build, s.deployment, result)
        return result


# where a resolve's memo holds the SharedVerdicts of the matrix it is a cell of (absent: a resolve of its own)
SHARED: tuple[object, ...] = ("shared-verdicts",)


def platform_memoised(
    engine: Engine,
    build: Build,
    hw: Hardware,
    memo: dict[tuple[object, ...], object],
    shared: SharedVerdicts | None = None,
) -> GateResult:
    """The platform gate of a build on this GPU, shared with `run` through the memo (it reads nothing else)."""
    key = _platform_key(engine, build)
    known = memo.get(key)
    if isinstance(known, GateResult):
        return known
    memo[key] = result = shared.of(build, hw) if shared is not None else platform(build, hw)
    return result


# The layout-free gates by how many paths one result settles: a platform or kernel verdict holds for every
# checkpoint of a build, an architecture verdict for one checkpoint format, a weight-format one for one
# checkpoint. A layout search that only asks whether a path can run at all checks them in this order.
FEWEST_FIRST: tuple[GateId, ...] = ("platform", "kernel", "architecture", "weight-format")
assert frozenset(FEWEST_FIRST) == LAYOUT_FREE


def run(
    subject: Subject,
    memo: dict[tuple[object, ...], object] | None = None,
    only: tuple[GateId, ...] | None = None,
    until_not_pass: bool = False,
) -> tuple[GateResult, ...]:
    """Every gate on one path, in triage order (GATES). `memo`: results shared across the paths of one resolve
    (and, under SHARED, the verdicts shared with other resolves). `only`: just these gates, in this order (none may
    read a gate left out: memory reads kernel, architecture and weight-format); `until_not_pass`: stop after the
    first gate that does not pass."""
    done: dict[GateId, GateResult] = {}
    shared = memo.get(SHARED) if memo is not None else None
    for gate_id in GATES if only is None else only:
        key = _memo_key(gate_id, subject, done) if memo is not None else None
        if memo is not None and key is not None and key in memo:
            cached = memo[key]
            assert isinstance(cached, GateResult)
            done[gate_id] = cached
        else:
            if gate_id == "kernel" and isinstance(shared, SharedVerdicts):
                done[gate_id] = shared.kernel(subject, done)
            elif gate_id == "platform" and isinstance(shared, SharedVerdicts):
                done[gate_id] = shared.of(subject.build, subject.request.hardware)
            else:
                done[gate_id] = REGISTRY[gate_id].check(subject, done)
            if memo is not None and key is not None:
                memo[key] = done[gate_id]
        if until_not_pass and done[gate_id].outcome != "pass":
            break
    return tuple(done.values())

"""Values the resolver takes and returns. All immutable; the JSON contract is built from these."""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from typing import Literal, Protocol

from ..catalog.buildversions import BuildResolution
from ..catalog.schema import Deployment, Engine, Hardware, Model, Source, Variant
from ..catalog.schema.common import KvDtype, PlanStatus
from ..catalog.schema.engine import Build, Defect
from ..frozen import frozen
from .memory import Budget
from .offload import HostFacts, OffloadPlan
from .speed import Estimate

GateId = Literal["architecture", "weight-format", "kernel", "platform", "memory", "topology"]
GATES: tuple[GateId, ...] = ("architecture", "weight-format", "kernel", "platform", "memory", "topology")
Outcome = Literal["pass", "fail", "unknown"]


@frozen
class Request:
    model: Model
    hardware: Hardware
    gpus_per_node: int | None = None  # None: try the usual node sizes
    nodes: int = 1
    shrink: bool = False  # a fleet to fit into: try its full size first, then halves (matrix, advice)
    engine: str | None = None
    build: str | None = None
    variant: str | None = None
    context: int | None = None
    concurrency: int | None = None
    target_note: str = ""  # how --gpu/--model were understood, shown to the user
    as_of: dt.date | None = None  # only builds released by then (what a user saw that day)
    model_facts: str = "catalog"  # catalog · name (inferred from the repo name) · files (derived from its files)
    host: HostFacts = field(default_factory=HostFacts)  # host RAM and bandwidth (offload, speed)
    weights_folder: str | None = None  # a local checkpoint folder (absolute) the artifacts mount; not a gate input
    weights_blobs: str | None = None  # a cache snapshot's blobs/ folder its links point into, mounted beside it
    build_resolution: BuildResolution | None = None  # how --build was understood (text, build, rule, how sure)
    offload: bool = True  # host offload may be planned (lint: only when the command itself sets it up)
    # the run configuration asked for (explain/plan/history --kv-cache-dtype, --speculative, --dcp, --eager):
    # what a configuration-scoped defect is matched against
    kv_cache_dtype: str | None = None  # as the user spelled it (engine spelling or a catalog KV dtype)
    speculative: str | None = None
    speculative_tokens: int | None = None  # draft tokens per step (--speculative-tokens)
    dcp: int = 1
    eager: bool = False


@frozen
class KernelMiss:
    """A kernel need nothing in the build meets on this GPU, with each tried kernel's reasons."""

    op: str
    why: str
    tried: tuple[tuple[str, tuple[str, ...]], ...]  # (kernel name, why it does not fit)


@frozen
class Details:
    """The facts behind a gate's prose reason, for programs (lint, render, report) that must not parse text."""

    capability: str | None = None  # the GPU's sm the verdict is for
    operation: str | None = None  # the weight format (weight-format) or the need that failed (kernel)
    kernels: tuple[tuple[str, str], ...] = ()  # (op, kernel name) chosen
    misses: tuple[KernelMiss, ...] = ()
    kv_options: tuple[KvDtype, ...] = ()  # accepted by every chosen attention kernel, preferred first
    via_fallback: bool = False
    weight_only_fallback: bool = False  # the fallback dequantises weights in the GEMM (Fallback.weight_only)
    args: tuple[str, ...] = ()  # engine arguments that select a weight-format fallback
    numbers: tuple[tuple[str, float], ...] = ()  # named quantities: tp, heads, kv_heads, context …
    budget: Budget | None = None
    offload: OffloadPlan | None = None  # memory: the weights kept in host RAM
    host_memory_gib: float | None = None  # memory: the --host-memory that would let offload run
    unparsed: tuple[str, ...] = ()  # architecture: what a plan loses without the parsers its build lacks

    def number(self, name: str) -> float | None:
        return next((value for key, value in self.numbers if key == name), None)


@frozen
class GateResult:
    gate: GateId
    outcome: Outcome
    reason: str
    sources: tuple[Source, ...] = ()
    details: Details = field(default_factory=Details)


@frozen
class Flag:
    flag: str
    value: str | None
    reason: str
    sources: tuple[Source, ...] = ()
    expand: bool = False  # value references ${VARS} the shell/compose must expand


@frozen
class Settings:
    """Engine-neutral knobs of a plan; rendered into flags through the engine's vocabulary."""

    tp: int
    ep: bool = False
    kv_dtype: KvDtype | None = None
    kv_fixed: tuple[KvDtype, ...] = ()  # a recipe's KV spelling: the dtypes it may stand for
    # a command's V-cache spelling where the engine types K and V apart (llama-server --cache-type-v): its dtypes
    kv_fixed_v: tuple[KvDtype, ...] = ()
    context: int | None = None
    context_auto: bool = False
    concurrency: int | None = None
    fraction: float | None = None
    tool_parser: str | None = None
    reasoning_parser: str | None = None
    mtp: bool = False  # speculative decoding with the model's own MTP layers
    speculative: str | None = None  # the speculative method, lower case (mtp, eagle, eagle3, ngram …); None: none
    dcp: int = 1  # decode context parallel size
    pp: int = 1  # pipeline-parallel size (a command's; recipegen's own plans keep one stage)
    dp: int = 1  # data-parallel size (a command's)
    cuda_graphs: bool = True  # False: the engine runs eagerly
    attention_backend: str | None = None  # a forced attention kernel, by the engine's own name (lint)
    speculative_tokens: int | None = None  # draft tokens per speculative step; None: not stated
    # weights or experts kept in host RAM: what a command's or recipe's flags say; None: what the plan's memory gate
    # decides (the decided settings of a candidate always say True or False)
    host_offload: bool | None = None


@frozen
class Layout:
    gpus_per_node: int
    nodes: int

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nodes


@frozen
class Candidate:
    engine: Engine
    build: Build
    variant: Variant
    layout: Layout
    deployment: Deployment | None
    gates: tuple[GateResult, ...]
    settings: Settings
    budget: Budget | None
    via_fallback: bool
    notes: tuple[str, ...] = ()
    weight_only_fallback: bool = False  # the fallback dequantises weights in the GEMM (Fallback.weight_only)
    fallback_args: tuple[str, ...] = ()
    defects: tuple[str, ...] = ()  # known faults of the checkpoint on this engine build and GPU
    build_defects: tuple[Defect, ...] = ()  # the build's own known defects this request runs into
    offload: OffloadPlan | None = None  # weights kept in host RAM (the memory gate passed only so)
    speed: Estimate | None = None
    low_bit: bool = False  # a checkpoint below LOW_BITS bits per weight (candidates.py): a lossy last resort
    bpw: float | None = None  # the checkpoint's stored bits per parameter, where its size is known or estimated
    weight_bits: int = 16  # the checkpoint's precision class, 4, 8 or 16 bits per weight (candidates.py)
    # a data-center GPU (Hardware.role: HBM or GDDR, an H100 or an L40S) asked about without --concurrency: it sits
    # in a server that usually serves many users at once, so the speed that ranks is the plan's total decode
    # throughput, not one request's (ranking.py)
    serves_many: bool = False

    @property
    def runnable(self) -> bool:
        return all(g.outcome == "pass" for g in self.gates)

    def gate(self, gate_id: GateId) -> GateResult:
        return next(g for g in self.gates if g.gate == gate_id)

    @property
    def unparsed(self) -> tuple[str, ...]:
        """What the plan loses because its build lacks a parser the model wants (tool calls, the thinking)."""
        return self.gate("architecture").details.unparsed

    @property
    def status(self) -> PlanStatus:
        return self.deployment.status if self.deployment else "derived"

    def failing(self) -> list[GateResult]:
        """The gates that do not pass, the one to tell first leading (told_first)."""
        return told_first(self.gates)


def told_first(gates: tuple[GateResult, ...]) -> list[GateResult]:
    """A path's gates that do not pass, in the order a reason is told: triage order (GATES), except that a build
    which does not start on the GPU at all (the platform gate fails: not compiled for it, no image for the host)
    says so right after the architecture, before what it would do with the checkpoint's format or kernels."""
    failing = [g for g in gates if g.outcome != "pass"]
    platform = [g for g in failing if g.gate == "platform" and g.outcome == "fail"]
    if not platform:
        return failing
    rest = [g for g in failing if g is not platform[0]]
    at = 1 if rest and rest[0].gate == "architecture" else 0
    return [*rest[:at], platform[0], *rest[at:]]


@frozen
class Loading:
    """A path's layout-free verdicts (architecture, weight format, kernel, platform) where they are its
    Candidate's own and one of them does not pass: what the changes between builds read of a path that cannot
    run, without planning its memory (candidates.loading)."""

    engine: Engine
    build: Build
    variant: Variant
    gates: tuple[GateResult, ...]

    def gate(self, gate_id: GateId) -> GateResult:
        return next(g for g in self.gates if g.gate == gate_id)


def undecided(c: Candidate) -> bool:
    """A path that fails no gate but that some gate cannot decide (a missing fact such as the checkpoint's
    size, an unverified fact): with no plan, the honest answer is unknown."""
    failing = c.failing()
    return bool(failing) and all(g.outcome == "unknown" for g in failing)


@frozen
class Plan:
    rank: int
    candidate: Candidate
    flags: tuple[Flag, ...]
    argv: tuple[str, ...]
    env: tuple[tuple[str, str, str], ...]  # (name, value, reason)
    settings: Settings  # the decided settings the flags were rendered from (parsers included)
    why_first: str
    notes: tuple[str, ...]
    sources: tuple[Source, ...]
    image: str | None = None  # None: built from source (Dockerfile)
    host_arch: str = "x86_64"

    @property
    def engine(self) -> Engine:
        return self.candidate.engine

    @property
    def build(self) -> Build:
        return self.candidate.build

    @property
    def variant(self) -> Variant:
        return self.candidate.variant


@frozen
class Rejection:
    engine: str
    build: str
    variant: str
    gate: GateId
    outcome: Outcome
    reason: str
    sources: tuple[Source, ...]
    defects: tuple[str, ...] = ()  # the build's known defects this path runs into (a gate names only the first)


@frozen
class Change:
    """A verdict that moved between builds of one engine: what changed and since when."""

    engine: str
    variant: str
    gate: GateId
    before_build: str
    before_date: str
    before_reason: str
    after_build: str
    after_date: str
    after_reason: str


class PathReport(Protocol):
    """Every path at a resolution's layout, gated when first asked for (rejections.py)."""

    def every(self) -> tuple[Candidate, ...]:
        """Every path, gated, in rank order (rank_key)."""
        ...

    def closest(self, limit: int, official_only: bool) -> tuple[list[Candidate], int]:
        """The first `limit` of ranking.closest_rejected(every(), official_only), and how many paths are rejected."""
        ...


@frozen
class Resolution:
    request: Request
    layout: Layout
    layout_note: str
    plans: tuple[Plan, ...]
    paths: PathReport
    changes: tuple[Change, ...] = ()
    tried: tuple[int, ...] = field(default_factory=tuple)

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        """Every path at the layout, gated, in rank order: what the JSON, --verbose and REJECTED.md list."""
        return self.paths.every()

    @property
    def verdict(self) -> Literal["runnable", "blocked"]:
        return "runnable" if self.plans else "blocked"

    @property
    def undecided(self) -> tuple[Candidate, ...]:
        """Paths that fail no gate but that some gate cannot decide (a missing fact such as the
        checkpoint's size, an unverified fact): with no plan, the honest answer is unknown."""
        return tuple(filter(undecided, self.candidates))

    @property
    def verdict_detail(self) -> Literal["runnable", "blocked", "unknown"]:
        """`verdict`, with "unknown" told apart from "blocked": no plan, but a path that nothing rules out."""
        if self.plans:
            return "runnable"
        return "unknown" if self.undecided else "blocked"

    def rejected(self) -> list[Rejection]:
        out: list[Rejection] = []
        for cand in self.candidates:
            for gate in cand.failing():
                out.append(
                    Rejection(
                        cand.engine.id,
                        cand.build.id,
                        cand.variant.id,
                        gate.gate,
                        gate.outcome,
                        gate.reason,
                        gate.sources,
                        tuple(d.id for d in cand.build_defects),
                    )
                )
        return out

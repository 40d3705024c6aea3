"""The layout search: which GPU counts to try, and the first that runs (without host offload, else with it),
gating at each layout only the paths that pass the cheap gates. Its answer is a Ranking, before plans are made."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Literal

from ..catalog.index import Catalog
from ..catalog.schema import Deployment
from ..catalog.schema.engine import Build
from ..frozen import evolve, frozen
from . import gates
from .candidates import (
    LOW_BITS,
    Memo,
    Path,
    builds_to_try,
    evaluate,
    may_run,
    model_recipes,
    paths_for,
    request_settings,
    serves_many,
    stored_bits,
    weight_bits,
)
from .checkpoint_size import checkpoint_bytes, variant_bytes
from .defects import applies, defects_hitting, with_defects
from .layout_gates import host_overflow, weights_overflow
from .memory import GIB
from .ranking import Preview, RankKey, caveats, may_be_clean, rank_floor, rank_key
from .rejections import LazyPaths
from .types import GATES, Candidate, GateResult, Layout, Request, undecided

NODE_SIZES = (1, 2, 4, 8)


def layouts_to_try(request: Request) -> list[Layout]:
    if request.shrink and request.gpus_per_node is not None:
        gpus, nodes = request.gpus_per_node, request.nodes
        out = [Layout(gpus, nodes)]
        while gpus > 1 or nodes > 1:
            gpus, nodes = (gpus // 2, nodes) if gpus > 1 else (gpus, nodes // 2)
            out.append(Layout(gpus, nodes))
        return out
    if request.gpus_per_node is not None:
        return [Layout(request.gpus_per_node, request.nodes)]
    if max(request.hardware.gpus_per_node) == 1:
        # one GPU per box (DGX Spark): scale out over nodes
        if request.nodes > 1:
            return [Layout(1, request.nodes)]
        return [Layout(1, n) for n in NODE_SIZES]
    return [Layout(n, request.nodes) for n in NODE_SIZES]


@dataclass
class _Layouts:
    """The paths gated at each layout tried, shared by the layout search and the full report of one layout."""

    catalog: Catalog
    request: Request
    memo: Memo = field(default_factory=dict)
    shared: gates.SharedVerdicts | None = None
    paths: dict[Layout, list[Path]] = field(default_factory=dict)
    gated: dict[Layout, dict[int, Candidate]] = field(default_factory=dict)
    builds: dict[str, list[Build]] | None = None
    recipes: list[Deployment] = field(default_factory=list)  # the model's recipes on this GPU, at any size
    recipe_free: list[Path] | None = None  # the paths at a size no recipe is for (the same at every such size)
    smallest: float | None = None  # bytes of the model's smallest checkpoint (0: one of unknown size)
    # the paths planned without host offload (deciding searches: the pass that looks for a GPU-resident plan)
    gpu_only: dict[Layout, dict[int, Candidate]] = field(default_factory=dict)
    # per path list (the recipe-free one is shared by its sizes): its paths whose build passes the platform gate
    on_platform: dict[int, list[tuple[int, Path]]] = field(default_factory=dict)

    def _paths(self, layout: Layout) -> list[Path]:
        if layout not in self.paths:
            if self.builds is None:  # the same at every layout
                self.builds, self.recipes = self._builds(), self._recipes()
            if not any(d.gpus_per_node == layout.gpus_per_node for d in self.recipes):
                # no recipe at this size: the paths are every engine × build × checkpoint, the same list at each
                if self.recipe_free is None:
                    self.recipe_free = paths_for(self.catalog, self.request, layout, builds=self.builds, recipes=[])
                self.paths[layout] = self.recipe_free
            else:
                self.paths[layout] = paths_for(
                    self.catalog, self.request, layout, builds=self.builds, recipes=self.recipes
                )
        return self.paths[layout]

    def _builds(self) -> dict[str, list[Build]]:
        """Each engine's builds to try: what the request names of builds (--build, --as-of) decides them, so the
        cells of a matrix share them."""
        catalog, request = self.catalog, self.request
        if self.shared is None:
            return {e.id: builds_to_try(e, request) for e in catalog.engines.values()}
        key = ("builds", id(catalog), request.build, request.as_of)
        return self.shared.fact(
            key, (catalog,), lambda: {e.id: builds_to_try(e, request) for e in catalog.engines.values()}
        )

    def _recipes(self) -> list[Deployment]:
        """The model's recipes on this GPU (model_recipes), from the recipes by model that a matrix's cells share."""
        catalog, request = self.catalog, self.request
        if self.shared is None:
            return model_recipes(catalog, request)
        by_model = self.shared.fact(("recipes", id(catalog)), (catalog,), lambda: _recipes_by_model(catalog))
        return [d for d in by_model.get(request.model.id, ()) if request.hardware.id in d.hardware]

    def _on_platform(self, layout: Layout) -> list[tuple[int, Path]]:
        """The paths at this layout (with their indexes) whose build passes the platform gate on this GPU: no other
        path can run, and most paths a search rules out it rules out by their build's image or CUDA alone, so
        each build is asked once, not each of its checkpoints at every size (once per GPU in a matrix)."""
        paths = self._paths(layout)
        known = self.on_platform.get(id(paths))
        if known is None:
            passing = self._passing()
            known = self.on_platform[id(paths)] = [(i, p) for i, p in enumerate(paths) if id(p[1]) in passing]
        return known

    def _passing(self) -> set[int]:
        """The ids of the builds to try that pass the platform gate on the request's GPU."""
        assert self.builds is not None
        builds = [b for e in self.catalog.engines.values() for b in self.builds[e.id]]
        engine_of = {id(b): e for e in self.catalog.engines.values() for b in self.builds[e.id]}
        if self.shared is None:
            hw, memo = self.request.hardware, self.memo
            return {id(b) for b in builds if gates.platform_memoised(engine_of[id(b)], b, hw, memo).outcome == "pass"}
        shared, hw, request = self.shared, self.request.hardware, self.request
        key = ("on-platform", id(self.catalog), id(hw), request.build, request.as_of)
        return shared.fact(
            key, (self.catalog, hw), lambda: {id(b) for b in builds if shared.of(b, hw).outcome == "pass"}
        )

    def _platform(self, path: Path) -> str:
        """The outcome of the path's platform gate (its build's on the request's GPU, memoised)."""
        return gates.platform_memoised(path[0], path[1], self.request.hardware, self.memo, self.shared).outcome

    def runnable(self, layout: Layout, may_offload: bool = True, deciding: bool = False) -> list[Candidate]:
        """The runnable paths at this layout, ranked; only paths that pass the cheap gates are planned.

        `may_offload`: False plans GPU memory alone (a plan that needs host offload fails its memory gate).
        `deciding`: plan only the paths that decide the first plan and the first plan without a caveat (what a
        matrix cell names), best first by each path's rank floor; the others are left out of the answer."""
        store = self.gated if may_offload else self.gpu_only
        done = store.setdefault(layout, {})
        request = self.request if may_offload else evolve(self.request, offload=False)
        if not deciding:
            for index, path in self._on_platform(layout):
                if index not in done and may_run(self.request, path, layout, self.memo, self.shared):
                    done[index] = evaluate(request, *path[:3], layout, path[3], memo=self.memo)
        else:
            open_paths = [(i, p) for i, p in self._on_platform(layout) if i not in done]
            if not may_offload:  # from GPU memory alone, a path whose weights do not fit cannot run
                open_paths = self._fitting(open_paths, layout)
            else:  # nor, with host offload, one whose weights the GPUs and the host RAM cannot hold together
                open_paths = [(i, p) for i, p in open_paths if not host_overflow(self.request, p[2], layout)]
            self._best_first(request, layout, done, open_paths)
        return sorted((c for _, c in sorted(done.items()) if c.runnable), key=rank_key)

    def _best_first(
        self,
        request: Request,
        layout: Layout,
        done: dict[int, Candidate],
        open_paths: list[tuple[int, Path]],
    ) -> None:
        """Plan paths in the order of their rank floors until no path left can rank before the best plan, nor
        before the best plan without a caveat (or none left can be without one).

        A path's cheap gates run only when it comes up: its floor before them (native kernels, every parser: the
        places those gates decide at their best) is a floor under its floor, so a path that can no longer decide
        the cell by then is never gated at all (most older builds, community images and forks of a cell)."""
        best: tuple[RankKey, int] | None = None
        clean: tuple[RankKey, int] | None = None
        for index, c in done.items():  # planned before, by an earlier question at this layout
            if c.runnable:
                key = (rank_key(c), index)
                best = key if best is None or key < best else best
                if not caveats(c):
                    clean = key if clean is None or key < clean else clean
        # (floor, index, whether the path passed its cheap gates, its preview, the path), smallest first
        queue: list[tuple[RankKey, int, bool, Preview, Path]] = []
        for index, path in open_paths:
            preview = self._preview(path, layout, gated=False)
            queue.append((rank_floor(preview), index, False, preview, path))
        heapq.heapify(queue)
        while queue:
            floor, index, gated, preview, path = heapq.heappop(queue)
            if best is not None and best[0] < floor:  # nothing left ranks before the best plan
                if clean is not None and clean[0] < floor:
                    break
                if not may_be_clean(preview):  # nor, with the caveats known here, before the best clean one
                    continue
            if not gated:
                if may_run(self.request, path, layout, self.memo, self.shared):
                    preview = self._preview(path, layout)
                    heapq.heappush(queue, (rank_floor(preview), index, True, preview, path))
                continue
            c = done[index] = evaluate(request, *path[:3], layout, path[3], memo=self.memo)
            if c.runnable:
                key = (rank_key(c), index)
                best = key if best is None or key < best else best
                if not caveats(c):
                    clean = key if clean is None or key < clean else clean

    def _fitting(self, paths: list[tuple[int, Path]], layout: Layout) -> list[tuple[int, Path]]:
        """The paths whose weights alone leave room on the layout's GPUs (weights_overflow: a path whose do not
        fails its memory gate unless host offload is planned), asked once per engine, checkpoint and recipe."""
        fits: dict[tuple[int, int, int], bool] = {}
        out: list[tuple[int, Path]] = []
        for index, path in paths:
            engine, _, variant, dep = path
            key = (id(engine), id(variant), id(dep))
            verdict = fits.get(key)
            if verdict is None:
                # a derived plan sets no memory fraction of its own (base_settings); a recipe may
                fraction = request_settings(engine, layout, dep, self.request, self.memo).fraction if dep else None
                verdict = fits[key] = not weights_overflow(self.request, engine, variant, layout, fraction)
            if verdict:
                out.append((index, path))
        return out

    def _preview(self, path: Path, layout: Layout, gated: bool = True) -> Preview:
        """What the path's rank floor and caveats read before its memory is planned. `gated`: with its loading
        verdicts (a fallback kernel, a missing parser); False: before any gate, with both at their best."""
        engine, build, variant, dep = path
        key = ("preview", gated, engine.id, build.id, variant.id, dep.id if dep else None)
        known = self.memo.get(key)
        if isinstance(known, Preview):
            return known
        if gated:
            # a path the cheap gates passed has its loading verdicts memoised already
            loading = gates.loading_memoised(self.memo, engine, build, variant, dep)
            if loading is None:
                by_id = {g.gate: g for g in self._layout_free(path, layout)}
                loading = by_id["architecture"], by_id["weight-format"]
            ungated = self._preview(path, layout, gated=False)
            preview = evolve(
                ungated,
                via_fallback=loading[1].details.via_fallback,
                weight_only_fallback=loading[1].details.weight_only_fallback,
                unparsed=loading[0].details.unparsed,
            )
        else:
            model, hw = self.request.model, self.request.hardware
            sized = variant_bytes(model, variant)
            bits = stored_bits(variant, model, sized)
            preview = Preview(
                engine=engine,
                build=build,
                variant=variant,
                deployment=dep,
                via_fallback=False,
                weight_only_fallback=False,
                unparsed=(),
                checkpoint_defects=any(applies(d, engine, build, hw) for d in variant.defects),
                low_bit=bits is not None and bits < LOW_BITS,
                weight_bits=weight_bits(variant, model, bits),
                estimated=sized is not None and sized[1] is not None,
                serves_many=serves_many(self.request),
            )
        self.memo[key] = preview
        return preview

    def too_small(self, layout: Layout) -> bool:
        """Whether no path here can run from GPU memory alone: every checkpoint is at least as large as all the
        layout's GPUs together (a GPU-resident plan holds at least size ÷ GPUs of weights on each) and no recipe
        is among the paths (a recipe passes memory without a size). A layout search skips such a size unless
        nothing runs from GPU memory at any size, so the 1-GPU tries of a 671B model plan nothing."""
        room = self.request.hardware.memory_gib * GIB * layout.gpus
        paths = self._paths(layout)
        if paths is not self.recipe_free and any(path[3] is not None for path in paths):
            return False
        if self.smallest is None:
            sizes = [checkpoint_bytes(self.request.model, v.size_bytes, v.quant) for v in self.request.model.variants]
            self.smallest = min((s[0] if s else 0.0 for s in sizes), default=0.0)
        return self.smallest >= room

    def _gate(self, layout: Layout, index: int, path: Path) -> Candidate:
        done = self.gated.setdefault(layout, {})
        if index not in done:
            done[index] = evaluate(self.request, *path[:3], layout, path[3], memo=self.memo)
        return done[index]

    def paths_at(self, layout: Layout) -> list[Path]:
        """Every path at this layout, in report order."""
        return self._paths(layout)

    def gate_at(self, layout: Layout, index: int) -> Candidate:
        """The path of this index at this layout, gated (once)."""
        return self._gate(layout, index, self._paths(layout)[index])

    def every(self, layout: Layout) -> list[Candidate]:
        """Every path at this layout, in report order (the ones the search planned are reused)."""
        return [self._gate(layout, index, path) for index, path in enumerate(self._paths(layout))]

    def undecided(self, layout: Layout) -> list[Candidate]:
        """The paths here that fail no gate but that some gate cannot decide, in report order (only paths
        that fail no cheap gate are planned)."""
        return [
            c
            for index, path in enumerate(self._paths(layout))
            if self._platform(path) != "fail"
            and all(g.outcome != "fail" for g in self._layout_free(path, layout))
            and not host_overflow(self.request, path[2], layout)  # its memory gate fails
            and undecided(c := self._gate(layout, index, path))
        ]

    def closest(self, layout: Layout) -> list[Candidate]:
        """The paths at this layout that fail the fewest gates, gated in full, in report order.

        A path fails at least the layout-free gates that do not pass (or that a blocking defect fails), so a
        path failing more of those than a path already gated fails in all is never planned: most blocked paths
        fail their platform or architecture and are settled by memoised verdicts alone."""
        unknown = self.undecided(layout)
        if unknown:  # a path nothing rules out decides before one that fails a gate (explain says "unknown" too)
            return unknown
        done = self.gated.setdefault(layout, {})
        paths = self._paths(layout)
        bounds = sorted((self._layout_free_failures(path, layout), index) for index, path in enumerate(paths))
        fewest = min((len(c.failing()) for c in done.values()), default=len(GATES))
        for bound, index in bounds:
            if bound > fewest:
                break
            if index not in done:
                done[index] = evaluate(self.request, *paths[index][:3], layout, paths[index][3], memo=self.memo)
            fewest = min(fewest, len(done[index].failing()))
        return [c for _, c in sorted(done.items()) if len(c.failing()) == fewest]

    def _layout_free_failures(self, path: Path, layout: Layout) -> int:
        return sum(1 for g in self._layout_free(path, layout) if g.outcome != "pass")

    def _layout_free(self, path: Path, layout: Layout) -> tuple[GateResult, ...]:
        """The gates that do not read the layout, with the blocking defects that show at them (memoised)."""
        engine, build, variant, dep = path
        key = ("layout-free", engine.id, build.id, variant.id, dep.id if dep else None)
        known = self.memo.get(key)
        if isinstance(known, tuple):
            return known
        request = self.request
        base = request_settings(engine, layout, dep, request, self.memo)
        subject = gates.Subject(request, engine, build, variant, layout, dep, base)
        found = defects_hitting(request.model, variant, build, request.hardware)
        blocking_here = tuple(d for d in found if d.gate in gates.LAYOUT_FREE)
        results = with_defects(gates.run(subject, self.memo, gates.FEWEST_FIRST), blocking_here)
        self.memo[key] = results
        return results


def _recipes_by_model(catalog: Catalog) -> dict[str, list[Deployment]]:
    out: dict[str, list[Deployment]] = {}
    for d in catalog.deployments.values():
        out.setdefault(d.model, []).append(d)
    return out


Rejections = Literal["all", "closest-when-blocked", "none"]


@frozen
class Ranking:
    """The layout search's answer before plans are made: the layout reported, its runnable paths ranked,
    and (when asked for) the paths gated there."""

    request: Request
    layout: Layout
    runnable: tuple[Candidate, ...]
    # the paths at the layout failing the fewest gates ("closest-when-blocked"); None: not gated
    candidates: tuple[Candidate, ...] | None
    tried: tuple[int, ...]
    searched: bool
    offload_first_at: tuple[int, ...] | None = None
    low_bit_at: int | None = None  # a smaller size tried that runs only a checkpoint below LOW_BITS bits per weight
    paths: LazyPaths | None = None  # every path at the layout, gated when asked for ("all")


def rank(
    catalog: Catalog,
    request: Request,
    rejections: Rejections = "all",
    shared: gates.SharedVerdicts | None = None,
    deciding: bool = False,
    memo: Memo | None = None,
) -> Ranking:
    """The layout search: the first layout tried that runs without host offload, else the first that runs
    with it, else the whole fleet (shrink) or the largest size tried. `rejections`: whether every path of
    that layout is reported too ("all": each gated when the report first asks for it, LazyPaths), only when
    nothing runs and only the paths that fail the fewest gates ("closest-when-blocked": the matrix names the
    closest rejection), or never ("none"). `shared`: gate
    verdicts shared with other resolves (the matrix's cells). `deciding`: the ranking holds only the runnable
    paths that decide its first plan and its first plan without a caveat (a matrix cell), and host offload is
    planned only once no size runs from GPU memory (an offloaded plan ranks after every other, so it decides
    nothing before). `memo`: gate verdicts and gated paths to share with later questions about the same request."""
    layouts = layouts_to_try(request)
    memo = {} if memo is None else memo
    if shared is not None:
        memo[gates.SHARED] = shared  # the gates read the verdicts of other cells from there
    gated = _Layouts(catalog, request, memo, shared)
    tried: list[int] = []
    searched = len(layouts) > 1
    lossy: tuple[Layout, list[Candidate], tuple[int, ...]] | None = None

    def ranking(layout: Layout, runnable: list[Candidate], offload_first_at: tuple[int, ...] | None) -> Ranking:
        candidates: tuple[Candidate, ...] | None = None
        if rejections == "closest-when-blocked" and not runnable:
            candidates = tuple(gated.closest(layout))
        low_at = lossy[0].gpus if lossy is not None and lossy[0] != layout else None
        paths = LazyPaths(gated, layout) if rejections == "all" else None
        return Ranking(
            request, layout, tuple(runnable), candidates, tuple(tried), searched, offload_first_at, low_at, paths
        )

    for layout in layouts:
        tried.append(layout.gpus)
        if gated.too_small(layout):  # only host offload could run here: planned below if no size runs without it
            continue
        runnable = gated.runnable(layout, may_offload=not deciding, deciding=deciding)
        if runnable and runnable[0].offload is None:
            if not (searched and runnable[0].low_bit):
                return ranking(layout, runnable, None)
            if lossy is None:
                lossy = (layout, runnable, tuple(tried))
    if lossy is not None:
        # no usual size runs at 4 bits or more from GPU memory: the smallest that runs with the low-bit checkpoint
        layout, runnable, tried_then = lossy
        tried[:] = tried_then
        return ranking(layout, runnable, None)
    for count, layout in enumerate(layouts, 1):
        runnable = gated.runnable(layout, deciding=deciding)
        if runnable:  # no layout runs from GPU memory alone: the smallest one that runs with host offload
            return ranking(layout, runnable, tuple(tried[:count]))
    if request.shrink:  # nothing runs: with a fleet, report the whole fleet (the most memory per shard)
        return ranking(layouts[0], [], None)
    # nothing is known to run: the smallest layout where a path fails no gate (there the answer is
    # "unknown", not "blocked"), else the largest size tried
    shown = next((layout for layout in layouts if gated.undecided(layout)), layouts[-1])
    return ranking(shown, [], None)

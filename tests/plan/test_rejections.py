"""A resolution's rejected paths, gated on demand (plan/rejections.py): the default view's closest rejections and
count, and the changes between builds, read from the layout-free verdicts where those are exact. Each shortcut may
only skip work, never change an answer, so each is checked against the full gating of the same paths."""

from __future__ import annotations

import pytest

MODELS = ("deepseek-r1", "gemma-3-12b", "glm-5.2", "gpt-oss-120b", "llama-3.1-70b", "qwen3-32b", "mimo-v2-flash")
GPUS = ("a100-80gb", "rtx-4090", "h100-sxm", "gb10", "t4", "v100-32gb")


def _requests(catalog):  # type: ignore[no-untyped-def]
    from recipegen.catalog.targets import gpu_column
    from recipegen.frozen import evolve
    from recipegen.report.matrix import request_of

    for model in MODELS:
        for gpu in GPUS:
            # explain's request: every size tried, offload allowed
            yield evolve(request_of(catalog.models[model], gpu_column(catalog, gpu)), offload=True)


def _ids(cands):  # type: ignore[no-untyped-def]
    return [(c.engine.id, c.build.id, c.variant.id, c.deployment.id if c.deployment else None) for c in cands]


@pytest.mark.parametrize("limit", [3, 5])
def test_closest_rejections_match_the_fully_gated_ones(catalog, limit):  # type: ignore[no-untyped-def]
    """The closest rejections the default view and generate's summary print, and the count they give, are those of
    every path gated in full, for a runnable request (official builds only) and a blocked one."""
    from recipegen.plan.ranking import closest_rejected
    from recipegen.plan.resolve import resolve

    asked = 0
    for request in _requests(catalog):
        lazy = resolve(catalog, request)
        for official_only in (True, False):
            closest, count = lazy.paths.closest(limit, official_only)
            every = resolve(catalog, request).candidates  # a fresh resolve, every path gated
            expected = closest_rejected(every, official_only)[:limit]
            assert _ids(closest) == _ids(expected), (request.model.id, request.hardware.id, official_only)
            assert count == sum(1 for c in every if not c.runnable)
            asked += 1
    assert asked == 2 * len(MODELS) * len(GPUS)


def test_loading_verdicts_are_the_candidates_own(catalog):  # type: ignore[no-untyped-def]
    """A path read by its layout-free verdicts alone (candidates.loading) has exactly its Candidate's verdicts at
    those gates and cannot run — every release of every engine, so builds with configuration-scoped defects (the
    GLM-5.2 and DeepSeek builds' KV and speculative-decoding ones) are among them; and the changes between builds
    read from them are the ones read from every path gated in full."""
    from recipegen.plan.candidates import evaluate, loading, paths_for
    from recipegen.plan.resolve import find_changes, resolve
    from recipegen.plan.types import Loading

    light = 0
    for request in _requests(catalog):
        r = resolve(catalog, request)
        memo: dict[tuple[object, ...], object] = {}
        full_memo: dict[tuple[object, ...], object] = {}
        rows, full = [], []
        for path in paths_for(catalog, request, r.layout, every_release=True):
            row = loading(request, path, r.layout, memo)
            cand = evaluate(request, *path[:3], r.layout, path[3], memo=full_memo)
            if isinstance(row, Loading):
                assert row.gates == cand.gates[: len(row.gates)], (request.model.id, path[1].id, path[2].id)
                assert not cand.runnable
                light += 1
            rows.append(row)
            full.append(cand)
        assert find_changes(rows) == find_changes(full)
    assert light > 1000  # most paths of older releases are read so (a test that reads none proves nothing)

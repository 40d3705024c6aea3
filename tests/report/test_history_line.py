"""The build history line `explain` ends with (report/history.py line_verdicts): a blocked build's label is read
from its paths' layout-free verdicts where those settle it, so it must be the label engine_history gives from every
path gated in full."""

from __future__ import annotations

MODELS = ("deepseek-r1", "gemma-3-12b", "glm-5.2", "gpt-oss-120b", "llama-3.1-70b", "qwen3-32b", "mimo-v2-flash")
GPUS = ("a100-80gb", "rtx-4090", "h100-sxm", "gb10", "t4", "v100-32gb")


def test_line_labels_match_the_fully_gated_history(catalog):  # type: ignore[no-untyped-def]
    from recipegen.catalog.targets import gpu_column
    from recipegen.frozen import evolve
    from recipegen.plan.candidates import builds_to_try, verdict_paths
    from recipegen.plan.resolve import resolve
    from recipegen.report.history import LINE, engine_history, line_verdicts
    from recipegen.report.matrix import request_of

    settled = builds = 0
    for model in MODELS:
        for gpu in GPUS:
            request = evolve(request_of(catalog.models[model], gpu_column(catalog, gpu)), offload=True)
            layout = resolve(catalog, request).layout
            for engine in catalog.engines.values():
                scoped = evolve(request, build=None, engine=engine.id)
                line = [b for b in builds_to_try(engine, scoped, every_release=True) if b.provenance in LINE]
                light = line_verdicts(catalog, scoped, layout, line, {})
                paths = verdict_paths(catalog, scoped, layout, True, {}, {engine.id: line})
                full = engine_history(engine, [(layout, paths)], request).line
                assert [(v.build.id, v.label) for v in light] == [(v.build.id, v.label) for v in full], (model, gpu)
                settled += sum(1 for v in light if not v.runnable and not v.passing)
                builds += len(light)
    assert settled > builds // 4  # most blocked releases are settled without a memory plan (else this proves little)

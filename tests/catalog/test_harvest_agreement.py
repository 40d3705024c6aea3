"""The catalog stands on the harvested facts (data/harvest/): every official vLLM/SGLang release in it has
its release's own registry, and no hand-written fact contradicts one without a source saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipegen.catalog import harvest

DATA = Path(__file__).resolve().parents[2] / "generator" / "data"


def _official(catalog, engine_id):
    return [b for b in catalog.engines[engine_id].builds if b.provenance == "official"]


def _explained(build, name):
    """A disagreement is kept only with a source of the build naming it and the harvest."""
    return any(name in (s.note or "") and "harvest" in (s.note or "") for s in build.sources)


@pytest.mark.parametrize("engine_id", ["vllm", "sglang"])
def test_every_official_release_has_a_harvested_registry(catalog, engine_id):
    missing = [b.id for b in _official(catalog, engine_id) if harvest.of(b) is None]
    assert not missing, (
        f"run: python scripts/harvest {' '.join(f'{engine_id}=={b[len(engine_id) + 1 :]}' for b in missing)}"
    )
    for build in _official(catalog, engine_id):
        facts = harvest.of(build)
        assert facts.sha256 and len(facts.sha256) == 64 and facts.methods["architectures"] == "read"
        assert not facts.failed, (build.id, facts.failed)


@pytest.mark.parametrize("engine_id", ["vllm", "sglang", "llama.cpp"])
def test_no_hand_written_fact_contradicts_the_harvest(catalog, engine_id):
    problems = []
    for build in _official(catalog, engine_id):
        facts = harvest.of(build)
        if facts is None:  # llama.cpp tags without a vendoring sdist are not harvested
            continue
        # (a kernel or defect limited to an architecture the release lacks is inherited and never reached)
        named = {*build.architectures}
        problems += [
            f"{build.id}: architecture {a} is not in its registry ({facts.read_from['architectures']})"
            for a in sorted(named)
            if a not in facts.architectures and not _explained(build, a)
        ]
        for kind, field in (("tool", "tool_parsers"), ("reasoning", "reasoning_parsers")):
            stated = getattr(build, field)
            if stated is None or kind in build.parsers_inherited:
                continue
            have = set(facts.parsers(kind) or ())
            problems += [
                f"{build.id}: {kind} parser {p} is not registered by the release"
                for p in stated
                if p not in have and not _explained(build, p)
            ]
            problems += [
                f"{build.id}: the release registers {kind} parser {p}, its file omits it" for p in have - {*stated}
            ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("engine_id", "release"), [("vllm", "0.33.0"), ("sglang", "0.5.23")])
def test_harvest_read_agrees_with_the_vocabulary_dumped_by_running_the_release(engine_id, release):
    """engine-cli/*.json was dumped by running the installed release (argparse objects); the harvest reads source."""
    dumped = json.loads((DATA / "engine-cli" / f"{engine_id}-{release}.json").read_text())
    facts = harvest.load(engine_id, release)
    options = harvest.flags(engine_id, release)
    assert facts is not None and options is not None
    registries = dumped["registries"]
    assert sorted(facts.parsers("tool") or ()) == sorted(
        {*registries["tool_call_parsers"]} | {"auto"} & {*facts.parsers("tool")}
    )
    assert sorted(facts.parsers("reasoning") or ()) == sorted(
        {*registries["reasoning_parsers"]} | {"auto"} & {*facts.parsers("reasoning")}
    )
    read, ran = set(options), set(dumped["options"])
    # reading source misses an option only where the release renames a field's CLI spelling at run time
    assert len(read & ran) >= 0.99 * len(ran), sorted(ran - read)

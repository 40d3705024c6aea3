"""When no build in the catalog registers a checkpoint's architecture class: the nearest class some build does
register (the same family — the class name's first word, e.g. Glm in Glm4MoeForCausalLM and
GlmMoeDsaForCausalLM — or the same model_type as the engine's model module), and the newest build of each
engine that loads it; else each engine's newest build, which does not load it either.

A related class is named as a pointer, never planned as if it were the checkpoint's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..catalog import harvest
from ..catalog.schema import Build, Engine

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z]*|[a-z]+|\d+")
# the head's kind, shared by most classes: not what makes two classes relatives
_GENERIC = {"for", "causal", "lm", "conditional", "generation", "model", "sequence", "classification"}


def words(name: str) -> list[str]:
    """Glm4MoeForCausalLM → glm, 4, moe, for, causal, lm."""
    return [w.casefold() for w in _WORD.findall(name)]


def _family(name: str) -> str | None:
    """The class's first word where it names a family (three letters or more; MiMo's 'mi' does not)."""
    first = next((w for w in words(name) if not w.isdigit()), None)
    return first if first is not None and len(first) >= 3 else None


def _type_family(model_type: str) -> str:
    """deepseek_v5 → deepseek; glm4_moe → glm."""
    return re.split(r"[_\-\d]", model_type.casefold(), maxsplit=1)[0]


def _version_gap(a: str, b: str) -> int:
    """How far apart the first numbers of two class names are (DeepseekV5 is nearer V4 than V2)."""
    x, y = (next((int(w) for w in words(n) if w.isdigit()), None) for n in (a, b))
    return abs(x - y) if x is not None and y is not None else 1 << 20


def _newest(builds: list[tuple[Engine, Build]]) -> list[tuple[Engine, Build]]:
    """The newest build of each engine (an official release before an image or fork), engines by name."""
    best: dict[str, tuple[Engine, Build]] = {}

    def key(build: Build) -> tuple[bool, object]:
        return build.provenance == "official", build.released

    for engine, build in builds:
        if engine.id not in best or key(build) > key(best[engine.id][1]):
            best[engine.id] = (engine, build)
    return [best[e] for e in sorted(best)]


def _modules(builds: list[tuple[Engine, Build]]) -> dict[str, str]:
    """Architecture class → the engine's model module (vLLM's deepseek_v2, …), from each engine's newest
    harvested release (read only on this error path)."""
    found: dict[str, str] = {}
    for _, build in _newest([(e, b) for e, b in builds if harvest.engine_of(b) is not None]):
        engine = harvest.engine_of(build)
        table = harvest.detail(engine, build.version).get("architectures") if engine else None
        for cls, facts in (table or {}).items():
            module = facts.get("module") if isinstance(facts, dict) else None
            if isinstance(module, str):
                found.setdefault(cls, module)
    return found


def nearest_line(builds: Iterable[tuple[Engine, Build]], arch: str, model_type: str | None = None) -> str:
    """The sentence that follows "no engine in the catalog registers ARCH", over these builds."""
    every = list(builds)
    loads: dict[str, list[tuple[Engine, Build]]] = {}
    for engine, build in every:
        for cls in harvest.architectures(build):
            loads.setdefault(cls, []).append((engine, build))
    family, mine = _family(arch), set(words(arch)) - _GENERIC
    modules = _modules(every) if model_type else {}
    scored: list[tuple[int, int, int, str, str]] = []
    for cls in loads:
        module = modules.get(cls)
        same_type = bool(model_type) and module == model_type
        same_family = family is not None and _family(cls) == family
        same_type_family = (
            bool(model_type) and module is not None and _type_family(module) == _type_family(model_type or "")
        )
        if not (same_type or same_family or same_type_family):
            continue
        why = (
            f"model_type {model_type} is its module"
            if same_type
            else f"the same family, {family}"
            if same_family
            else f"module {module}, the same family as model_type {model_type}"
        )
        shared = len(mine & (set(words(cls)) - _GENERIC))
        scored.append((0 if same_type else 1, -shared, _version_gap(arch, cls), cls, why))
    if scored:
        *_, cls, why = min(scored)
        newest = ", ".join(f"{b.id} ({b.released})" for _, b in _newest(loads[cls]))
        return (
            f"the nearest class a build registers is {cls} ({why}), loaded by {newest} — a different class, so "
            f"recipegen does not plan {arch} as it"
        )
    listed = ", ".join(f"{b.id} ({b.released})" for _, b in _newest(every))
    return f"no related class either; the newest build of each engine — {listed} — does not register it"

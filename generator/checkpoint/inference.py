"""Names without the network: a known family plus quant/packaging words, or a known family under
another organisation (mirrors, ModelScope names), resolves to that family and a weight format.

Pure. Every answer says it was inferred from the name; `recipegen inspect REPO` reads the files.
"""

from __future__ import annotations

import re

from ..catalog.index import Catalog
from ..catalog.names import ModelChoice
from ..catalog.schema import Model, Variant
from ..catalog.schema.engine import QuantMethod
from ..catalog.schema.records import revalidated
from ..errors import RecipegenError
from ..frozen import evolve

# trailing name words -> the weight format they announce (None: a modifier that says nothing alone)
QUANT_WORDS: dict[str, QuantMethod | None] = {
    "fp8": "fp8",
    "nvfp4": "nvfp4",
    "fp4": "nvfp4",
    "mxfp4": "mxfp4",
    "awq": "awq",
    "gptq": "gptq",
    "gguf": "gguf",
    "w4a16": "int4",
    "bf16": "bf16",
    "bnb": "bnb4",  # Unsloth's *-bnb-4bit; a trailing 8bit makes it bnb8 (_quant_of)
    "fp16": "fp16",
    "int4": None,
    "int8": None,
    "dynamic": None,
    "static": None,
    "block": None,
    "quantized": None,
    "unsloth": None,  # Unsloth's "dynamic" *-unsloth-bnb-4bit: some layers left 16-bit, the files say which
}
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
# words that name a format no engine build in the catalog declares: said plainly, never mapped
UNSUPPORTED_WORDS = {
    "mlx": "an MLX checkpoint (Apple silicon, mlx-lm); no engine in the catalog loads MLX weights on NVIDIA GPUs",
    "w8a16": "INT8 weight-only (W8A16); no engine build in the catalog declares an INT8 weight format",
    "w8a8": "INT8 weights and activations (W8A8); no engine build in the catalog declares an INT8 weight format",
    "exl2": "ExLlamaV2 (EXL2); no engine in the catalog loads EXL2",
    "exl3": "ExLlamaV3 (EXL3); no engine in the catalog loads EXL3",
}


def _fold(text: str) -> str:
    return text.strip().casefold()


def _basename(repo: str) -> str:
    return repo.rsplit("/", 1)[-1]


def split_words(name: str) -> tuple[str, list[str], list[str]]:
    """(base name, quant words, unsupported words) of a repo basename, stripping words from the end."""
    parts = re.split(r"([-_])", name)
    words: list[str] = []
    bad: list[str] = []
    while len(parts) >= 3:
        last = _fold(parts[-1])
        # RedHatAI style: Llama-3.1-8B-Instruct-quantized.w4a16
        pieces = last.split(".") if all(p in QUANT_WORDS or p in UNSUPPORTED_WORDS for p in last.split(".")) else [last]
        if any(p in UNSUPPORTED_WORDS for p in pieces):
            bad.extend(p for p in pieces if p in UNSUPPORTED_WORDS)
        elif all(p in QUANT_WORDS or re.fullmatch(r"\d+bit", p) for p in pieces):
            words.extend(reversed(pieces))
        else:
            break
        parts = parts[:-2]
    return "".join(parts), words, bad


def _families(catalog: Catalog, base: str) -> list[Model]:
    key = _fold(base)
    found = []
    for model in catalog.models.values():
        names = {_fold(model.id), _fold(model.name), *(_fold(_basename(a)) for a in model.aliases)}
        names |= {_fold(_basename(v.repo)) for v in model.variants}
        if key in names:
            found.append(model)
    return found


def _quant_of(words: list[str]) -> QuantMethod | None:
    quants = [q for w in words if (q := QUANT_WORDS.get(w)) is not None]
    if not quants:
        return None
    # the outermost format word; "FP8" alone does not say block scales, so it reads as plain FP8 until
    # the files (online) say otherwise
    if quants[-1] == "bnb4" and "8bit" in words:  # bnb-8bit: LLM.int8
        return "bnb8"
    return quants[-1]


def infer(catalog: Catalog, value: str) -> ModelChoice | None:
    """A catalog family and variant for a repo id the catalog does not list, from its name alone."""
    repo, _, revision = value.partition("@")
    org, _, name = repo.rpartition("/")
    if not name or (revision and not _REVISION.match(revision)):
        return None
    base, words, bad = split_words(name)
    # re-uploads often prefix the original organisation: bartowski/Qwen_Qwen3-32B-GGUF
    unprefixed = base.split("_", 1)[1] if "_" in base else base
    families = _families(catalog, name) or _families(catalog, base) or _families(catalog, unprefixed)
    if len(families) != 1:
        return None
    family = families[0]
    if bad:
        raise RecipegenError(
            f"{value} looks like {family.name} as {UNSUPPORTED_WORDS[bad[0]]}",
            f"use one of its variants instead: {', '.join(v.repo for v in family.variants)}",
        )
    same_name = [v for v in family.variants if _fold(_basename(v.repo)) == _fold(name)]
    inferred = "inferred from the name (no files read; `recipegen inspect` checks them)"
    if same_name:
        original = same_name[0]
        if not org or _fold(org) == _fold(original.repo.split("/")[0]):
            if not revision:
                return ModelChoice(family, original.id, f"model {family.name}, variant {original.id}", facts="catalog")
            pinned = _variant(original, id=_unique(family, f"{original.id}-at"), revision=revision)
            if pinned is None:
                return None
            how = f"model {family.name}, variant {original.id} at revision {revision}"
            return ModelChoice(_with(family, pinned), pinned.id, how, facts="catalog")
        copy = _variant(
            original,
            id=_unique(family, f"{original.id}-{_fold(org)}"),
            repo=repo,
            revision=revision or None,
            notes=[*original.notes, f"{value}: same name as {original.repo}, taken as its mirror ({inferred})"],
        )
        if copy is None:
            return None
        how = f"model {family.name}, {value} taken as a mirror of {original.repo} ({inferred})"
        return ModelChoice(_with(family, copy), copy.id, how, facts="name")
    quant = _quant_of(words)
    if quant is None:
        if words:
            return None
        return ModelChoice(family, None, f"model {family.name} ({inferred})", facts="name")
    try:
        variant = Variant(
            id=_unique(family, f"{quant.replace('_', '-')}-{_fold(org) or 'named'}"),
            repo=repo,
            revision=revision or None,
            quant=quant,
            publisher="community",
            notes=[f"{value}: {family.name} as {quant} {inferred}; its size is not known"],
        )
    except ValueError:  # a name outside the repo grammar: not inferred, the Hub edge says why
        return None
    how = f"model {family.name}, weight format {quant} ({inferred})"
    return ModelChoice(_with(family, variant), variant.id, how, facts="name")


def _variant(original: Variant, **update: object) -> Variant | None:
    """A copy with changed fields, validated again (frozen.evolve alone would not check them)."""
    try:
        return revalidated(original, **update)
    except ValueError:
        return None


def _unique(family: Model, wanted: str) -> str:
    taken = {v.id for v in family.variants}
    candidate, n = wanted, 2
    while candidate in taken:
        candidate, n = f"{wanted}-{n}", n + 1
    return candidate


def _with(family: Model, variant: Variant) -> Model:
    return evolve(family, variants=[*family.variants, variant])

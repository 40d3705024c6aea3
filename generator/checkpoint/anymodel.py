"""--model for any model: a catalog entry wins; then a name inferred offline; then the repo's (or
local folder's) own files through the Hub edge, giving a model with status `derived`."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.index import Catalog
from ..catalog.names import ModelChoice, resolve_model
from ..catalog.schema import Model, Source, Variant
from ..errors import RecipegenError, UnknownNameError
from ..frozen import evolve

if TYPE_CHECKING:
    from .derive import Derivation
    from .files import Checkpoint, RepoFile


def unknown_architecture(catalog: Catalog, arch: str | None, model_type: str | None = None) -> str:
    if arch is None:
        return "its config.json names no architecture class"
    from ..catalog.harvest import registers
    from .nearest import nearest_line

    builds = [b.id for _, b in catalog.builds() if registers(b, arch)]
    if not builds:
        return f"no engine in the catalog registers {arch}; {nearest_line(catalog.builds(), arch, model_type)}"
    return (
        f"{arch} is loaded by {', '.join(builds)}, but recipegen has no rule to read its attention layout from "
        "config.json (data/architectures.yaml)"
    )


def no_rule_reason(catalog: Catalog, derivation: Derivation) -> str:
    """Why a class without a rule of its own gets no layout: the builds that load it, and why the generic
    rule does not apply (the field it names) where it was tried."""
    reason = unknown_architecture(catalog, derivation.architecture, derivation.model_type)
    if derivation.problem and derivation.checkpoint.config is not None and derivation.architecture:
        reason += f"; the generic rule does not apply: {derivation.problem}"
    return reason


def resolve_any(catalog: Catalog, value: str) -> ModelChoice:
    try:
        return resolve_model(catalog, value)
    except UnknownNameError as unknown:
        # the checkpoint readers load only for a name the catalog lacks: a catalog model's run never needs them
        from .folder import is_local
        from .hub import looks_like_repo
        from .inference import infer

        if is_local(value) or (value.endswith(".gguf") and Path(value).expanduser().is_file()):
            return from_files(catalog, value)  # a folder's (or a .gguf file's) own files, never a Hub repo
        if value.startswith(("/", "./", "../", "~")):  # written as a path: no catalog name or repo id
            what = "is a file, neither a folder nor a .gguf" if _exists(value) else "does not exist"
            raise RecipegenError(
                f"--model {value}: {what}",
                "give the checkpoint folder (the one holding config.json or the .gguf files), or a model name",
            ) from None
        inferred = infer(catalog, value)
        if inferred is not None:
            return confirm(catalog, value, inferred)
        if not (is_local(value) or looks_like_repo(value)):
            key = value.strip().casefold()
            family = sorted(
                (m for m in catalog.models.values() if m.id.startswith(key)), key=lambda m: (m.params_total_b, m.id)
            )
            if len(family) > 1:
                listed = ", ".join(f"{m.id} ({_params(m)})" for m in family)
                raise RecipegenError(
                    f"{value!r} names a family with several models in the catalog: {listed}",
                    "pick one with --model ID (an id as listed; sizes are total parameters)",
                ) from None
            raise unknown from None
        return from_files(catalog, value)


def _exists(value: str) -> bool:
    try:
        return Path(value).expanduser().exists()
    except (OSError, RuntimeError):  # a name too long for the filesystem, a link loop
        return False


def _params(model: Model) -> str:
    total = f"{model.params_total_b:g}B"
    return f"{total}, {model.params_active_b:g}B active" if model.params_active_b else total


def from_files(catalog: Catalog, value: str) -> ModelChoice:
    """Read the checkpoint's files and derive the model; an unknown class or format is said plainly.
    A local folder's choice carries its absolute path: the artifacts mount it instead of downloading."""
    from . import hub

    checkpoint = hub.read(value, headers=False)
    choice = _from_checkpoint(catalog, value, checkpoint)
    if checkpoint.folder is None:
        return choice
    return replace(choice, folder=str(checkpoint.folder))


def _from_checkpoint(catalog: Catalog, value: str, checkpoint: Checkpoint) -> ModelChoice:
    from .derive import derive

    derivation = derive(checkpoint)
    if derivation.weight_format.quant == "gguf" and any(q.header for q in checkpoint.gguf):
        return gguf_choice(catalog, value, derivation)
    if checkpoint.config is None and checkpoint.gguf_files:
        choice = _gguf_of_base(catalog, checkpoint, derivation)
        if choice is not None:
            return choice
    if derivation.model is None:
        if derivation.rule is None:
            reason = no_rule_reason(catalog, derivation)
            if checkpoint.config is None:
                reason = "it has no config.json (a GGUF-only repo)" + (
                    f"; its card names base_model {', '.join(checkpoint.base_model)}" if checkpoint.base_model else ""
                )
        else:
            reason = derivation.problem or "its files do not say enough"
        raise RecipegenError(
            f"cannot plan {value}: {reason}",
            "`recipegen inspect` shows what its files say; a models/*.yaml in --recipes can state the rest",
        )
    variant = derivation.model.variants[0]
    read = ", ".join(r.what for r in checkpoint.read) or "its files"
    how = (
        f"{derivation.architecture} derived from {read} of {checkpoint.name} "
        f"(status derived; weights {variant.quant}, size from {derivation.size.how})"
    )
    if derivation.rule is not None and derivation.rule.generic:
        from .generic import kind_label

        how += f"; layout derived by the generic {kind_label(derivation.rule)} rule (no class rule for it)"
    return ModelChoice(derivation.model, variant.id, how, facts="files")


def _shape(model: Model) -> tuple[object, ...]:
    att, moe = model.attention, model.moe
    return (
        model.architecture,
        model.layers,
        model.hidden_size,
        att.kind,
        att.num_heads,
        att.num_kv_heads,
        att.head_dim if att.kind == "gqa" else None,
        att.kv_lora_rank,
        att.qk_rope_head_dim,
        (moe.experts, moe.top_k) if moe else None,
    )


def family_of(catalog: Catalog, derivation: Derivation) -> tuple[Model | None, str, str]:
    """The catalog family a checkpoint belongs to, how sure (certain/high/medium/low/none), and why."""
    from .inference import infer

    ck, derived = derivation.checkpoint, derivation.model
    repo = (ck.repo_id or "").casefold()
    for model in catalog.models.values():
        for variant in model.variants:
            if repo and variant.repo.casefold() == repo:
                return model, "certain", f"the catalog lists {variant.repo} as {model.id} variant {variant.id}"
    same = [m for m in catalog.models.values() if derived is not None and _shape(m) == _shape(derived)]
    for base in ck.base_model:
        try:
            choice = resolve_model(catalog, base)
        except UnknownNameError:
            continue
        sure = "high" if choice.model in same else "medium"
        return choice.model, sure, f"its card names base_model {base} ({choice.how})"
    try:
        # a card that names its base model outranks the repo's name: a fine-tune of a base the catalog lacks is
        # not the catalog model its name resembles (cogito-…-qwen-14B is no DeepSeek-R1-Distill-Qwen-14B)
        named = infer(catalog, ck.repo_id) if ck.repo_id and not ck.base_model else None
    except RecipegenError:  # a format word no engine loads: the name maps to no plannable family
        named = None
    if named is not None:
        if derived is not None and _shape(named.model) != _shape(derived):
            return None, "none", f"the name suggests {named.model.id}, but the files show other dimensions"
        sure = "high" if derived is not None else "medium"
        return (
            named.model,
            sure,
            f"the name suggests {named.model.id}"
            + ("; the files confirm its dimensions" if derived is not None else ""),
        )
    if len(same) == 1:
        return same[0], "medium", f"same architecture and dimensions as {same[0].id} (a fine-tune or copy?)"
    if same:  # several families share these dimensions: naming one would be a guess (and carry its parsers)
        return None, "low", f"same architecture and dimensions as {', '.join(m.id for m in same)}; none assumed"
    arch = derivation.architecture
    archs = [m.id for m in catalog.models.values() if arch and m.architecture == arch]
    if archs:
        return None, "none", f"no catalog model has its dimensions; same class: {', '.join(sorted(archs))}"
    return None, "none", "no catalog model of this class"


_QUANT_TAG = re.compile(r"(?i)((?:UD-)?I?Q\d\w*|BF16|F16|F32|MXFP4\w*)$")


def gguf_variants(checkpoint: Checkpoint, family: Model, note: str) -> tuple[list[Variant], list[str]]:
    """One variant per single-file GGUF quantization in the repo (its file and size); the names of
    split (multi-part) quantizations, which one `hf download FILE` cannot fetch, come back apart."""
    from .configfields import slug
    from .sizes import SPLIT_GGUF

    taken = {v.id for v in family.variants}
    variants: list[Variant] = []
    split: list[str] = []
    files = list(checkpoint.gguf_files)
    parts_of: dict[str, int] = {}
    if checkpoint.folder is not None:  # every part is already here: llama.cpp loads them from the first
        files, parts_of = _whole_splits(files)
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        if "mmproj" in name.casefold():  # a vision projector, not the language model
            continue
        if SPLIT_GGUF.search(name) and f.path not in parts_of:
            split.append(f.path)
            continue
        if f.path in parts_of:
            name = SPLIT_GGUF.sub(".gguf", name)
        stem = name[: -len(".gguf")]
        tag = _QUANT_TAG.search(stem)
        variant_id = "gguf-" + slug(tag.group(1) if tag else stem)
        while variant_id in taken:
            variant_id += "-" + slug(checkpoint.name.split("/")[0])
        taken.add(variant_id)
        try:  # a file name outside the repo-file grammar is left out, never passed on
            variant = Variant(
                id=variant_id,
                repo=checkpoint.repo,
                revision=checkpoint.revision,
                file=f.path,
                quant="gguf",
                publisher="community",
                size_gb=f.size / 1e9 if f.size else None,
                notes=[
                    f"{note}; file {f.path}"
                    + (
                        f" (part 1 of {parts_of[f.path]}; llama.cpp loads the others next to it)"
                        if f.path in parts_of
                        else ""
                    )
                ],
                sources=[Source(url=r.url, note=f"{r.what}, read by recipegen") for r in checkpoint.read],
            )
        except ValueError:
            split.append(f.path)
            continue
        variants.append(variant)
    return variants, split


def _whole_splits(files: list[RepoFile]) -> tuple[list[RepoFile], dict[str, int]]:
    """Split GGUF quantizations whose every part is present, each as its first part with the parts'
    summed size; the count of parts per first part. Incomplete splits stay as they are."""
    from .files import RepoFile
    from .sizes import SPLIT_GGUF

    groups: dict[str, list[RepoFile]] = {}
    for f in files:
        if SPLIT_GGUF.search(f.path):
            groups.setdefault(SPLIT_GGUF.sub("", f.path), []).append(f)
    out = [f for f in files if not SPLIT_GGUF.search(f.path)]
    parts_of: dict[str, int] = {}
    for parts in groups.values():
        parts.sort(key=lambda f: f.path)
        count = int(parts[0].path[-len("00000.gguf") : -len(".gguf")])
        numbers = [int(f.path[-len("00000-of-00000.gguf") : -len("-of-00000.gguf")]) for f in parts]
        if numbers == list(range(1, count + 1)) and all(f.size for f in parts):
            first = RepoFile(parts[0].path, sum(f.size or 0 for f in parts))
            out.append(first)
            parts_of[first.path] = count
        else:
            out.extend(parts)
    return sorted(out, key=lambda f: f.path), parts_of


def _gguf_choice(family: Model, checkpoint: Checkpoint, note: str, how: str) -> ModelChoice | None:
    variants, split = gguf_variants(checkpoint, family, note)
    if not variants:
        return None
    # a local folder's plan runs the files in it, never a catalog variant downloaded from the Hub
    kept = [] if checkpoint.folder is not None else list(family.variants)
    model = evolve(family, variants=[*kept, *variants])
    why = "some parts missing" if checkpoint.folder is not None else "split into parts"
    left = f"; left out ({why}, or a file name recipegen does not pass on): {', '.join(split[:4])}" if split else ""
    if len(variants) == 1:
        return ModelChoice(model, variants[0].id, how + left, facts="files")
    listed = ", ".join(v.id for v in variants)
    how += f"; {len(variants)} GGUF quantizations, each a variant (pick one with --variant: {listed})" + left
    return ModelChoice(model, None, how, facts="files")


def _gguf_of_base(catalog: Catalog, checkpoint: Checkpoint, derivation: Derivation) -> ModelChoice | None:
    """A GGUF-only repo (no config.json) whose card names a base model the catalog knows."""
    for base in checkpoint.base_model:
        try:
            family = resolve_model(catalog, base).model
        except UnknownNameError:
            continue
        how = f"model {family.name} (base_model {base} in the card of {checkpoint.name}), GGUF files listed"
        return _gguf_choice(family, checkpoint, f"GGUF repo whose card names base_model {base}", how)
    return None


def confirm(catalog: Catalog, value: str, inferred: ModelChoice) -> ModelChoice:
    """Online, a repo's files confirm or correct what its name suggested; offline (or with the Hub
    unreachable) the name stands, and the output says so."""
    from . import hub
    from .derive import derive
    from .files import HubError

    if inferred.facts != "name" or not hub.looks_like_repo(value):
        return inferred
    if hub.offline():
        return replace(inferred, how=inferred.how + "; HF_HUB_OFFLINE is set")
    try:
        checkpoint = hub.read(value, headers=False)
    except hub.RepoNotFound as exc:
        return _not_on_the_hub(value, inferred, exc)
    except HubError as exc:  # unreachable or gated: the name stands
        return replace(inferred, how=f"{inferred.how}; its files were not read: {exc.message}")
    derivation = derive(checkpoint)
    named = inferred.model
    variant = next(v for v in named.variants if v.id == inferred.variant) if inferred.variant else None
    if checkpoint.config is None:
        if variant is None or variant.quant != "gguf" or not checkpoint.gguf_files:
            return from_files(catalog, value)
        family = evolve(named, variants=[v for v in named.variants if v.id != variant.id])
        how = f"model {named.name}, GGUF files of {value} listed on the Hub"
        choice = _gguf_choice(family, checkpoint, f"GGUF file of {value}", how)
        return choice if choice is not None else replace(inferred, how=f"{inferred.how}; no single-file GGUF found")
    derived = derivation.model
    if derived is None or _shape(derived) != _shape(named):
        choice = from_files(catalog, value)
        return replace(choice, how=f"{choice.how}; its name suggested {named.name}, its files do not match it")
    quant = derived.variants[0].quant
    size = derivation.size.bytes
    base = variant if variant is not None else derived.variants[0]
    fixed = evolve(
        base,
        quant=quant,
        size_gb=size / 1e9 if size else base.size_gb,
        size_gib=None if size else base.size_gib,
        sources=[*base.sources, *derived.variants[0].sources],
    )
    if variant is None:
        fixed = evolve(fixed, id=f"{quant.replace('_', '-')}-files")
    how = (
        f"model {named.name}, {value}: its config.json confirms the architecture and dimensions; weights "
        f"{quant} per its files"
        + (f" (the name suggested {variant.quant})" if variant and variant.quant != quant else "")
    )
    return ModelChoice(_replace_variant(named, fixed), fixed.id, how, facts="files")


def _not_on_the_hub(value: str, inferred: ModelChoice, exc: RecipegenError) -> ModelChoice:
    """The Hub says the named repo does not exist: a download of it would fail. A name that only
    repeats a catalog repo under another organisation (a ModelScope name such as ZhipuAI/GLM-4.6) is
    planned as that catalog repo, said so; any other name is an error naming it."""
    named = inferred.model
    variant = next((v for v in named.variants if v.id == inferred.variant), None)
    basename = value.partition("@")[0].rsplit("/", 1)[-1].casefold()
    original = next(
        (
            v
            for v in named.variants
            if variant is not None and v.id != variant.id and v.repo.rsplit("/", 1)[-1].casefold() == basename
        ),
        None,
    )
    if original is None:
        raise RecipegenError(
            exc.message,
            f"check the spelling; it reads as {named.name}, whose Hub repos are "
            + ", ".join(v.repo for v in named.variants if v is not variant)[:300],
        )
    family = evolve(named, variants=[v for v in named.variants if v is not variant])
    how = (
        f"model {named.name}, variant {original.id}: {value} is not on {hub_endpoint()} (a ModelScope name?), "
        f"so the plan downloads {original.repo}, the same name there"
    )
    return ModelChoice(family, original.id, how, facts="catalog")


def hub_endpoint() -> str:
    from .hub import endpoint

    return endpoint()


def _replace_variant(model: Model, variant: Variant) -> Model:
    others = [v for v in model.variants if v.id != variant.id]
    return evolve(model, variants=[*others, variant])


def gguf_choice(catalog: Catalog, value: str, derivation: Derivation) -> ModelChoice:
    """A checkpoint of GGUF files, planned from their headers: one variant per complete quantization, each
    loaded from its first file. A catalog family the card names (same layout) lends its parsers and notes."""
    from .gguf_model import quant_tag

    checkpoint, model = derivation.checkpoint, derivation.model
    if model is None:
        raise RecipegenError(
            f"cannot plan {value}: {derivation.problem}",
            "`recipegen inspect` shows what the GGUF header says; a models/*.yaml in --recipes can state the rest",
        )
    how = f"{model.gguf_arch} (GGUF) derived from the GGUF header of {checkpoint.name}"
    for base in checkpoint.base_model:
        try:
            family = resolve_model(catalog, base).model
        except UnknownNameError:
            continue
        if (family.layers, family.hidden_size, family.attention.num_heads) == (
            model.layers,
            model.hidden_size,
            model.attention.num_heads,
        ):
            model = evolve(family, variants=model.variants, gguf_arch=model.gguf_arch)
            how = f"model {family.name} (base_model {base} in the card; the GGUF header confirms its layout)"
        break
    left = [q.file for q in checkpoint.gguf if not q.complete]
    if left:
        how += f"; left out (parts missing): {', '.join(left[:4])}"
    if len(model.variants) == 1:
        variant = model.variants[0]
        return ModelChoice(model, variant.id, how + f"; file {variant.file}", facts="files")
    listed = ", ".join(f"{v.id} ({quant_tag(v.file or '')})" for v in model.variants)
    how += f"; {len(model.variants)} GGUF quantizations (pick one with --variant: {listed})"
    return ModelChoice(model, None, how, facts="files")

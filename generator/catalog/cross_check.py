"""Checks across recipe files: every reference resolves, names are unique, a deployment's flags fit its builds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CatalogProblem
from .index import Catalog, builtin_root
from .parse import locate
from .recipe_files import RecipeFileError, compose, read_text


def cross_check(catalog: Catalog) -> list[CatalogProblem]:
    problems: list[CatalogProblem] = []

    def where(kind: str, entry_id: str) -> str:
        return catalog.origins[(kind, entry_id)].path

    def problem(kind: str, entry_id: str, field_path: str, message: str) -> None:
        path = where(kind, entry_id)
        line = _field_line(path, catalog, kind, entry_id, field_path)
        problems.append(CatalogProblem(path, line, field_path, message))

    for kind in ("hardware", "engines", "models"):
        owners: dict[str, str] = {}
        for entry_id, entry in catalog.kind(kind).items():
            for index, name in enumerate([entry_id, *entry.aliases]):
                folded = name.casefold()
                other = owners.get(folded)
                if other is not None and other != entry_id:
                    field_path = "id" if index == 0 else f"aliases[{index - 1}]"
                    problem(kind, entry_id, field_path, f"name {name!r} is already used by {other!r}")
                owners.setdefault(folded, entry_id)

    from .argcheck import deployment_arg_problems
    from .vocabulary import shipped

    vocabularies = shipped()
    build_owner: dict[str, str] = {}
    for engine_id, engine in catalog.engines.items():
        for index, build in enumerate(engine.builds):
            if build.cli_reference is not None and build.cli_reference not in vocabularies:
                problem(
                    "engines",
                    engine_id,
                    f"builds[{index}].cli_reference",
                    f"no shipped flag vocabulary {build.cli_reference!r} (known: {', '.join(vocabularies)})",
                )
            if build.id in build_owner:
                problem(
                    "engines",
                    engine_id,
                    f"builds[{index}].id",
                    f"duplicate build id {build.id!r} (also in engine {build_owner[build.id]!r})",
                )
            build_owner[build.id] = engine_id

    defaults: dict[str, str] = {}
    for hw_id, hw in catalog.hardware.items():
        if hw.default_for_capability:
            cc = str(hw.compute_capability)
            if cc in defaults:
                problem(
                    "hardware", hw_id, "default_for_capability", f"capability {cc} already defaults to {defaults[cc]!r}"
                )
            defaults[cc] = hw_id

    for model_id, model in catalog.models.items():
        variant_ids = [v.id for v in model.variants]
        for index, variant_id in enumerate(variant_ids):
            if variant_ids.index(variant_id) != index:
                problem("models", model_id, f"variants[{index}].id", f"duplicate variant id {variant_id!r}")
        for engine_id in model.parsers:
            if engine_id not in catalog.engines:
                problem(
                    "models",
                    model_id,
                    f"parsers.{engine_id}",
                    f"unknown engine {engine_id!r}; known: {', '.join(sorted(catalog.engines))}",
                )
        for index, override in enumerate(model.parser_overrides):
            if override.engine not in catalog.engines:
                problem("models", model_id, f"parser_overrides[{index}].engine", f"unknown engine {override.engine!r}")
            for build_id in override.builds or []:
                if build_owner.get(build_id) != override.engine:
                    problem(
                        "models",
                        model_id,
                        f"parser_overrides[{index}].builds",
                        f"engine {override.engine!r} has no build {build_id!r}",
                    )

    for model_id, model in catalog.models.items():
        for index, variant in enumerate(model.variants):
            for build_id in variant.only_builds or []:
                if build_id not in build_owner:
                    problem("models", model_id, f"variants[{index}].only_builds", f"unknown build {build_id!r}")

    for dep_id, dep in catalog.deployments.items():
        target = catalog.models.get(dep.model)
        if target is None:
            problem("deployments", dep_id, "model", f"unknown model {dep.model!r}")
        elif dep.variant not in {v.id for v in target.variants}:
            known = ", ".join(v.id for v in target.variants)
            problem(
                "deployments", dep_id, "variant", f"model {dep.model!r} has no variant {dep.variant!r} (known: {known})"
            )
        for index, hw_id in enumerate(dep.hardware):
            if hw_id not in catalog.hardware:
                problem("deployments", dep_id, f"hardware[{index}]", f"unknown hardware {hw_id!r}")
        if dep.engine not in catalog.engines:
            problem("deployments", dep_id, "engine", f"unknown engine {dep.engine!r}")
        elif build_owner.get(dep.build) != dep.engine:
            problem("deployments", dep_id, "build", f"engine {dep.engine!r} has no build {dep.build!r}")
        else:
            engine, build = catalog.build(dep.build)
            for field_path, message in deployment_arg_problems(dep, engine, build):
                problem("deployments", dep_id, field_path, message)
    _check_required_args(catalog, build_owner, problem)

    for fp_id, fp in catalog.fingerprints.items():
        for index, engine_id in enumerate(fp.engines or []):
            if engine_id not in catalog.engines:
                problem("fingerprints", fp_id, f"engines[{index}]", f"unknown engine {engine_id!r}")
    _check_surveys(catalog, problem)
    _check_reported_for(catalog, problem)
    return problems


def _check_reported_for(catalog: Catalog, problem: Callable[[str, str, str, str], None]) -> None:
    """The models a build's reports ran are models of the catalog."""
    for _, build in catalog.builds():
        for at, model_id in enumerate(build.reported_for):
            if model_id != "*" and model_id not in catalog.models and ("builds", build.id) in catalog.origins:
                message = f"unknown model {model_id!r}; name a model id from `recipegen list models`"
                problem("builds", build.id, f"reported_for[{at}]", message)


def _check_surveys(catalog: Catalog, problem: Callable[[str, str, str, str], None]) -> None:
    """A survey's families are models of the catalog, and what it says it added is there."""
    added = {*catalog.fingerprints, *catalog.deployments}
    for _, build in catalog.builds():
        added.add(build.id)
        added.update(defect.id for defect in build.defects)
    for survey_id, survey in catalog.surveys.items():
        for index, entry in enumerate(survey.entries):
            for at, family in enumerate(entry.families):
                if family != "*" and family not in catalog.models:
                    problem("surveys", survey_id, f"entries[{index}].families[{at}]", f"unknown model {family!r}")
            for at, entry_id in enumerate(entry.catalog):
                if entry_id not in added:
                    problem(
                        "surveys",
                        survey_id,
                        f"entries[{index}].catalog[{at}]",
                        f"no build, defect, fingerprint or deployment {entry_id!r} in the catalog; "
                        "add it first, or say under not_added why it was left out",
                    )


def _check_required_args(
    catalog: Catalog, build_owner: dict[str, str], problem: Callable[[str, str, str, str], None]
) -> None:
    """Scoped notes name real builds, and every required argument is spelled as its builds' CLI accepts."""
    from .vocabulary import check_argv, vocabulary

    def check(kind: str, entry_id: str, field_path: str, builds: list[Any], arg: Any) -> None:
        argv = [arg.flag] if arg.value is None else [arg.flag, arg.value]
        by_reference: dict[str, list[str]] = {}
        for build in builds:
            if build.cli_reference is not None:
                by_reference.setdefault(build.cli_reference, []).append(build.id)
        for reference, ids in by_reference.items():
            for error in check_argv(vocabulary(reference), argv):
                problem(kind, entry_id, field_path, f"{error} (builds {', '.join(ids)})")

    for engine_id, engine in catalog.engines.items():
        for b_index, build in enumerate(engine.builds):
            for k_index, kernel in enumerate(build.kernels):
                for a_index, arg in enumerate(kernel.requires_args):
                    path = f"builds[{b_index}].kernels[{k_index}].requires_args[{a_index}]"
                    check("engines", engine_id, path, [build], arg)
            for w_index, fmt in enumerate(build.weight_formats):
                for a_index, arg in enumerate(fmt.requires_args):
                    path = f"builds[{b_index}].weight_formats[{w_index}].requires_args[{a_index}]"
                    check("engines", engine_id, path, [build], arg)
            for d_index, defect in enumerate(build.defects):
                for a_index, arg in enumerate(defect.workaround_args):
                    path = f"builds[{b_index}].defects[{d_index}].workaround_args[{a_index}]"
                    check("engines", engine_id, path, [build], arg)
    for model_id, model in catalog.models.items():
        notes = [("pitfalls", model.pitfalls)]
        notes += [(f"variants[{i}].defects", v.defects) for i, v in enumerate(model.variants)]
        for where, entries in notes:
            for index, note in enumerate(entries):
                for build_id in note.builds or []:
                    if build_id not in build_owner:
                        problem("models", model_id, f"{where}[{index}].builds", f"unknown build {build_id!r}")
        for index, rule in enumerate(model.required_args):
            owner = catalog.engines.get(rule.engine)
            if owner is None:
                problem("models", model_id, f"required_args[{index}].engine", f"unknown engine {rule.engine!r}")
                continue
            for build_id in rule.builds or []:
                if build_owner.get(build_id) != rule.engine:
                    problem(
                        "models",
                        model_id,
                        f"required_args[{index}].builds",
                        f"engine {rule.engine!r} has no build {build_id!r}",
                    )
            builds = [b for b in owner.builds if rule.builds is None or b.id in rule.builds]
            check("models", model_id, f"required_args[{index}]", builds, rule)


def _field_line(path: str, catalog: Catalog, kind: str, entry_id: str, field_path: str) -> int | None:
    import yaml

    origin = catalog.origins[(kind, entry_id)]
    real = builtin_root() / path if origin.root == "built-in" else Path(path)
    try:
        node = compose(read_text(real))
    except (RecipeFileError, yaml.YAMLError):
        return None
    loc: list[int | str] = []
    for part in field_path.replace("]", "").replace("[", ".").split("."):
        loc.append(int(part) if part.isdigit() else part)
    return locate(node, tuple(loc))

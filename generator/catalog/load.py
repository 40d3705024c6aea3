"""Load, validate and index the recipe catalog: the built-in one plus any user directories.

Every problem found in a run is collected and reported together, one line each, as
`path:line: field.path: message`; nothing is half-loaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import CatalogError, CatalogProblem
from .frozen import frozen
from .kinds import KIND_NAMES
from .recipe_files import RecipeFileError, check_numbers, compose, construct, decode, read_bytes, read_text
from .schema import Build, Deployment, Engine, Fingerprint, Hardware, Model
from .schema.records import Strict, validate

if TYPE_CHECKING:  # yaml is imported where recipes are parsed: a run from the validated-catalog cache parses none
    import yaml

    from .parse_cache import ParseCache

RECIPES_ENV = "RECIPEGEN_RECIPES"

# kind folder -> record type; the order is the order entries are cross-checked in.
KINDS: dict[str, type[Strict]] = dict(zip(KIND_NAMES, (Hardware, Engine, Model, Deployment, Fingerprint), strict=True))

M = TypeVar("M", bound=Strict)


@frozen
class Origin:
    path: str
    root: str  # "built-in" or the user directory it came from


@dataclass
class Catalog:
    """The validated catalog, indexed by id. Built once per process; never mutated after load."""

    hardware: dict[str, Hardware] = field(default_factory=dict)
    engines: dict[str, Engine] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    deployments: dict[str, Deployment] = field(default_factory=dict)
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)
    overridden: list[tuple[str, str, Origin]] = field(default_factory=list)

    def build(self, build_id: str) -> tuple[Engine, Build]:
        for engine in self.engines.values():
            for build in engine.builds:
                if build.id == build_id:
                    return engine, build
        raise KeyError(build_id)

    def builds(self) -> Iterator[tuple[Engine, Build]]:
        for engine in self.engines.values():
            for build in engine.builds:
                yield engine, build

    def kind(self, name: str) -> dict[str, Any]:
        table: dict[str, Any] = getattr(self, name)
        return table


# ---------------------------------------------------------------------------------------------
# YAML with line numbers


def _locate(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """Line (1-based) of the YAML node at a pydantic error location, or of its nearest parent."""
    import yaml

    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            key = next((k for k, _ in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                return line
            # an unknown or misspelt key is reported on the key's own line
            line = (key or match).start_mark.line + 1
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _duplicate_keys(
    node: yaml.Node, path: str, trail: tuple[str, ...] = (), seen_nodes: set[int] | None = None
) -> Iterator[CatalogProblem]:
    import yaml

    seen_nodes = set() if seen_nodes is None else seen_nodes
    if id(node) in seen_nodes:  # an alias: its node was checked where it was anchored
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                yield CatalogProblem(path, key.start_mark.line + 1, ".".join((*trail, name)), "duplicate key")
            seen.add(name)
            yield from _duplicate_keys(value, path, (*trail, name), seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicate_keys(item, path, (*trail, str(index)), seen_nodes)


def _format_loc(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(file)"


def _message(error: Any) -> str:
    kind = error["type"]
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return "unknown key (not in the schema; check the spelling)"
    if kind in ("missing", "missing_keyword_only_argument"):
        return "required field is missing"
    if kind == "literal_error":
        return f"{error['input']!r} is not one of {error['ctx']['expected']}"
    msg = str(error["msg"])
    return msg.removeprefix("Value error, ")


def parse_file(
    path: Path, display: str, model: type[M], cache: ParseCache | None = None
) -> tuple[M | None, list[CatalogProblem]]:
    """Parse and validate one YAML file; returns the entry or the list of its problems."""
    import yaml
    from pydantic import ValidationError

    from .parse_cache import MISS, digest

    try:
        content = read_bytes(path)
        text = decode(content)
    except RecipeFileError as exc:
        return None, [CatalogProblem(display, exc.line, "(file)", exc.message)]
    key = digest(content)
    data = cache.get(key) if cache is not None else MISS
    node: yaml.Node | None = None
    problems: list[CatalogProblem] = []
    if data is MISS:
        try:
            node = compose(text)
            data = construct(node) if node is not None else None
            check_numbers(data)
        except RecipeFileError as exc:
            return None, [CatalogProblem(display, exc.line, "(yaml)", exc.message)]
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc)
            return None, [CatalogProblem(display, line, "(yaml)", f"malformed YAML: {problem}")]
        problems = list(_duplicate_keys(node, display)) if node is not None else []
        if cache is not None and not problems:
            cache.put(key, data)
    if not isinstance(data, dict):
        return None, [*problems, CatalogProblem(display, 1, "(file)", "expected a mapping of fields at the top level")]
    try:
        entry = validate(model, data)
    except ValidationError as exc:
        if node is None:  # cached data: the text composed cleanly when it was cached
            node = compose(text)
        for error in exc.errors():
            loc = tuple(error["loc"])
            problems.append(CatalogProblem(display, _locate(node, loc), _format_loc(loc), _message(error)))
        return None, problems
    return (entry if not problems else None), problems


# ---------------------------------------------------------------------------------------------
# Roots: the built-in catalog and user directories


def builtin_root() -> Path:
    return Path(str(resources.files("recipegen.recipes")))


def user_roots(cli_dirs: Iterable[str] = ()) -> list[Path]:
    """User recipe directories: RECIPEGEN_RECIPES (os.pathsep-separated) first, then --recipes."""
    env = [p for p in os.environ.get(RECIPES_ENV, "").split(os.pathsep) if p]
    return [Path(p) for p in [*env, *cli_dirs]]


def _yaml_files(root: Path, kind: str) -> list[Path]:
    folder = root / kind
    return sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")) if _is_dir(folder) else []


def _is_dir(path: Path) -> bool:
    try:  # Path.is_dir() raises on a name too long or a permission error; neither is a recipe folder
        return path.is_dir()
    except OSError:
        return False


def load(cli_dirs: Iterable[str] = ()) -> Catalog:
    """Load the built-in catalog overlaid by the user's directories. Raises CatalogError.

    A successful load is cached validated (catalog_cache), keyed on the code and on every recipe
    file's bytes; otherwise parsed YAML is cached per file content (parse_cache) and validated.
    """
    from . import catalog_cache
    from .parse_cache import ParseCache, cache_folder

    cli_dirs = list(cli_dirs)
    folder = cache_folder()
    roots = _roots(cli_dirs) if folder is not None else None
    cache_key = catalog_cache.key(roots, KINDS) if roots is not None else None
    if folder is not None and cache_key is not None:
        cached = catalog_cache.read(folder, cache_key)
        if cached is not None:
            return cached
    cache = ParseCache.open()
    try:
        catalog = _load(cli_dirs, cache)
    finally:
        if cache is not None:
            cache.save()
    if folder is not None and cache_key is not None:
        catalog_cache.write(folder, cache_key, catalog)
    return catalog


def _roots(cli_dirs: list[str]) -> list[tuple[str, Path]] | None:
    """The roots a load reads, when every user root is a folder (else the full load reports it)."""
    users = user_roots(cli_dirs)
    if not all(_is_dir(user) for user in users):
        return None
    return [("built-in", builtin_root()), *((str(user), user) for user in users)]


def _load(cli_dirs: Iterable[str], cache: ParseCache | None = None) -> Catalog:
    roots: list[tuple[str, Path]] = [("built-in", builtin_root())]
    problems: list[CatalogProblem] = []
    for user in user_roots(cli_dirs):
        if not _is_dir(user):
            problems.append(
                CatalogProblem(
                    str(user),
                    None,
                    "(directory)",
                    "not a directory — pass a folder holding hardware/, engines/, models/ or deployments/",
                )
            )
            continue
        if not any(_is_dir(user / kind) for kind in KINDS):
            problems.append(
                CatalogProblem(str(user), None, "(directory)", f"has none of the folders {', '.join(KINDS)}/")
            )
        roots.append((str(user), user))

    catalog = Catalog()
    for label, root in roots:
        seen_here: dict[tuple[str, str], str] = {}
        for kind, model in KINDS.items():
            for path in _yaml_files(root, kind):
                display = f"{kind}/{path.name}" if label == "built-in" else str(path)
                entry, found = parse_file(path, display, model, cache)
                problems.extend(found)
                if entry is None:
                    continue
                entry_id: str = entry.id  # type: ignore[attr-defined]
                key = (kind, entry_id)
                if key in seen_here:
                    problems.append(
                        CatalogProblem(
                            display, _id_line(path), "id", f"duplicate id {entry_id!r} (also in {seen_here[key]})"
                        )
                    )
                    continue
                seen_here[key] = display
                origin = Origin(display, label)
                if key in catalog.origins:
                    catalog.overridden.append((kind, entry_id, origin))
                catalog.kind(kind)[entry_id] = entry
                catalog.origins[key] = origin
    from .releases import attach

    problems.extend(attach(catalog, roots, cache))
    problems.extend(cross_check(catalog))
    if problems:
        raise CatalogError(problems)
    return catalog


def _id_line(path: Path) -> int | None:
    try:
        text = read_text(path)
    except RecipeFileError:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("id:"):
            return number
    return None


# ---------------------------------------------------------------------------------------------
# Cross-file checks: references, duplicate names


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
    return problems


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
    return _locate(node, tuple(loc))

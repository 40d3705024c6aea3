"""Load the recipe catalog: the built-in one overlaid by the user's directories, validated and cross-checked.

Every problem found in a run is collected and reported together, one line each, as
`path:line: field.path: message`; nothing is half-loaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CatalogError, CatalogProblem
from .index import KINDS, Catalog, Origin, builtin_root
from .recipe_files import is_dir

if TYPE_CHECKING:
    from .parse_cache import ParseCache

RECIPES_ENV = "RECIPEGEN_RECIPES"


# ---------------------------------------------------------------------------------------------
# Roots: the built-in catalog and user directories


def user_roots(cli_dirs: Iterable[str] = ()) -> list[Path]:
    """User recipe directories: RECIPEGEN_RECIPES (os.pathsep-separated) first, then --recipes."""
    env = [p for p in os.environ.get(RECIPES_ENV, "").split(os.pathsep) if p]
    return [Path(p) for p in [*env, *cli_dirs]]


def _yaml_files(root: Path, kind: str) -> list[Path]:
    folder = root / kind
    return sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")) if is_dir(folder) else []


def load(cli_dirs: Iterable[str] = ()) -> Catalog:
    """Load the built-in catalog overlaid by the user's directories. Raises CatalogError.

    A successful load is cached validated (cache.py), keyed on the code and on every recipe
    file's bytes; otherwise parsed YAML is cached per file content (parse_cache.py) and validated.
    """
    from . import cache as catalog_cache
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
    if not all(is_dir(user) for user in users):
        return None
    return [("built-in", builtin_root()), *((str(user), user) for user in users)]


def _load(cli_dirs: Iterable[str], cache: ParseCache | None = None) -> Catalog:
    # parsing and cross-checking load only here: a run the validated-catalog cache answers needs neither
    from .cross_check import cross_check
    from .parse import parse_file

    roots: list[tuple[str, Path]] = [("built-in", builtin_root())]
    problems: list[CatalogProblem] = []
    for user in user_roots(cli_dirs):
        if not is_dir(user):
            problems.append(
                CatalogProblem(
                    str(user),
                    None,
                    "(directory)",
                    "not a directory — pass a folder holding hardware/, engines/, models/ or deployments/",
                )
            )
            continue
        if not any(is_dir(user / kind) for kind in KINDS):
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
    from .recipe_files import RecipeFileError, read_text

    try:
        text = read_text(path)
    except RecipeFileError:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("id:"):
            return number
    return None

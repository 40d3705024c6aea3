"""Release lines: builds kept one per file under engines/<engine>/, each whole or as the changes to
the build it `extends`. The loader merges every change into a full `Build`, so the resolver only
ever sees validated builds; a cycle, a dangling or foreign parent, or an edit of something the
parent does not have is a catalog problem located at the line that says it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from ..errors import CatalogProblem
from .index import Catalog, Origin
from .parse import format_loc, locate, problem_message, structure_problems
from .recipe_files import RecipeFileError, check_numbers, compose, construct, decode, is_dir, read_bytes

if TYPE_CHECKING:
    from .parse_cache import ParseCache
from ..frozen import evolve
from .schema import Build
from .schema.records import to_data, validate
from .schema.release import KEYS, PARSER_LISTS, BuildChange


@dataclass
class _Entry:
    engine: str
    display: str
    root: str
    text: str
    value: Build | BuildChange
    node: yaml.Node | None = None  # composed only to locate a problem when the data came from the cache

    def line(self, *loc: int | str) -> int | None:
        if self.node is None:
            self.node = compose(self.text)
        return locate(self.node, loc)


def _files(root: Path) -> list[tuple[str, Path]]:
    folder = root / "engines"
    if not is_dir(folder):
        return []
    out: list[tuple[str, Path]] = []
    for sub in sorted(p for p in folder.iterdir() if is_dir(p) and not p.name.startswith((".", "_"))):
        out.extend((sub.name, f) for f in sorted([*sub.glob("*.yaml"), *sub.glob("*.yml")]))
    return out


def _parse(
    path: Path, display: str, cache: ParseCache | None = None
) -> tuple[str | None, Build | BuildChange | None, list[CatalogProblem]]:
    """The file's text and its validated build (or change), or the problems; parsed YAML is cached."""
    from .parse_cache import MISS, digest

    node: yaml.Node | None = None
    problems: list[CatalogProblem] = []
    try:  # the same bounded reading as every other recipe file (plain file, size, nesting, aliases)
        content = read_bytes(path)
        text = decode(content)
        data = cache.get(digest(content)) if cache is not None else MISS
        if data is MISS:
            node = compose(text)
            data = construct(node) if node is not None else None
            check_numbers(data)
            problems = structure_problems(node, text, display) if node is not None else []
            if cache is not None and not problems:
                cache.put(digest(content), data)
    except RecipeFileError as exc:
        return None, None, [CatalogProblem(display, exc.line, "(file)", exc.message)]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        return None, None, [CatalogProblem(display, line, "(yaml)", f"malformed YAML: {problem}")]
    if not isinstance(data, dict):
        return None, None, [CatalogProblem(display, 1, "(file)", "expected a mapping of build fields at the top level")]
    try:
        value: Build | BuildChange = validate(BuildChange, data) if "extends" in data else validate(Build, data)
    except ValidationError as exc:
        node = node if node is not None else compose(text)
        for error in exc.errors():
            loc = tuple(error["loc"])
            problems.append(CatalogProblem(display, locate(node, loc), format_loc(loc), problem_message(error)))
        return text, None, problems
    assert isinstance(value, (Build, BuildChange))
    return text, (value if not problems else None), problems


def _edit_keyed(
    entry: _Entry, field: str, inherited: list[dict[str, Any]], edit: Any, problems: list[CatalogProblem]
) -> list[dict[str, Any]]:
    """Entries sharing a key form one group (a backend listed per GPU family): `remove` drops the group
    (`op/NAME` only that op's entries), `replace` puts the new group where the old one of the same key
    and op began, `add` appends a new group (for kernels a backend for an op the parent lacks it for)."""
    key = KEYS[field]
    items = list(inherited)
    for index, name in enumerate(edit.remove):
        kept = [item for item in items if name not in (item[key], _op_key(item))]
        if len(kept) == len(items):
            problems.append(_missing(entry, field, "remove", index, name, [item[key] for item in items]))
        items = kept
    # a replacement lands where the inherited entries of the same key (and, for kernels, the same op) began
    fields = (key, "provides") if field == "kernels" else (key,)
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for index, new in enumerate(edit.replace):
        dumped = to_data(new)
        group = tuple(str(dumped[f]) for f in fields)
        if group not in groups and group not in {tuple(str(item[f]) for f in fields) for item in items}:
            have = [" ".join(str(item[f]) for f in fields) for item in items]
            problems.append(_missing(entry, field, "replace", index, " ".join(group), have))
            continue
        groups.setdefault(group, []).append(dumped)
    for group, replacement in groups.items():
        at = next(i for i, item in enumerate(items) if tuple(str(item[f]) for f in fields) == group)
        rest = [item for item in items if tuple(str(item[f]) for f in fields) != group]
        items = [*rest[:at], *replacement, *rest[at:]]
    # a kernel is one backend for one op: the same backend may be added for an op the parent lacks it for
    inherited_groups = {tuple(str(item[f]) for f in fields) for item in items}
    for index, new in enumerate(edit.add):
        name = getattr(new, key)
        group = tuple(str(getattr(new, f)) for f in fields)
        if group in inherited_groups:
            which = f"{name!r} ({group[1]})" if len(group) > 1 else repr(name)
            message = f"{which} is already in {entry.value.extends!r}; use replace to change it"
            problems.append(
                CatalogProblem(entry.display, entry.line(field, "add", index), f"{field}.add[{index}]", message)
            )
            continue
        items.append(to_data(new))
    return items


def _op_key(item: dict[str, Any]) -> str | None:
    """A kernel listed for several ops is removed from one of them as `op/NAME`."""
    return f"{item['provides']}/{item['name']}" if "provides" in item else None


def _missing(entry: _Entry, field: str, op: str, index: int, name: str, names: list[str]) -> CatalogProblem:
    parent = entry.value.extends if isinstance(entry.value, BuildChange) else None
    known = ", ".join(dict.fromkeys(map(str, names))) or "none"
    return CatalogProblem(
        entry.display,
        entry.line(field, op, index),
        f"{field}.{op}[{index}]",
        f"{parent!r} has no {name!r} to {op} (it has: {known})",
    )


def _merge(entry: _Entry, parent: Build, problems: list[CatalogProblem]) -> Build | None:
    change = entry.value
    assert isinstance(change, BuildChange)
    merged: dict[str, Any] = to_data(parent)
    # the parent's reports ran the parent: a fork cut from it says which models its own reports ran
    merged.update(id=change.id, extends=change.extends, reported_for=[])
    before = len(problems)
    for name in change.model_fields_set - {"id", "extends", *KEYS, *PARSER_LISTS, "architectures", "images"}:
        value = getattr(change, name)
        merged[name] = to_data(value)
    if change.images is not None:
        images = dict(merged["images"])
        for arch, image in change.images.items():
            if image is None:
                images.pop(arch, None)
            else:
                images[arch] = image
        merged["images"] = images
    if change.architectures is not None:
        archs = list(merged["architectures"])
        for index, name in enumerate(change.architectures.remove):
            if name not in archs:
                problems.append(_missing(entry, "architectures", "remove", index, name, archs))
            else:
                archs.remove(name)
        for index, name in enumerate(change.architectures.add):
            if name in archs:
                message = f"{name!r} is already in {change.extends!r}"
                line = entry.line("architectures", "add", index)
                problems.append(CatalogProblem(entry.display, line, f"architectures.add[{index}]", message))
            else:
                archs.append(name)
        merged["architectures"] = archs
    for field in KEYS:
        edit = getattr(change, field)
        if edit is not None:
            merged[field] = _edit_keyed(entry, field, merged[field], edit, problems)
    _merge_parsers(entry, parent, merged, problems)
    if len(problems) > before:
        return None
    try:
        return validate(Build, merged)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            line = entry.line(*loc) if loc and loc[0] in change.model_fields_set else entry.line("id")
            problems.append(CatalogProblem(entry.display, line, format_loc(loc), problem_message(error)))
        return None


def _merge_parsers(entry: _Entry, parent: Build, merged: dict[str, Any], problems: list[CatalogProblem]) -> None:
    """A stated parser list (or an edit of the parent's) is this build's; an unstated one is inherited, marked so."""
    change = entry.value
    assert isinstance(change, BuildChange)
    inherited = dict(parent.parsers_inherited)
    for field, kind in PARSER_LISTS.items():
        stated = getattr(change, field)
        have: list[str] | None = getattr(parent, field)
        if stated is None:
            if field in change.model_fields_set:  # an explicit null: not known for this build
                merged[field] = None
                inherited.pop(kind, None)
            elif have is not None:
                inherited.setdefault(kind, parent.id)
            continue
        inherited.pop(kind, None)
        if stated.replace is not None:
            have = list(stated.replace)
        if have is None:
            line = entry.line(field)
            message = f"{change.extends!r} has no {field} to edit: give the whole list as replace"
            problems.append(CatalogProblem(entry.display, line, field, message))
            continue
        names = list(have)
        for index, name in enumerate(stated.remove):
            if name not in names:
                problems.append(_missing(entry, field, "remove", index, name, names))
            else:
                names.remove(name)
        for index, name in enumerate(stated.add):
            if name in names:
                line = entry.line(field, "add", index)
                message = f"{name!r} is already in {change.extends!r}"
                problems.append(CatalogProblem(entry.display, line, f"{field}.add[{index}]", message))
            else:
                names.append(name)
        merged[field] = names
    merged["parsers_inherited"] = inherited


def attach(catalog: Catalog, roots: list[tuple[str, Path]], cache: ParseCache | None = None) -> list[CatalogProblem]:
    """Read every engines/<engine>/ build file of every root, merge changes, add them to their engines."""
    problems: list[CatalogProblem] = []
    entries: dict[str, _Entry] = {}
    for label, root in roots:
        seen_here: dict[str, str] = {}
        for engine_id, path in _files(root):
            display = f"engines/{engine_id}/{path.name}" if label == "built-in" else str(path)
            text, value, found = _parse(path, display, cache)
            problems.extend(found)
            if text is None or value is None:
                continue
            entry = _Entry(engine_id, display, label, text, value)
            if engine_id not in catalog.engines:
                known = ", ".join(sorted(catalog.engines))
                problems.append(
                    CatalogProblem(display, None, "(file)", f"folder {engine_id!r} names no engine (known: {known})")
                )
                continue
            if path.stem != value.id:
                message = f"file name must be the build id ({value.id}.yaml)"
                problems.append(CatalogProblem(display, entry.line("id"), "id", message))
                continue
            if value.id in seen_here or any(b.id == value.id for b in catalog.engines[engine_id].builds):
                other = seen_here.get(value.id, catalog.origins[("engines", engine_id)].path)
                message = f"duplicate build id {value.id!r} (also in {other})"
                problems.append(CatalogProblem(display, entry.line("id"), "id", message))
                continue
            seen_here[value.id] = display
            if value.id in entries:
                catalog.overridden.append(("builds", value.id, Origin(display, label)))
            entries[value.id] = entry

    owner = {b.id: e.id for e in catalog.engines.values() for b in e.builds}
    owner.update({build_id: entry.engine for build_id, entry in entries.items()})
    done: dict[str, Build | None] = {b.id: b for e in catalog.engines.values() for b in e.builds}

    def build_of(build_id: str, trail: tuple[str, ...]) -> Build | None:
        if build_id in done:
            return done[build_id]
        entry = entries[build_id]
        value = entry.value
        result: Build | None = None
        if isinstance(value, Build):
            result = value
        else:
            parent_id = value.extends

            def where(entry: _Entry = entry) -> tuple[str, int | None, str]:  # located only for a problem
                return entry.display, entry.line("extends"), "extends"

            if parent_id in trail or parent_id == build_id:
                chain = (
                    " → ".join([*trail[trail.index(parent_id) :], build_id, parent_id]) if parent_id in trail else ""
                )
                problems.append(CatalogProblem(*where(), f"extends cycle: {chain or build_id + ' → ' + build_id}"))
            elif parent_id not in owner:
                known = ", ".join(sorted(b for b, e in owner.items() if e == entry.engine))
                problems.append(
                    CatalogProblem(*where(), f"no build {parent_id!r} to extend (builds of {entry.engine}: {known})")
                )
            elif owner[parent_id] != entry.engine:
                message = f"{parent_id!r} is a build of {owner[parent_id]!r}, not of {entry.engine!r}"
                problems.append(CatalogProblem(*where(), message))
            else:
                parent = build_of(parent_id, (*trail, build_id))
                result = _merge(entry, parent, problems) if parent is not None else None
        done[build_id] = result
        return result

    added: dict[str, list[Build]] = {}
    for build_id, entry in entries.items():
        build = build_of(build_id, ())
        if build is not None:
            added.setdefault(entry.engine, []).append(build)
            catalog.origins[("builds", build_id)] = Origin(entry.display, entry.root)
    for engine_id, builds in added.items():
        engine = catalog.engines[engine_id]
        ordered = sorted(builds, key=lambda b: (b.released, b.id))
        catalog.engines[engine_id] = evolve(engine, builds=[*engine.builds, *ordered])
    problems.extend(_check_defects(catalog, entries))
    return problems


def _defect_site(entry: _Entry | None, defect_id: str) -> tuple[int | None, str] | None:
    """Where a build file declares a defect: its line and field path (None: declared elsewhere)."""
    if entry is None:
        return None
    value = entry.value
    declared = value.defects.add if isinstance(value, BuildChange) and value.defects else None
    prefix: tuple[str | int, ...] = ("defects", "add")
    if isinstance(value, Build):
        declared, prefix = value.defects, ("defects",)
    for index, defect in enumerate(declared or []):
        if defect.id == defect_id:
            loc = (*prefix, index, "fixed_in")
            return entry.line(*loc), format_loc(loc)
    return None


def _check_defects(catalog: Catalog, entries: dict[str, _Entry]) -> list[CatalogProblem]:
    """A defect's `fixed_in` names a build of the same engine that no longer carries it."""
    problems: list[CatalogProblem] = []
    for engine in catalog.engines.values():
        by_id = {b.id: b for b in engine.builds}
        checked: set[str] = set()
        for build in engine.builds:
            for defect in build.defects:
                if defect.fixed_in is None or defect.id in checked:
                    continue
                checked.add(defect.id)
                origin = catalog.origins.get(("builds", build.id)) or catalog.origins[("engines", engine.id)]
                site = _defect_site(entries.get(build.id), defect.id)
                line, field = site if site is not None else (None, f"defects[{defect.id}].fixed_in")
                fixed = by_id.get(defect.fixed_in)
                if fixed is None:
                    problems.append(
                        CatalogProblem(origin.path, line, field, f"{engine.id} has no build {defect.fixed_in!r}")
                    )
                elif any(d.id == defect.id for d in fixed.defects):
                    message = f"{defect.fixed_in!r} still carries {defect.id!r}; remove it there or fix fixed_in"
                    problems.append(CatalogProblem(origin.path, line, field, message))
    return problems

"""One recipe file parsed and validated, each problem located at its line: `path:line: field.path: message`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CatalogProblem
from .index import M
from .recipe_files import RecipeFileError, check_numbers, compose, construct, decode, read_bytes
from .schema.records import validate

if TYPE_CHECKING:  # yaml is imported where recipes are parsed: a run from the validated-catalog cache parses none
    import yaml

    from .parse_cache import ParseCache


def locate(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
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


def duplicate_keys(
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
            yield from duplicate_keys(value, path, (*trail, name), seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from duplicate_keys(item, path, (*trail, str(index)), seen_nodes)


def comment_cuts(
    node: yaml.Node, lines: list[str], path: str, trail: tuple[str, ...] = (), seen_nodes: set[int] | None = None
) -> Iterator[CatalogProblem]:
    """Plain (unquoted) values followed by ` #` on their line: YAML reads the rest of the line as a comment and drops
    it from the value (`note: merged as PR #19460 on ...` keeps only `merged as PR`). A comment after a value takes
    two spaces before the `#`, as yamllint's default asks, so one space is taken for a cut value."""
    import yaml

    seen_nodes = set() if seen_nodes is None else seen_nodes
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from comment_cuts(value, lines, path, (*trail, str(key.value)), seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from comment_cuts(item, lines, path, (*trail, str(index)), seen_nodes)
    elif isinstance(node, yaml.ScalarNode) and not node.style and node.end_mark is not None:  # plain: None or ""
        line, column = node.end_mark.line, node.end_mark.column
        if (
            line < len(lines)
            and lines[line][column : column + 2] == " #"
            and lines[line][column + 2 : column + 3] != " "
        ):
            message = (
                f"the text after ' #' is read as a YAML comment, so the value stops at {str(node.value)[-30:]!r}: "
                "quote the value ('...'), or put two spaces before a comment"
            )
            yield CatalogProblem(path, line + 1, ".".join(trail), message)


def structure_problems(node: yaml.Node, text: str, path: str) -> list[CatalogProblem]:
    """What the schema cannot see in parsed data: duplicate keys, and values a stray ` #` cut short."""
    return [*duplicate_keys(node, path), *comment_cuts(node, text.splitlines(), path)]


def format_loc(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(file)"


def problem_message(error: Any) -> str:
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
        problems = structure_problems(node, text, display) if node is not None else []
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
            problems.append(CatalogProblem(display, locate(node, loc), format_loc(loc), problem_message(error)))
        return None, problems
    return (entry if not problems else None), problems

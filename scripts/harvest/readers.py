"""Readers shared by the engines: names a registry decorator registers, a dict's keys, argparse options."""

from __future__ import annotations

import ast
import re
from typing import Any

from pyread import UNREADABLE, calls, classes, dotted, literal, module_tables, parse
from tree import Tree


def registered_names(tree: Tree, folder: str, method: str, every_arg: bool = False) -> list[str]:
    """Names given to `X.<method>("name")` / `X.<method>(["a", "b"])` / `name=` in every module of `folder`."""
    names: list[str] = []
    for path in tree.names(folder):
        text = tree.read(path) or ""
        if method not in text:
            continue
        for call in calls(parse(text, path), method):
            arg: Any = UNREADABLE
            if call.args:
                arg = [literal(a) for a in call.args] if every_arg else literal(call.args[0])
            for kw in call.keywords:
                if kw.arg in ("name", "names", "module_name"):
                    arg = literal(kw.value)
            if isinstance(arg, str):
                names.append(arg)
            elif isinstance(arg, (list, tuple)):
                names.extend(a for a in arg if isinstance(a, str))
    return names


def table_keys(text: str, name: str, target: str) -> list[str] | None:
    """The literal keys of the dict assigned to `target` anywhere in the module (values may be classes)."""
    for node in ast.walk(parse(text, name)):
        value: ast.AST | None = None
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == target for t in node.targets)) or (
            isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == target
        ):
            value = node.value
        if isinstance(value, ast.Dict):
            keys = [literal(k) for k in value.keys if k is not None]
            return [k for k in keys if isinstance(k, str)]
    return None


def _json_safe(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return list(value)
    return UNREADABLE


def _dataclass_defaults(tree: ast.Module) -> dict[str, dict[str, Any]]:
    """Class -> field -> literal default, for `default=Class.field` in add_argument calls."""
    out: dict[str, dict[str, Any]] = {}
    for name, cls in classes(tree).items():
        fields: dict[str, Any] = {}
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                fields[stmt.target.id] = literal(stmt.value)
        out[name] = fields
    return out


# what a retired option's own text says replaces it: "use '--x y' instead", "(Deprecated: use --x=auto)",
# "use --x y instead"; a word after an unquoted option is its value only when "instead" or the sentence's end follows
_CUE = r"(?:\buse|replaced (?:by|with))\s+"
_FLAG = r"--[A-Za-z0-9][\w.{},-]*"
_WORD = r"[^\s,;()'\"`]+"
_VALUE = rf"(?:\s+(?!instead\b)({_WORD}?)(?=\s+instead\b|\.?$|\.\s))"
REPLACEMENT = re.compile(
    rf"{_CUE}[`'\"]({_FLAG}(?:[= ][^`'\"]+)?)[`'\"]|{_CUE}({_FLAG}(?:={_WORD})?){_VALUE}?",
    re.IGNORECASE,
)


def replacement_in(text: str) -> str | None:
    found = REPLACEMENT.search(text)
    if found is None:
        return None
    quoted, flag, value = found.groups()
    said = quoted or (f"{flag} {value}" if value else flag)
    return said.rstrip(".")


# help text that retires its own option (not one that mentions deprecated things, e.g. "allow deprecated methods")
DEPRECATED = re.compile(
    r"^\W*deprecated\b|\b(?:this|the) (?:argument|flag|option) (?:is|has been|will be) deprecated|"
    r"(?:^|\s)(?P<flag>--[\w.-]+)['`\"]? is deprecated",
    re.IGNORECASE,
)


def _says_retired(text: str, flags: list[str]) -> bool:
    found = DEPRECATED.search(text)
    return bool(found) and (found.group("flag") is None or found.group("flag") in flags)


def _aborts(action: ast.ClassDef | None) -> bool | None:
    """Whether an argparse action stops the launch: its `__call__` raises or calls `parser.error` unconditionally
    (True), only when given `error_message` (None), or never (False)."""
    call = next(
        (f for f in (action.body if action else []) if isinstance(f, ast.FunctionDef) and f.name == "__call__"), None
    )
    if call is None:
        return False
    for stmt in call.body:
        if isinstance(stmt, ast.Raise):
            return True
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and (dotted(stmt.value.func) or "").endswith(".error")
        ):
            return True
        if isinstance(stmt, ast.If) and any(
            isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and (dotted(n.func) or "").endswith(".error"))
            for n in ast.walk(stmt)
        ):
            return None
    return False


def _retired(entry: dict[str, Any], flags: list[str], said: dict[str, Any], actions: dict[str, ast.ClassDef]) -> None:
    """Mark an option its own code retires: `removed` (kept only to stop the launch with this text) or `deprecated`
    (still accepted; its warning and, where the text names one, the option that replaces it per spelling)."""
    action = said.get("action_class")
    text = said.get("error_message") or said.get("help")
    text = " ".join(text.split()) if isinstance(text, str) else None
    named_deprecated = bool(action and "deprecat" in action.lower())
    if not (said.get("deprecated") is True or named_deprecated or (text and _says_retired(text, flags))):
        return
    stops = _aborts(actions.get(action or "")) if named_deprecated else False
    new = said.get("new_flag")
    if not isinstance(new, str) and text:
        new = replacement_in(text)
    by = dict.fromkeys(flags, new) if isinstance(new, str) and new.split("=", 1)[0].split()[0] not in flags else None
    if stops or (stops is None and isinstance(said.get("error_message"), str)):
        entry["removed"] = text or "this option is no longer supported"
        if by:
            entry["replaced_by"] = by
        return
    entry["deprecated"] = {"warning": text, "replaced_by": by} if text else {"replaced_by": by}
    entry["deprecated"] = {k: v for k, v in entry["deprecated"].items() if v}


def argparse_options(
    text: str,
    name: str,
    defaults_from: ast.Module | None = None,
    actions: dict[str, ast.ClassDef] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every `add_argument("--x", ...)` with its literal choices and default (absent key: not readable), and whether
    its own code retires it (a deprecation flag, a Deprecated… action, help text saying so); `actions`: argparse action
    classes defined outside this module."""
    tree = parse(text, name)
    env = module_tables(tree)
    dataclass_defaults = _dataclass_defaults(defaults_from or tree)
    known_actions = {**(actions or {}), **classes(tree)}
    options: dict[str, dict[str, Any]] = {}
    for call in calls(tree, "add_argument"):
        strings = [literal(a) for a in call.args]
        flags = [s for s in strings if isinstance(s, str) and s.startswith("-")]
        if not flags:
            continue
        entry: dict[str, Any] = {}
        said: dict[str, Any] = {}
        if len(flags) > 1:
            entry["aliases"] = flags[1:]
        for kw in call.keywords:
            if kw.arg in ("help", "error_message", "new_flag", "deprecated"):
                said[kw.arg] = literal(kw.value, env)
            elif kw.arg == "action" and isinstance(kw.value, (ast.Name, ast.Attribute)):
                said["action_class"] = (dotted(kw.value) or "").split(".")[-1]
            if kw.arg == "choices":
                value = _json_safe(literal(kw.value, env))
                if value is not UNREADABLE:
                    entry["choices"] = value
                elif isinstance(kw.value, ast.BinOp) and isinstance(kw.value.op, ast.Add):
                    # `["auto"] + registry_names()`: the literal part is a choice the registry does not hold
                    extra = _json_safe(literal(kw.value.left, env))
                    if isinstance(extra, list):
                        entry["choices_extra"] = extra
            elif kw.arg == "default":
                value = literal(kw.value, env)
                if value is UNREADABLE and isinstance(kw.value, ast.Attribute) and isinstance(kw.value.value, ast.Name):
                    value = dataclass_defaults.get(kw.value.value.id, {}).get(kw.value.attr, UNREADABLE)
                value = _json_safe(value)
                if value is not UNREADABLE:
                    entry["default"] = value
            elif (
                kw.arg == "action"
                and isinstance(kw.value, ast.Constant)
                and kw.value.value in ("store_true", "store_false")
            ):
                entry["takes_value"] = False
        _retired(entry, flags, said, known_actions)
        for key in ("deprecated", "removed"):
            if key in entry:
                entry.setdefault("said_in", name)
        long_flags = [f for f in flags if f.startswith("--")] or flags
        options.setdefault(long_flags[0], entry)
    return options


def real_replacements(options: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`options` with each replacement a retired option's text names kept only where it is an option of the same
    release (its whole CLI, read from every file that builds it)."""
    for entry in options.values():
        for holder in (entry.get("deprecated") or {}, entry):
            replaced = holder.get("replaced_by")
            if replaced and not all(_names(options, new) for new in replaced.values()):
                del holder["replaced_by"]
    return options


CODE_SAYS = re.compile(r"(?:^|[\s`'\"])(--[\w-]+)[`'\"]? (?:is|has been) deprecated")


def _strings(tree: ast.Module) -> list[str]:
    """Every string the module writes: constants, and f-strings with each interpolation as an ellipsis."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


def warned_in_code(tree: Tree, prefixes: tuple[str, ...], options: dict[str, dict[str, Any]]) -> list[str]:
    """Mark as deprecated each option the release's own code warns about ("--x is deprecated; use --y"), where its
    `add_argument` did not say so; returns the files that said it."""
    said: list[str] = []
    for prefix in prefixes:
        for path in tree.names(prefix) if prefix.endswith("/") else [prefix]:
            text = tree.read(path) or ""
            if " deprecated" not in text:
                continue
            for string in _strings(parse(text, path)):
                text_ = " ".join(string.split())
                for flag in CODE_SAYS.findall(text_):
                    entry = options.get(flag)
                    if entry is None or "removed" in entry or entry.get("deprecated", {}).get("warning"):
                        continue
                    retired: dict[str, Any] = {"warning": text_}
                    if (new := replacement_in(text_)) and new.split()[0] != flag:
                        retired["replaced_by"] = {flag: new}
                    entry["deprecated"] = retired
                    entry["said_in"] = path
                    if path not in said:
                        said.append(path)
    return said


def _names(options: dict[str, dict[str, Any]], replacement: str) -> bool:
    """The replacement is an option of the release, and its value one of that option's literal choices (a release's
    own text can misspell the value: SGLang 0.3.6 names `--sampling-backend pytroch`)."""
    flag, _, value = replacement.replace("=", " ", 1).partition(" ")
    if "{" in flag:  # `--cuda-graph-backend-{decode,prefill}=disabled`: each expansion must be an option
        head, _, rest = flag.partition("{")
        inner, _, tail = rest.partition("}")
        return all(_names(options, f"{head}{part}{tail} {value}".strip()) for part in inner.split(","))
    flag = flag.split(".", 1)[0]  # `--logging-config.file`: a JSON field of one
    spec = options.get(flag)
    if spec is None:
        spec = next((s for s in options.values() if flag in (s.get("aliases") or ())), None)
    if spec is None:
        return False
    choices = spec.get("choices")
    return not value or value.startswith("<") or not isinstance(choices, list) or value in map(str, choices)


def dataclass_options(text: str, name: str, class_names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """`--field-name` for each field of these dataclasses (vLLM builds its newer CLIs from them)."""
    tree = parse(text, name)
    options: dict[str, dict[str, Any]] = {}
    found = classes(tree)
    for cls_name in class_names:
        cls = found.get(cls_name)
        if cls is None:
            continue
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                field = stmt.target.id
                if field.startswith("_"):
                    continue
                entry: dict[str, Any] = {}
                if stmt.value is not None:
                    value = _json_safe(literal(stmt.value))
                    if value is not UNREADABLE:
                        entry["default"] = value
                options.setdefault("--" + field.replace("_", "-"), entry)
    return options

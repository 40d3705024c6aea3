"""Read Python source without importing it: module-level literal tables, decorator arguments, class bases.

Only a small, safe subset of expressions is evaluated (literals, names bound earlier in the same
module, `**spread` of such dicts, `.items()`/`.keys()` and dict/list comprehensions over them with
simple `==`/`in` filters). Anything else is `UNREADABLE`, never guessed.
"""

from __future__ import annotations

import ast
from typing import Any

UNREADABLE = object()


class Unreadable(Exception):
    pass


def parse(text: str, name: str = "<source>") -> ast.Module:
    return ast.parse(text, filename=name)


def _eval(node: ast.AST, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_eval(e, env) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                spread = _eval(value, env)
                if not isinstance(spread, dict):
                    raise Unreadable("spread of a non-dict")
                out.update(spread)
            else:
                out[_eval(key, env)] = _eval(value, env)
        return out
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise Unreadable(f"name {node.id} not bound to a literal")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
        target = _eval(node.func.value, env)
        if isinstance(target, dict) and node.func.attr in ("items", "keys", "values"):
            return list(getattr(target, node.func.attr)())
        raise Unreadable("call")
    if isinstance(node, (ast.DictComp, ast.ListComp, ast.SetComp)):
        return _comprehension(node, env)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _eval(node.left, env), _eval(node.comparators[0], env)
        op = node.ops[0]
        if isinstance(op, ast.Eq):
            return left == right
        if isinstance(op, ast.NotEq):
            return left != right
        if isinstance(op, ast.In):
            return left in right
        if isinstance(op, ast.NotIn):
            return left not in right
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
        left, right = _eval(node.left, env), _eval(node.right, env)
        if isinstance(left, dict) and isinstance(right, dict):
            return {**left, **right}
        if isinstance(left, (list, tuple, str)) and type(left) is type(right):
            return left + right
    if isinstance(node, ast.JoinedStr):
        raise Unreadable("f-string")
    raise Unreadable(type(node).__name__)


def _bind(target: ast.AST, value: Any, env: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = list(value)
        if len(values) != len(target.elts):
            raise Unreadable("unpacking")
        for sub, item in zip(target.elts, values, strict=True):
            _bind(sub, item, env)
    else:
        raise Unreadable("target")


def _comprehension(node: ast.DictComp | ast.ListComp | ast.SetComp, env: dict[str, Any]) -> Any:
    if len(node.generators) != 1:
        raise Unreadable("nested comprehension")
    gen = node.generators[0]
    out_d: dict[Any, Any] = {}
    out_l: list[Any] = []
    for item in _eval(gen.iter, env):
        local = dict(env)
        _bind(gen.target, item, local)
        if all(_eval(cond, local) for cond in gen.ifs):
            if isinstance(node, ast.DictComp):
                out_d[_eval(node.key, local)] = _eval(node.value, local)
            else:
                out_l.append(_eval(node.elt, local))
    return out_d if isinstance(node, ast.DictComp) else out_l


def literal(node: ast.AST, env: dict[str, Any] | None = None) -> Any:
    """The node's value, or UNREADABLE."""
    try:
        return _eval(node, env or {})
    except (Unreadable, TypeError, ValueError):
        return UNREADABLE


def module_tables(tree: ast.Module) -> dict[str, Any]:
    """Every module-level `NAME = <readable expression>` (and annotated ones), in order; later ones see earlier."""
    env: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        else:
            continue
        result = literal(value, env)
        if result is not UNREADABLE:
            env[target] = result
    return env


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain (a call's callee, a decorator, a base class)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def calls(tree: ast.AST, suffix: str) -> list[ast.Call]:
    """Every call whose callee's dotted name ends with `suffix` (decorators included)."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and (dotted(node.func) or "").split(".")[-1] == suffix
    ]


def classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {stmt.name: stmt for stmt in tree.body if isinstance(stmt, ast.ClassDef)}


def imports(tree: ast.Module) -> dict[str, tuple[str, int, str]]:
    """Local name -> (module, relative level, imported name) for every `from X import Y` at any depth."""
    out: dict[str, tuple[str, int, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module or "", node.level, alias.name)
    return out

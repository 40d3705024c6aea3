"""vLLM: the model registry (registry.py's `_*_MODELS` tables), the parser registries and the CLI options."""

from __future__ import annotations

import ast
from typing import Any

from pyread import classes, dotted, imports, module_tables, parse
from readers import (
    argparse_options,
    dataclass_options,
    real_replacements,
    registered_names,
    table_keys,
    warned_in_code,
)
from tree import Tree
from vllm_kernels import kv_cache_dtypes

MODELS = "vllm/model_executor/models/"
# interface classes (vllm/model_executor/models/interfaces.py) -> what the registry says of a model
TRAITS = {
    "SupportsMultiModal": "multimodal",
    "IsHybrid": "hybrid",
    "IsAttentionFree": "attention_free",
    "HasInnerState": "inner_state",
    "SupportsPP": "pipeline_parallel",
    "SupportsLoRA": "lora",
    "MixtureOfExperts": "moe",
    "SupportsTranscription": "transcription",
    "SupportsEagle3": "eagle3",
}
UNION_TABLES = ("_VLLM_MODELS", "_MODELS")


def _kind(table: str) -> str:
    return table.strip("_").removesuffix("_MODELS").lower() or "models"


def _module_path(module: str) -> str:
    return (module.replace(".", "/") if "." in module else MODELS + module) + ".py"


class _Classes:
    """Resolves a model class's interfaces through its bases, across the models' modules (parsed once)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.modules: dict[str, tuple[dict[str, ast.ClassDef], dict[str, tuple[str, int, str]]] | None] = {}

    def _module(self, path: str) -> tuple[dict[str, ast.ClassDef], dict[str, tuple[str, int, str]]] | None:
        if path not in self.modules:
            text = self.tree.read(path)
            if text is None and path.endswith(".py"):
                text = self.tree.read(path[:-3] + "/__init__.py")
            if text is None:
                self.modules[path] = None
            else:
                tree = parse(text, path)
                self.modules[path] = (classes(tree), imports(tree))
        return self.modules[path]

    def bases(self, path: str, name: str, depth: int = 0) -> set[str] | None:
        """Every base-class name of `name` (transitively); None: the class is not in the module as written."""
        module = self._module(path)
        if module is None or depth > 8:
            return None
        found, imported = module
        cls = found.get(name)
        if cls is None:
            if name in imported:  # re-exported from another module
                target = self._resolve(path, imported[name])
                return self.bases(target, imported[name][2], depth + 1) if target else None
            return None
        out: set[str] = set()
        for base in cls.bases:
            base_name = (dotted(base.value if isinstance(base, ast.Subscript) else base) or "").split(".")[-1]
            if not base_name:
                continue
            out.add(base_name)
            if base_name in found and base_name != name:
                out |= self.bases(path, base_name, depth + 1) or set()
            elif base_name in imported:
                target = self._resolve(path, imported[base_name])
                if (
                    target
                    and target.startswith(MODELS)
                    and not target.endswith(("interfaces.py", "interfaces_base.py"))
                ):
                    out |= self.bases(target, imported[base_name][2], depth + 1) or set()
        return out

    @staticmethod
    def _resolve(path: str, imp: tuple[str, int, str]) -> str | None:
        module, level, _ = imp
        if level == 0:
            return module.replace(".", "/") + ".py" if module.startswith("vllm.") else None
        folder = path.rsplit("/", level)[0]
        return f"{folder}/{module.replace('.', '/')}.py" if module else None


def registry(tree: Tree) -> tuple[dict[str, Any], str]:
    """{entries: architecture -> {module, class, kinds, traits}, removed?, plugins?}; and the file read."""
    path = tree.first(MODELS + "registry.py", MODELS + "__init__.py")
    if path is None:
        raise LookupError("no model registry (vllm/model_executor/models/registry.py or __init__.py)")
    tables = module_tables(parse(tree.read(path) or "", path))

    def is_table(value: Any) -> bool:
        return (
            isinstance(value, dict)
            and bool(value)
            and all(isinstance(v, tuple) and len(v) == 2 and all(isinstance(p, str) for p in v) for v in value.values())
        )

    model_tables = {name: value for name, value in tables.items() if name.endswith("_MODELS") and is_table(value)}
    union_name = next((n for n in UNION_TABLES if n in model_tables), None)
    union = model_tables.pop(union_name) if union_name else {}
    if not union:
        for value in model_tables.values():
            union.update(value)
    if not union:
        raise LookupError(f"{path}: no readable *_MODELS table")
    removed = tables.get("_PREVIOUSLY_SUPPORTED_MODELS")
    plugins = tables.get("_OOT_SUPPORTED_MODELS")
    extras = {
        "removed": removed if isinstance(removed, dict) else None,  # arch -> the last release that loaded it
        "plugins": plugins if isinstance(plugins, dict) else None,  # arch -> the out-of-tree plugin's URL
    }
    resolver = _Classes(tree)
    out: dict[str, Any] = {}
    for arch, (module, cls) in sorted(union.items()):
        kinds = sorted(_kind(name) for name, table in model_tables.items() if arch in table)
        bases = resolver.bases(_module_path(module), cls)
        traits = None if bases is None else sorted({TRAITS[b] for b in bases if b in TRAITS})
        out[arch] = {"module": module, "class": cls, "kinds": kinds, "traits": traits}
    return {"entries": out, **{k: v for k, v in extras.items() if v}}, path


def _parsers(tree: Tree, folders: tuple[str, ...], table: str) -> tuple[list[str] | None, str | None]:
    folder = next((f for f in folders if tree.names(f)), None)
    if folder is None:
        return None, None
    names = set(registered_names(tree, folder, "register_module"))
    names |= set(registered_names(tree, folder, "register_lazy_module"))
    init = tree.read(folder + "__init__.py") or ""
    names |= set(table_keys(init, folder + "__init__.py", table) or [])
    return sorted(names), folder


def tool_parsers(tree: Tree) -> tuple[list[str] | None, str | None]:
    return _parsers(tree, ("vllm/tool_parsers/", "vllm/entrypoints/openai/tool_parsers/"), "_TOOL_PARSERS_TO_REGISTER")


def reasoning_parsers(tree: Tree) -> tuple[list[str] | None, str | None]:
    folders = ("vllm/reasoning/", "vllm/entrypoints/openai/reasoning_parsers/")
    return _parsers(tree, folders, "_REASONING_PARSERS_TO_REGISTER")


CLI_FILES = ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/common/cli_args.py")
FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")


def flags(tree: Tree) -> tuple[dict[str, Any], list[str]]:
    options: dict[str, Any] = {}
    read: list[str] = []
    for path in CLI_FILES:
        text = tree.read(path)
        if text is None:
            continue
        read.append(path)
        for flag, entry in {**argparse_options(text, path), **dataclass_options(text, path, FRONTEND_CLASSES)}.items():
            options.setdefault(flag, entry)
    if not options:
        raise LookupError("no CLI option builder (vllm/engine/arg_utils.py)")
    options.setdefault("--help", {"takes_value": False})  # argparse's own
    kv = options.get("--kv-cache-dtype")
    if kv is not None and "choices" not in kv:  # built from the CacheDType Literal, which get_kwargs makes choices of
        found, _ = kv_cache_dtypes(tree)
        if found is not None:
            kv["choices"] = found["choices"]
            read.append(found["from"].split(":", 1)[0])
    read += [p for p in warned_in_code(tree, CLI_FILES, options) if p not in read]
    return dict(sorted(real_replacements(options).items())), read

#!/usr/bin/env python3
"""Write tests/data/defaults: one config.json per decoder class of the newest harvested vLLM registry that holds no
real checkpoint config elsewhere in tests/data, made from the class's own configuration code with its defaults.

For each class the script finds the configuration class that code builds it from, first in transformers (its auto
mappings name the model_type of every model class it ships; the config class of that model_type, instantiated with
no arguments, carries the defaults of `configuration_<type>.py`, which mirror a reference checkpoint), then in vLLM
(the configuration classes the class's model file imports from `vllm/transformers_utils/configs/`, or the class
vLLM's registry maps an alias to). It writes `to_dict()` with `architectures` set to the class, and records in
`tests/data/defaults/SOURCES.json` where every file came from; classes no code gives a config for (their config
lives only with the checkpoint, trust-remote-code) are listed there with the reason.

It needs transformers (no torch) and an unpacked vLLM wheel of the harvested release:

    python3 -m venv /tmp/tf && /tmp/tf/bin/pip install transformers
    pip download vllm==0.33.0 --no-deps -d /tmp/vllm && unzip -q /tmp/vllm/vllm-*.whl 'vllm/*.py' -d /tmp/vllm/x
    /tmp/tf/bin/python scripts/default_configs.py --vllm /tmp/vllm/x
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
import shutil
import sys
import types
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
OUT = DATA / "defaults"
HARVEST = ROOT / "generator" / "data" / "harvest" / "vllm"
DECODER_KINDS = {"text_generation", "multimodal", "transformers_supported"}
# configuration classes a model file imports that are not the model's own
NOT_MODEL = re.compile(
    r"^(Pre[Tt]rained|Vllm|Cache|Quantization|Model|LoRA|Lora|MultiModal|Parallel|Speculative|Compilation|Scheduler"
    r"|Device|Load|KVTransfer|Pooler|Observability|Attention|Generation|Fused|Kernel|Structured|Decoding|Dense"
    r"|Linear|Mamba|Rotary|Rope|Base|Vision|Audio|Siglip|Clip|CLIP|Whisper|Qwen2Audio|Pixtral|Radio|MoonViT"
    r"|PerceptionEncoder|Idefics|Intern.*Vision|.*Vision.*|.*Audio.*|.*Encoder.*|.*Projector.*|.*MTP.*)"
)


def _newest_release() -> str:
    def key(name: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", name.removesuffix(".json"))[:3])

    releases = [p.name for p in HARVEST.glob("*.detail.json")]
    return max(releases, key=key).removesuffix(".detail.json")


def _have_real() -> set[str]:
    """Classes tests/data already holds a checkpoint's own config.json for (not these defaults)."""
    have = set()
    for path in DATA.rglob("config.json"):
        if OUT in path.parents:
            continue
        try:
            archs = json.loads(path.read_text()).get("architectures") or []
        except (OSError, ValueError, AttributeError):
            continue
        if archs and isinstance(archs[0], str):
            have.add(archs[0])
    return have


def _transformers_types() -> dict[str, list[str]]:
    """Model class name → the model_types transformers' auto mappings give it (read from modeling_auto.py's
    source: without torch the module is a stub)."""
    import transformers

    source = Path(transformers.__file__).parent / "models" / "auto" / "modeling_auto.py"
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source.read_text())):
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        if not node.targets[0].id.endswith("_MAPPING_NAMES") or not isinstance(node.value, ast.Call):
            continue
        try:
            pairs = ast.literal_eval(node.value.args[0])
        except (ValueError, IndexError, SyntaxError):
            continue
        for model_type, names in pairs:
            for name in names if isinstance(names, (list, tuple)) else [names]:
                if model_type not in found.setdefault(name, []):
                    found[name].append(model_type)
    return found


def _vllm_modules(vllm: Path) -> None:
    """Make vLLM's configuration modules importable without running vllm/__init__.py (which needs torch)."""
    for name in ("vllm", "vllm.transformers_utils", "vllm.transformers_utils.configs", "vllm.models"):
        module = types.ModuleType(name)
        module.__path__ = [str(vllm / name.replace(".", "/"))]
        sys.modules[name] = module
    sys.path.insert(0, str(vllm))


def _vllm_config_classes(vllm: Path) -> dict[str, str]:
    """vLLM's own configuration class name → the module that defines it (configs/__init__.py's table)."""
    tree = ast.parse((vllm / "vllm" / "transformers_utils" / "configs" / "__init__.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_CLASS_TO_MODULE":
            table = ast.literal_eval(node.value) if node.value else {}
            return {k: v for k, v in table.items() if v != "transformers"}
    return {}


def _model_file(vllm: Path, module: str) -> Path | None:
    if module.startswith("vllm.models."):
        package = vllm / module.replace(".", "/")
        return package / "model.py" if (package / "model.py").exists() else package / "__init__.py"
    path = vllm / "vllm" / "model_executor" / "models" / f"{module}.py"
    return path if path.exists() else None


def _imported_configs(path: Path) -> list[str]:
    """Configuration class names a model file (or its package) imports."""
    files = sorted(path.parent.rglob("*.py")) if path.parent.name != "models" else [path]
    names: list[str] = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.endswith("Config") and not NOT_MODEL.match(alias.name) and alias.name not in names:
                        names.append(alias.name)
    return names


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _closest(arch: str, names: list[str]) -> str | None:
    """The configuration class whose name shares the longest run of characters with the model class's name (a
    whole-model config before its text part: MiniMaxM3Config before MiniMaxM3TextConfig)."""

    def shared(name: str) -> tuple[int, int]:
        a, b = _norm(arch), _norm(name.removesuffix("Config"))
        run = max((k for i in range(len(b)) for k in range(1, len(b) - i + 1) if b[i : i + k] in a), default=0)
        return run, -len(b)

    ranked = sorted(names, key=shared, reverse=True)
    return ranked[0] if ranked and shared(ranked[0])[0] >= 4 else None


def _from_transformers(model_type: str) -> tuple[Any, str]:
    import transformers

    cls = transformers.AutoConfig.for_model(model_type).__class__
    return cls(), f"transformers {transformers.__version__}, {cls.__name__}(): the defaults of {cls.__module__}"


def _resolve(arch: str, entry: dict[str, Any], tf_types: dict[str, list[str]], vllm: Path) -> tuple[Any, str]:
    """(a default config instance, where it came from) or raise LookupError with the reason."""
    import transformers

    module = str(entry.get("module", ""))
    served = f" (vLLM 0.33.0 serves {arch} with {module}.{entry.get('class')})"
    for name in (arch, entry.get("class", arch)):
        if name in tf_types:
            # a causal-LM class's text config where transformers has both (Gemma3nForCausalLM: gemma3n_text)
            config, where = _from_transformers(
                tf_types[name][-1] if name.endswith("ForCausalLM") else tf_types[name][0]
            )
            return config, where + (served if name != arch else "")
    path = _model_file(vllm, module)
    own = _vllm_config_classes(vllm)
    if path is not None:
        # the classes the model file imports, and those of vLLM's configuration module named like the model's
        stem = module.rsplit(".", 1)[-1]
        named = [c for c, m in own.items() if m.rsplit(".", 1)[-1] in (stem, "configs") and stem in m]
        chosen = _closest(arch, _imported_configs(path) + [c for c in named if not NOT_MODEL.match(c)])
        if chosen in own:
            cls = getattr(importlib.import_module(own[chosen]), chosen)
            where = own[chosen].replace(".", "/") + ".py"
            return cls(), f"vLLM 0.33.0 {where}, {chosen}(): the class {path.relative_to(vllm)} reads"
        if chosen and hasattr(transformers, chosen):
            cls = getattr(transformers, chosen)
            return cls(), (
                f"transformers {transformers.__version__}, {chosen}(): the defaults of {cls.__module__}, the class "
                f"vLLM 0.33.0's {path.relative_to(vllm)} reads"
            )
    # an alias vLLM's registry serves with another class's code (LLaMAForCausalLM → llama.LlamaForCausalLM)
    mapping = transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES
    if not NOT_MODEL.match(mapping.get(module.rsplit(".", 1)[-1], "Vision")):
        config, where = _from_transformers(module.rsplit(".", 1)[-1])
        return config, f"{where}, transformers' class for model_type {module.rsplit('.', 1)[-1]}{served}"
    raise LookupError(
        f"no configuration class in transformers or vLLM 0.33.0: {path.relative_to(vllm) if path else module} "
        "reads a config only the checkpoint ships (trust-remote-code)"
    )


def _states_a_language_model(data: dict[str, Any]) -> bool:
    """Whether a config of defaults states a language model's size: a width and a layer count, at the top or in
    the nested text config recipegen reads (text_config, llm_config, language_config, wrapped_model_config, an
    omni model's thinker_config)."""
    parts = [data]
    for key in ("thinker_config", "text_config", "llm_config", "language_config", "wrapped_model_config"):
        for part in list(parts):
            if isinstance(part.get(key), dict):
                parts.append(part[key])
    width = ("hidden_size", "n_embd", "d_model")
    depth = (
        "num_hidden_layers",
        "n_layer",
        "num_layers",
        "n_layers",
        "layers_block_type",
        "layer_types",
        "decoder_layers",
    )
    return any(any(p.get(k) for k in width) and any(p.get(k) for k in depth) for p in parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--vllm", type=Path, required=True, help="an unpacked vLLM wheel (the folder holding vllm/)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    _vllm_modules(args.vllm)
    release = _newest_release()
    registry = json.loads((HARVEST / f"{release}.detail.json").read_text())["architectures"]
    tf_types = _transformers_types()
    have = _have_real()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    sources: dict[str, Any] = {"vllm": release, "transformers": transformers.__version__, "classes": {}}
    for arch, entry in sorted(registry.items()):
        if not set(entry.get("kinds", ())) & DECODER_KINDS or arch in have:
            continue
        try:
            config, where = _resolve(arch, entry, tf_types, args.vllm)
            data = config.to_dict()
        except LookupError as exc:
            sources["classes"][arch] = {"config": None, "why": str(exc)}
            continue
        except Exception as exc:  # a configuration class whose defaults do not build: say so, keep going
            sources["classes"][arch] = {"config": None, "why": f"its defaults do not build: {exc}"[:300]}
            continue
        if data.get("is_encoder_decoder") is True:  # Whisper, BART: an encoder beside the decoder, not a decoder
            layers = ", ".join(f"{k} {data[k]}" for k in ("encoder_layers", "decoder_layers") if k in data)
            why = f"{where}: an encoder-decoder model ({layers or 'is_encoder_decoder true'}), not a decoder class"
            sources["classes"][arch] = {"config": None, "why": why}
            continue
        if not _states_a_language_model(data):
            sources["classes"][arch] = {
                "config": None,
                "why": f"{where}: its defaults state no language model (no layer count or width; the text model "
                "is named or built only with a checkpoint)",
            }
            continue
        data["architectures"] = [arch]
        folder = OUT / arch
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
        sources["classes"][arch] = {"config": f"{arch}/config.json", "from": where}
    (OUT / "SOURCES.json").write_text(json.dumps(sources, indent=1, sort_keys=True) + "\n")
    made = sum(1 for v in sources["classes"].values() if v["config"])
    print(f"{made} of {len(sources['classes'])} classes: a config of defaults written to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

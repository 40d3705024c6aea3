"""The catalog's known defects that the run a log describes is in, read from its configuration, not its errors.

A defect that gives silent wrong output prints nothing to match; but the log names the release (its version line),
the GPU (its device line), the model, and echoes the configuration (log_config.py, and the command it echoes). Every
defect of that release whose selectors (GPU, model, architecture, checkpoint, MoE, host CPU) and configuration (KV
dtype, tensor/pipeline/data/expert parallel, decode context parallel, speculative method and draft tokens, CUDA
graphs, context, concurrency, host offload) all match is reported with its fix. A selector the log does not settle
(no GPU or model named) leaves the defect undecided: it is counted and the hint that decides it is named, never
reported as a hit.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..catalog.index import Catalog
from ..catalog.schema import Engine, Model, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build, Defect
from ..catalog.vocabulary import ParsedArgs, Vocabulary, parse_args, takes_value, vocabulary
from ..errors import RecipegenError
from ..frozen import frozen
from ..plan.defects import in_scope, scope_text
from ..plan.types import Layout, Settings
from .log_config import LogConfig, as_argv, read_config, words
from .log_facts import LogFacts

_DTYPES: dict[str, KvDtype] = {"bfloat16": "bf16", "float16": "fp16"}


@frozen
class ConfigDefect:
    """A known defect of the log's release that its configuration is in."""

    defect: Defect
    build: str  # the catalog build the log's version line names
    matched: str  # what in the log matched, in words

    @property
    def fix(self) -> str:
        d = self.defect
        if d.workaround:
            return d.workaround
        return f"use {d.fixed_in} or later" if d.fixed_in else "none known yet: use another build (recipegen history)"


@frozen
class ConfigReading:
    """The configuration the log shows, and the defects of its release it is in."""

    build: str | None = None
    shown: str = ""  # the printed configuration in a few words
    sources: tuple[str, ...] = ()
    kv_note: str | None = None  # how an `auto` KV cache was read
    hits: tuple[ConfigDefect, ...] = ()
    undecided: tuple[tuple[str, str], ...] = ()  # (defect id, what the log would have to name)


def _command_args(catalog: Catalog, facts: LogFacts, engine: Engine) -> tuple[str, ...]:
    """The arguments of the engine command the log echoes (none when it echoes none, or another engine's)."""
    if not facts.command:
        return ()
    from .invocation import find_invocation

    try:
        invocation = find_invocation(catalog, facts.command, "the command in the log")
    except RecipegenError:
        return ()
    return invocation.args if invocation.engine.id == engine.id else ()


def _parsed(engine: Engine, build: Build, config: LogConfig, command: tuple[str, ...]) -> tuple[ParsedArgs, Vocabulary]:
    """The echoed command and the printed configuration as one command line; what the engine printed wins."""
    from .lint import _default_build

    vocab = vocabulary(build.cli_reference or _default_build(engine).cli_reference or "")
    known = frozenset(vocab.options)
    switches = frozenset(flag for flag, spec in vocab.options.items() if not takes_value(vocab, flag, spec))
    typed = parse_args(vocab, list(command))
    printed = parse_args(vocab, as_argv(config, known, switches))
    merged = ParsedArgs(
        values={**typed.values, **printed.values},
        spellings={**typed.spellings, **printed.spellings},
        positionals=typed.positionals,
        issues=(),
    )
    return merged, vocab


def _kv(
    engine: Engine, settings: Settings, config: LogConfig, given: str | None, stated: bool
) -> tuple[tuple[KvDtype | None, ...], str | None]:
    """The dtypes the run's KV cache may be in: the ones the configuration names (`given`, the value of the KV flag),
    else for vLLM and SGLang `auto` — the model dtype the log prints, or the engine's default; llama.cpp's comes from
    its KV-cache line only. (None,): not known."""
    if settings.kv_fixed and given != "auto":
        return settings.kv_fixed, None
    if given and given != "auto":
        return (None,), None  # a dtype the catalog does not name (nvfp4 …): no defect names it either
    if engine.id not in ("vllm", "sglang") or not stated:
        return (None,), None
    if config.dtype in _DTYPES:
        return (_DTYPES[config.dtype],), f"KV cache auto: the model dtype {config.dtype} the log prints"
    return (engine.default_kv_dtype,), f"KV cache auto: taken as {engine.default_kv_dtype}, the engine's default"


def _variant(model: Model | None, facts: LogFacts, config: LogConfig) -> Variant | None:
    """The checkpoint the log loads: a variant whose repo or file the model path names."""
    if model is None:
        return None
    said = (facts.model_text or "").casefold()
    named = [
        (len(v.repo), v)
        for v in model.variants
        if v.repo.casefold() in said
        or re.search(rf"(?<![\w.-]){re.escape(v.repo.rsplit('/', 1)[-1].casefold())}(?![\w.-])", said)
        or (v.file and v.file.casefold() in said)
    ]
    if named:
        return max(named, key=lambda pair: pair[0])[1]
    quant = (config.value("quantization") or "").casefold()
    by_quant = [v for v in model.variants if quant and v.quant.casefold() == quant]
    return by_quant[0] if len(by_quant) == 1 else None


def _selectors(
    defect: Defect, facts: LogFacts, model: Model | None, variant: Variant | None, same_arch: frozenset[str]
) -> tuple[bool, list[str], list[str]]:
    """Whether the defect's GPU/model selectors can match the log (False: ruled out), what matched in words and what
    the log leaves unsaid. `same_arch`: the catalog models of the architecture the log names (when it names no model
    the catalog knows)."""
    said: list[str] = []
    missing: list[str] = []
    # only a GPU the log's device line or --gpu names: a bare "sm_120" in a log may be a kernel's, not the run's
    cc = facts.hardware.compute_capability if facts.hardware is not None and facts.gpu_named else None
    if defect.sm is not None:
        if cc is None:
            missing.append("--gpu")
        elif cc not in defect.sm:
            return False, said, missing
        else:
            said.append(cc.sm)
    if defect.host_arch is not None:
        if facts.hardware is None:
            missing.append("--gpu")
        elif facts.hardware.host_arch[0] not in defect.host_arch:
            return False, said, missing
    # a model the log names that the catalog does not know is none of its models, unless the architecture the log
    # prints is one of theirs (a local folder of a catalog model under another name)
    unknown_model = model is None and bool(facts.model_text) and not (facts.model_text or "").startswith("--model ")
    if defect.models is not None:
        if unknown_model and not same_arch & set(defect.models):
            return False, said, missing
        if model is None:
            missing.append("--model")
        elif model.id not in defect.models:
            return False, said, missing
        else:
            said.append(model.name)
    if defect.architectures is not None:
        names = {facts.architecture} | ({model.architecture, model.gguf_arch} if model else set())
        names.discard(None)
        if not names:
            missing.append("--model")
        elif not names & set(defect.architectures):
            return False, said, missing
        else:
            said.append(next(n for n in defect.architectures if n in names))
    if (defect.ops is not None or defect.moe is not None) and model is None:
        missing.append("--model")
    elif model is not None and not _model_fits(defect, model):
        return False, said, missing
    if defect.quants is not None:
        if variant is None:
            missing.append("--model ORG/NAME (the checkpoint)")
        elif variant.quant not in defect.quants:
            return False, said, missing
        else:
            said.append(variant.quant)
    return True, said, missing


def _model_fits(defect: Defect, model: Model) -> bool:
    if defect.ops is not None and not {n.op for n in model.needs} & set(defect.ops):
        return False
    return defect.moe is None or (model.moe is not None) == defect.moe


def read_config_defects(catalog: Catalog, facts: LogFacts, text: str) -> ConfigReading:
    """The configuration the log prints and the defects of its release it is in (nothing without a release: a
    verdict belongs to a build)."""
    engine = catalog.engines.get(facts.engine or "")
    if engine is None:
        return ConfigReading()
    config = read_config(text, engine.id)
    command = _command_args(catalog, facts, engine)
    if facts.build is None:
        return ConfigReading(shown=words(config), sources=config.sources)
    build = catalog.build(facts.build)[1]
    from .findings import worked_around
    from .lint import command_settings

    parsed, vocab = _parsed(engine, build, config, command)
    gpus = max(1, facts.tp or 1) * max(1, facts.pp or 1)
    settings, _, _ = command_settings(engine, parsed, vocab, {}, gpus)
    if settings.context is None and facts.kv_value("context"):
        settings = replace(settings, context=int(facts.kv_value("context") or 0) or None)
    stated = bool(config.sources or command)
    given = parsed.get(vocab, engine.flags.kv_cache_dtype) if engine.flags.kv_cache_dtype else None
    kvs, kv_note = _kv(engine, settings, config, given, stated)
    layout = Layout(gpus, max(1, facts.nodes or 1))
    model = facts.model
    variant = _variant(model, facts, config)
    hits: list[ConfigDefect] = []
    undecided: list[tuple[str, str]] = []
    cc = facts.hardware.compute_capability if facts.hardware is not None else None
    same_arch = frozenset(
        m.id for m in catalog.models.values() if model is None and facts.architecture in (m.architecture, m.gguf_arch)
    )
    for defect in build.defects:
        if defect.log_line and defect.log_line in text:
            continue  # its own line is in the log: the fingerprint reports it
        possible, said, missing = _selectors(defect, facts, model, variant, same_arch)
        if not possible:
            continue
        if defect.scoped:
            context = model.max_context if model else None
            if not stated or not any(in_scope(defect, settings, kv, layout, context) for kv in kvs):
                continue
            said.append(scope_text(defect))
        if missing:
            undecided.append((defect.id, " and ".join(dict.fromkeys(missing))))
            continue
        if cc is not None and worked_around(defect, cc, parsed, vocab, {}):
            continue
        matched = ", ".join([f"{engine.name} {build.id}", *said])
        hits.append(ConfigDefect(defect, build.id, matched))
    hits.sort(key=lambda h: (h.defect.symptom != "wrong-output", h.defect.id))
    return ConfigReading(build.id, words(config), config.sources, kv_note, tuple(hits), tuple(undecided))

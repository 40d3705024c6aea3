"""`recipegen diagnose`: match an engine log against known failure fingerprints (recipes/fingerprints/).

Public API (also used by `recipegen up` on a failed container's log tail):
  diagnose_log(catalog, text, hints) -> Diagnosis
  format_diagnosis(d) -> str        one screen of text
  diagnosis_json(d) -> dict         schema recipegen.diagnosis/1

Besides the failure, the log often says which engine version, model and GPU it ran (engines print them at
start-up); when it does, the diagnosis resolves that request and shows the plan that runs.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any

from ..catalog.index import Catalog
from ..catalog.schema import Build, Defect, Fingerprint, Hardware, Model
from ..errors import RecipegenError
from ..frozen import frozen

SCHEMA = "recipegen.diagnosis/1"
MAX_CHARS = 4 * 1024 * 1024  # the tail that is read: start-up lines plus the failure fit many times over
SHOWN_LINES = 12
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\^\[\[[0-9;]*m")
_ERRORISH = re.compile(r"error|exception|traceback|failed|assert|fatal|abort", re.IGNORECASE)


@frozen
class Hints:
    """What the user adds when the log does not say it (diagnose --gpu/--model/--gpus)."""

    gpu: str | None = None
    model: str | None = None
    gpus: int | None = None


@frozen
class Match:
    fingerprint: Fingerprint
    line_number: int  # 1-based, in the text given
    line: str
    groups: dict[str, str]

    def fill(self, text: str) -> str:
        """The fingerprint's prose with {group} replaced by what the log said."""

        def value(m: re.Match[str]) -> str:
            return self.groups.get(m.group(1)) or "not in the log"

        return printable(re.sub(r"\{(\w+)\}", value, text))


@frozen
class LogFacts:
    """What the log says about the run, each with the line it came from."""

    engine: str | None = None
    version: str | None = None
    build: str | None = None  # a catalog build id
    model: Model | None = None
    model_text: str | None = None
    hardware: Hardware | None = None
    gpu_text: str | None = None
    tp: int | None = None
    notes: tuple[str, ...] = ()


@frozen
class Diagnosis:
    matches: tuple[Match, ...]
    facts: LogFacts
    looked_at: tuple[tuple[int, str], ...]  # the lines shown when nothing matched
    plan_summary: tuple[str, ...] = ()  # the plan that runs, when the log names model and GPU
    plan_json: dict[str, Any] | None = field(default=None)

    @property
    def known(self) -> bool:
        return bool(self.matches)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def _in_range(version: str, bounds: str) -> bool:
    have = _version_tuple(version)
    for term in bounds.split(","):
        op, number = re.match(r"\s*(>=|<=|==|>|<)\s*(.+)", term).groups()  # type: ignore[union-attr]
        want = _version_tuple(number)
        size = max(len(have), len(want))
        a, b = have + (0,) * (size - len(have)), want + (0,) * (size - len(want))
        ok = {">=": a >= b, "<=": a <= b, "==": a == b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# what the log says about the run

_ENGINE_SIGNS = (
    ("vllm", re.compile(r"vllm|EngineCore|APIServer pid", re.IGNORECASE)),
    ("sglang", re.compile(r"sglang|launch_server", re.IGNORECASE)),
    ("llama.cpp", re.compile(r"llama_model_load|llama-server|ggml_cuda_init|llama_model_loader")),
)
_VERSIONS = {
    "vllm": (
        re.compile(r"LLM engine \(v(\d+\.\d+\.\d+[\w.+-]*)\)"),
        re.compile(r"vLLM (?:API server )?[Vv]ersion\s*:?\s*v?(\d+\.\d+\.\d+[\w.+-]*)"),
        re.compile(r"vllm/vllm-openai:v(\d+\.\d+\.\d+)"),
        re.compile(r"\bvllm(?:==|:\s*[Vv]?)(\d+\.\d+\.\d+)"),
    ),
    "sglang": (
        re.compile(r"lmsysorg/sglang:v(\d+\.\d+\.\d+)"),
        re.compile(r"\bsglang(?:==|:\s*v?| version:?\s*v?)(\d+\.\d+\.\d+[\w.+-]*)", re.IGNORECASE),
    ),
    "llama.cpp": (re.compile(r"build: \d+ \(([0-9a-f]{7,})\)"),),
}
_MODEL_FIELDS = (
    re.compile(r"\bmodel='([^']+)'"),
    re.compile(r"\bmodel_path='([^']+)'"),
    re.compile(r"--model(?:-path)?[ =]+['\"]?([^\s'\"\\]+)"),
    re.compile(r"\b(?:vllm|sglang) serve\s+([^\s\\-][^\s\\]*)"),
    re.compile(r"Starting to load model ([^\s.]+(?:\.[^\s.]+)*?)\.{0,3}$", re.MULTILINE),
    re.compile(r"loading model '([^']+)'"),
)
_GPU_FIELDS = (
    re.compile(r"Device \d+: (NVIDIA [^,\n]+)"),
    re.compile(r"GPU [\d,]+: (NVIDIA [^\n(]+)"),
    re.compile(r"GPU:\s*(?:\d+\s*[x×]\s*)?(NVIDIA [^\n(,]+)"),
    re.compile(r"(NVIDIA [A-Z][\w-]*(?: [\w-]+){0,3})"),
)
_CC = re.compile(r"compute capability:?\s*(\d+\.\d+)|\b(sm_?\d{2,3})\b", re.IGNORECASE)
_TP = re.compile(r"tensor_parallel_size=(\d+)|--tensor-parallel-size[ =](\d+)|\btp_size=(\d+)|--tp(?:-size)?[ =](\d+)")


def _names_in(text: str, names: dict[str, Any]) -> Any:
    """The catalog entry whose name appears first in `text` (longest name on a tie), or None."""
    best: tuple[int, int, Any] | None = None
    folded = text.casefold()
    for name, entry in names.items():
        for m in re.finditer(r"(?<![\w.])" + re.escape(name) + r"(?![\w.]|-\d)", folded):
            key = (m.start(), -len(name), entry)
            if best is None or key[:2] < best[:2]:
                best = key
            break
    return best[2] if best else None


def _model_names(catalog: Catalog) -> dict[str, Model]:
    names: dict[str, Model] = {}
    for model in catalog.models.values():
        for name in (model.id, model.name, *model.aliases):
            names[name.casefold()] = model
        for variant in model.variants:
            names[variant.repo.casefold()] = model
            names.setdefault(variant.repo.rsplit("/", 1)[-1].casefold(), model)
    return names


def _hardware_names(catalog: Catalog) -> dict[str, Hardware]:
    names: dict[str, Hardware] = {}
    for hw in catalog.hardware.values():
        for name in (hw.id, hw.name, *hw.aliases):
            names[name.casefold()] = hw
    return names


def _model_from(catalog: Catalog, value: str) -> Model | None:
    from ..catalog.names import find_model
    from ..checkpoint.inference import infer

    choice = find_model(catalog, value)
    if choice is not None:
        return choice.model
    tail = value.rstrip("/")
    for candidate in ("/".join(tail.split("/")[-2:]), tail.rsplit("/", 1)[-1]):
        try:  # a quant or mirror of a known family, from the name alone (a log is read offline)
            named = infer(catalog, candidate)
        except RecipegenError:
            named = None
        if named is not None:
            return named.model
    found: Model | None = _names_in(value, _model_names(catalog))
    return found


def read_facts(catalog: Catalog, text: str, hints: Hints) -> LogFacts:
    from ..catalog.names import resolve_gpu

    notes: list[str] = []
    engine = next((name for name, sign in _ENGINE_SIGNS if sign.search(text)), None)
    version = None
    for pattern in _VERSIONS.get(engine or "", ()):
        m = pattern.search(text)
        if m:
            version = m.group(1)
            break
    build = None
    if engine is not None and version is not None and engine in catalog.engines:
        from ..catalog.names import resolve_user_build

        try:
            choice = resolve_user_build(catalog, f"{engine}=={version}")
            build = choice.build_id
            if catalog.build(build)[1].version != version:
                notes.append(choice.how)
        except RecipegenError as exc:
            notes.append(f"{exc.message.removeprefix(f'--build {engine}=={version}: ')}; plans use the builds it knows")
    model, model_text = None, None
    if hints.model:
        from ..checkpoint.anymodel import resolve_any

        model, model_text = resolve_any(catalog, hints.model).model, f"--model {hints.model}"
    else:
        for pattern in _MODEL_FIELDS:
            for m in pattern.finditer(text):
                found = _model_from(catalog, m.group(1))
                if found is not None:
                    model, model_text = found, m.group(1)
                    break
                model_text = model_text or m.group(1)
            if model is not None:
                break
        if model is None:
            model = _names_in(text, _model_names(catalog))
            model_text = model.name if model is not None else model_text
    hardware, gpu_text = None, None
    if hints.gpu:
        hardware, gpu_text = resolve_gpu(catalog, hints.gpu).hardware, f"--gpu {hints.gpu}"
    else:
        names = _hardware_names(catalog)
        for pattern in _GPU_FIELDS:
            for m in pattern.finditer(text):
                found_hw: Hardware | None = _names_in(m.group(1), names)
                gpu_text = gpu_text or m.group(1).strip()
                if found_hw is not None:
                    hardware, gpu_text = found_hw, m.group(1).strip()
                    break
            if hardware is not None:
                break
        if hardware is None:
            m = _CC.search(text)
            if m:
                cc_text = m.group(1) or m.group(2)
                try:
                    hardware, gpu_text = resolve_gpu(catalog, cc_text).hardware, cc_text
                except (RecipegenError, ValueError):
                    gpu_text = cc_text
    tp = None
    m = _TP.search(text)
    if m:
        tp = int(next(g for g in m.groups() if g))
    return LogFacts(engine, version, build, model, model_text, hardware, gpu_text, tp, tuple(notes))


# ---------------------------------------------------------------------------------------------
# matching


def _applies(fp: Fingerprint, facts: LogFacts) -> bool:
    if fp.engines is not None and facts.engine is not None and facts.engine not in fp.engines:
        return False
    return not (
        fp.versions
        and facts.version
        and facts.engine in (fp.engines or [])
        and not _in_range(facts.version, fp.versions)
    )


def _clean(text: str) -> str:
    text = _ANSI.sub("", text[-MAX_CHARS:])
    return text.replace("\r\n", "\n").replace("^M", "").replace("\r", "\n")


def defect_fingerprints(catalog: Catalog) -> list[Fingerprint]:
    """The known defects of engine builds that say what the engine prints, as fingerprints: one per defect,
    naming every build that carries it (a release inherits its parent's defects), the first one first."""
    carriers: dict[tuple[str, str, str], list[Build]] = {}
    found: dict[tuple[str, str, str], Defect] = {}
    for engine, build in catalog.builds():
        for defect in build.defects:
            if defect.log_line:
                key = (engine.id, defect.id, defect.log_line)
                carriers.setdefault(key, []).append(build)
                found.setdefault(key, defect)
    out: list[Fingerprint] = []
    for key, carrying in carriers.items():
        engine_id, _, log_line = key
        defect = found[key]
        builds = sorted(carrying, key=lambda b: (b.released, b.id))
        fix = defect.workaround or (f"use {defect.fixed_in} or later" if defect.fixed_in else "none known yet")
        fixed = f"; fixed in {defect.fixed_in}" if defect.fixed_in else ""
        which = ", ".join(f"{b.id} ({b.released})" for b in builds)
        out.append(
            Fingerprint(
                id=f"{builds[0].id}+{defect.id}",
                title=f"a known {defect.symptom} defect of {', '.join(b.id for b in builds)}",
                engines=[engine_id],
                pattern=re.escape(log_line),
                stage="oom" if defect.symptom == "oom" else "other",
                gate=defect.gate,
                explanation=f"{defect.title} — {which}{fixed}.",
                fix=fix,
                sources=defect.sources,
            )
        )
    return out


def diagnose_log(catalog: Catalog, text: str, hints: Hints | None = None) -> Diagnosis:
    hints = hints or Hints()
    text = _clean(text)
    lines = text.split("\n")
    facts = read_facts(catalog, text, hints)
    matches: list[Match] = []
    # a build's own known defect is more specific than a catalog fingerprint of the same line (stable sort below)
    for fp in [*defect_fingerprints(catalog), *catalog.fingerprints.values()]:
        if not _applies(fp, facts):
            continue
        pattern = re.compile(fp.pattern)
        for number, line in enumerate(lines, 1):
            m = pattern.search(line)
            if m:
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                matches.append(Match(fp, number, line.strip(), groups))
                break
    matches.sort(key=lambda m: (m.fingerprint.generic, m.line_number))
    looked: list[tuple[int, str]] = []
    if not matches:
        errorish = [(n, line.strip()) for n, line in enumerate(lines, 1) if _ERRORISH.search(line)]
        tail = [(n, line.strip()) for n, line in enumerate(lines, 1) if line.strip()]
        looked = (errorish or tail)[-SHOWN_LINES:]
    summary, plan = _plan_that_runs(catalog, facts, hints)
    return Diagnosis(tuple(matches), facts, tuple(looked), summary, plan)


def _plan_that_runs(catalog: Catalog, facts: LogFacts, hints: Hints) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    if facts.model is None or facts.hardware is None:
        return (), None
    from ..artifacts.contract import plan_json
    from ..plan.resolve import resolve
    from ..plan.types import Request

    gpus = hints.gpus or facts.tp
    request = Request(model=facts.model, hardware=facts.hardware, gpus_per_node=gpus)
    resolution = resolve(catalog, request)
    if not resolution.plans and gpus is not None:
        resolution = resolve(catalog, Request(model=facts.model, hardware=facts.hardware))
    command = f"recipegen --gpu {facts.hardware.id} --model {facts.model.id}"
    if not resolution.plans:
        return (f"no path runs {facts.model.name} on {facts.hardware.name}: `recipegen explain {command[10:]}`",), None
    top = resolution.plans[0]
    layout = top.candidate.layout
    command += f" --gpus {layout.gpus_per_node}" + (f" --nodes {layout.nodes}" if layout.nodes > 1 else "")
    lines = (
        f"{top.engine.name} {top.build.id} · {top.variant.id} ({top.variant.repo}) on "
        f"{layout.gpus} × {facts.hardware.name} — {top.candidate.status}",
        " ".join(top.argv),
        f"write it: {command}",
    )
    return lines, plan_json(top)


# ---------------------------------------------------------------------------------------------
# output


def format_diagnosis(d: Diagnosis) -> str:
    f = d.facts
    out: list[str] = []
    if d.matches:
        out.append(f"diagnose: {len(d.matches)} known failure(s), most specific first")
    else:
        out.append("diagnose: no known failure in this log (recipegen lists the lines it looked at)")
    for m in d.matches[:3]:
        fp = m.fingerprint
        gate = f"gate {fp.gate}" if fp.gate else "no gate: a flag choice"
        out.append(f"✗ {fp.title} [{fp.stage} · {gate}] ({fp.id})")
        out.append(f"    line {m.line_number}: {_short(m.line)}")
        out.append(f"    why: {m.fill(fp.explanation)}")
        out.append(f"    fix: {m.fill(fp.fix)}")
        if fp.sources:
            out.append(f"    seen in: {', '.join(s.url for s in fp.sources[:2])}")
    if len(d.matches) > 3:
        out.append(f"  (+{len(d.matches) - 3} more; --format json lists them)")
    if d.looked_at:
        out.append("  lines looked at:")
        out.extend(f"    {n}: {_short(line)}" for n, line in d.looked_at)
    said = [
        f"engine {f.engine} {f.version or '(version not in the log)'}" if f.engine else "engine: not in the log",
        f"model {f.model.name} ({f.model_text})" if f.model else f"model: {f.model_text or 'not in the log'}",
        f"GPU {f.hardware.name} ({f.gpu_text})" if f.hardware else f"GPU: {f.gpu_text or 'not in the log'}",
    ]
    if f.tp:
        said.append(f"tensor parallel {f.tp}")
    out.append("the log says: " + printable(" · ".join(said)))
    out.extend(f"  note: {n}" for n in f.notes)
    if d.plan_summary:
        out.append("plan that runs:")
        out.extend(f"  {line}" for line in d.plan_summary)
    elif f.model is None or f.hardware is None:
        missing = " and ".join(x for x, v in (("--model", f.model), ("--gpu", f.hardware)) if v is None)
        out.append(f"for the plan that runs, add {missing} (e.g. recipegen diagnose LOG --gpu a100 --model glm-5.2)")
    return "\n".join(out) + "\n"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text from a log or a command, safe to print on a terminal: control characters become '?'."""
    return _CONTROL.sub("?", text)


def _short(line: str, width: int = 300) -> str:
    line = printable(line)
    return line if len(line) <= width else line[: width - 1] + "…"


def diagnosis_json(d: Diagnosis) -> dict[str, Any]:
    f = d.facts
    return {
        "schema": SCHEMA,
        "known": d.known,
        "matches": [
            {
                "fingerprint": m.fingerprint.id,
                "title": m.fingerprint.title,
                "stage": m.fingerprint.stage,
                "gate": m.fingerprint.gate,
                "line_number": m.line_number,
                "line": m.line,
                "captured": m.groups,
                "explanation": m.fill(m.fingerprint.explanation),
                "fix": m.fill(m.fingerprint.fix),
                "sources": [s.url for s in m.fingerprint.sources],
            }
            for m in d.matches
        ],
        "log": {
            "engine": f.engine,
            "version": f.version,
            "build": f.build,
            "model": f.model.id if f.model else None,
            "model_text": f.model_text,
            "hardware": f.hardware.id if f.hardware else None,
            "gpu_text": f.gpu_text,
            "tensor_parallel": f.tp,
            "notes": list(f.notes),
        },
        "looked_at": [{"line_number": n, "line": line} for n, line in d.looked_at],
        "plan": d.plan_json,
    }

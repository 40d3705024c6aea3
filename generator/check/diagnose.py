"""`recipegen diagnose`: match an engine log against known failure fingerprints (recipes/fingerprints/).

Public API (also used by `recipegen up` on a failed container's log tail):
  diagnose_log(catalog, text, hints) -> Diagnosis
  format_diagnosis(d) -> str        one screen of text             (diagnose_output.py)
  diagnosis_json(d) -> dict         schema recipegen.diagnosis/1   (diagnose_output.py)

This module owns the matching: the log cleaned, the catalog's fingerprints and the builds' known defects
tried line by line, the most specific first. Besides the failure, the log often says which engine version,
model and GPU it ran (engines print them at start-up; log_facts.py reads them, with the user's Hints);
when it does, the diagnosis resolves that request and shows the plan that runs.
"""

from __future__ import annotations

import re
from dataclasses import field, replace
from typing import Any

from ..bounds import MAX_LOG_LINE
from ..catalog.capability import Capability, CapabilitySet
from ..catalog.index import Catalog
from ..catalog.schema import Build, Defect, Fingerprint
from ..frozen import frozen
from .config_defects import ConfigReading
from .log_facts import Hints, LogFacts, read_facts
from .log_lines import FLAVORS
from .log_rules import LINE_RULES, RULES, Ruling

MAX_CHARS = 4 * 1024 * 1024  # the tail that is read: start-up lines plus the failure fit many times over
SHOWN_LINES = 12
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\^\[\[[0-9;]*m")
_ERRORISH = re.compile(r"error|exception|traceback|failed|assert|fatal|abort", re.IGNORECASE)


@frozen
class Match:
    fingerprint: Fingerprint
    line_number: int  # 1-based, in the text given
    line: str
    groups: dict[str, str]
    ruling: Ruling | None = None  # what the line's own reasons and numbers say (log_rules.py)

    @property
    def why(self) -> str:
        return printable(self.ruling.why) if self.ruling else self.fill(self.fingerprint.explanation)

    @property
    def fix(self) -> str:
        return printable(self.ruling.fix) if self.ruling else self.fill(self.fingerprint.fix)

    @property
    def gate(self) -> str | None:
        return self.ruling.gate if self.ruling else self.fingerprint.gate

    @property
    def sources(self) -> tuple[str, ...]:
        own = self.ruling.sources if self.ruling else ()
        return tuple(dict.fromkeys((*own, *(s.url for s in self.fingerprint.sources))))

    def fill(self, text: str) -> str:
        """The fingerprint's prose with {group} replaced by what the log said."""

        def value(m: re.Match[str]) -> str:
            return self.groups.get(m.group(1)) or "not in the log"

        return printable(re.sub(r"\{(\w+)\}", value, text))


@frozen
class Diagnosis:
    matches: tuple[Match, ...]
    facts: LogFacts
    looked_at: tuple[tuple[int, str], ...]  # the lines shown when nothing matched
    plan_summary: tuple[str, ...] = ()  # the plan that runs, when the log names model and GPU
    plan_json: dict[str, Any] | None = field(default=None)
    slow_path: tuple[str, ...] = ()  # kernels slower than the best the catalog knows for this GPU
    lint: tuple[str, ...] = ()  # lint's findings on the command the log echoes
    config: ConfigReading = field(default_factory=ConfigReading)  # the printed configuration and its known defects

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


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text from a log or a command, safe to print on a terminal: control characters become '?'."""
    return _CONTROL.sub("?", text)


# ---------------------------------------------------------------------------------------------
# matching


def _applies(fp: Fingerprint, facts: LogFacts) -> bool:
    if fp.engines is not None and facts.runs_on and not set(facts.runs_on) & set(fp.engines):
        return False
    return not (
        fp.versions
        and facts.version
        and facts.engine in (fp.engines or [])
        and re.match(r"\d+\.\d+", facts.version)
        and not _in_range(facts.version, fp.versions)
    )


def _ruled(fp: Fingerprint, number: int, line: str, groups: dict[str, str], facts: LogFacts, text: str) -> Match:
    ruling = None
    if fp.id in LINE_RULES:
        ruling = LINE_RULES[fp.id](line, facts, text)
    elif fp.id in RULES:
        ruling = RULES[fp.id](groups, facts, text)
    return Match(fp, number, line.strip(), groups, ruling)


def _clean(text: str) -> str:
    """The log's tail without terminal escapes, each line cut to MAX_LOG_LINE characters: no pattern ever
    runs over a megabyte-long line (a progress bar, a dumped tensor), so each match is bounded."""
    text = _ANSI.sub("", text[-MAX_CHARS:])
    text = text.replace("\r\n", "\n").replace("^M", "").replace("\r", "\n")
    return "\n".join(line[:MAX_LOG_LINE] for line in text.split("\n"))


@frozen
class DefectFingerprint:
    """A build defect's log line as a fingerprint, with what decides whether a log can show it: the builds that
    carry it and the GPUs it hits."""

    fingerprint: Fingerprint
    builds: frozenset[str]
    sm: CapabilitySet | None

    def fits(self, engine: str | None, release: str | None, capability: str | None) -> bool:
        """False when the log itself rules the defect out: it ran a release of this engine (the version line
        names it exactly, not a build between two) that does not carry the defect, or a GPU the defect does not
        hit. A line two defects share then names the one that fits the run."""
        if release is not None and engine in (self.fingerprint.engines or []) and release not in self.builds:
            return False
        if self.sm is None or capability is None:
            return True
        try:
            return Capability.parse(capability) in self.sm
        except ValueError:  # a capability the log wrote oddly rules nothing out
            return True


def defect_fingerprints(catalog: Catalog) -> list[DefectFingerprint]:
    """The known defects of engine builds that say what the engine prints, as fingerprints: one per defect,
    naming every build that carries it (a release inherits its parent's defects), the first one first."""
    from ..plan.defects import scope_text

    carriers: dict[tuple[str, str, str], list[Build]] = {}
    found: dict[tuple[str, str, str], Defect] = {}
    for engine, build in catalog.builds():
        for defect in build.defects:
            if defect.log_line:
                key = (engine.id, defect.id, defect.log_line)
                carriers.setdefault(key, []).append(build)
                found.setdefault(key, defect)
    out: list[DefectFingerprint] = []
    for key, carrying in carriers.items():
        engine_id, _, log_line = key
        defect = found[key]
        builds = sorted(carrying, key=lambda b: (b.released, b.id))
        fix = defect.workaround or (f"use {defect.fixed_in} or later" if defect.fixed_in else "none known yet")
        fixed = f"; fixed in {defect.fixed_in}" if defect.fixed_in else ""
        which = ", ".join(f"{b.id} ({b.released})" for b in builds)
        scoped = f"; only with {scope_text(defect)}" if defect.scoped else ""
        fingerprint = Fingerprint(
            id=f"{builds[0].id}+{defect.id}",
            title=f"a known {defect.symptom} defect of {', '.join(b.id for b in builds)}",
            engines=[engine_id],
            pattern=re.escape(log_line),
            stage="oom" if defect.symptom == "oom" else "other",
            gate=defect.gate,
            explanation=f"{defect.title} — {which}{fixed}{scoped}.",
            fix=fix,
            sources=defect.sources,
        )
        out.append(DefectFingerprint(fingerprint, frozenset(b.id for b in builds), defect.sm))
    return out


def _engine_from_failure(facts: LogFacts, matches: list[Match]) -> LogFacts:
    """A log that names no engine still shows one when its failure line is one engine's own wording."""
    if facts.engine is not None or not matches or matches[0].fingerprint.engines is None:
        return facts
    engines = matches[0].fingerprint.engines
    if len(engines) != 1:
        return facts
    note = f"the engine is read from the failure line, which only {FLAVORS.get(engines[0], engines[0])} prints"
    return replace(
        facts,
        engine=engines[0],
        flavor=FLAVORS.get(engines[0], engines[0]),
        runs_on=(engines[0],),
        notes=(*facts.notes, note),
    )


def _errorish(text: str) -> list[tuple[int, str]]:
    """The lines that look like an error, found by one scan of the whole text (not a search per line)."""
    out: list[tuple[int, str]] = []
    number, counted, end = 1, 0, -1
    for m in _ERRORISH.finditer(text):
        if m.start() <= end:  # this line is listed already
            continue
        number += text.count("\n", counted, m.start())
        counted = m.start()
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        out.append((number, text[start:end].strip()))
    return out


def _first_line_match(pattern: str, text: str) -> tuple[int, str, re.Match[str]] | None:
    """The first line the pattern matches (its number, the line, the match). Only the lines holding one of
    the literals every match must contain are searched, found by str.find in C: linear in the log, with no
    Python step per line and no match ever running across lines."""
    compiled = re.compile(pattern)
    literals = _required_literals(pattern)
    if literals is None:  # nothing literal to look for: every line is tried
        for number, line in enumerate(text.split("\n"), 1):
            m = compiled.search(line)
            if m:
                return number, line, m
        return None
    best: tuple[int, str, re.Match[str]] | None = None
    for literal in literals:
        pos = 0
        limit = len(text) if best is None else best[0]
        while (hit := text.find(literal, pos, limit)) >= 0:
            start = text.rfind("\n", 0, hit) + 1
            end = text.find("\n", hit)
            end = len(text) if end < 0 else end
            m = compiled.search(text[start:end])
            if m:
                best = (start, text[start:end], m)
                break
            pos = end + 1
    if best is None:
        return None
    start, line, m = best
    return text.count("\n", 0, start) + 1, line, m


def _required_literals(pattern: str) -> list[str] | None:
    """Literal texts at least one of which every match of the pattern contains (None when there are none
    of three characters or more), read from Python's own regex parser."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]

    def of(items: Any) -> list[str] | None:
        options: list[list[str]] = []
        run = ""
        for op, av in list(items):
            if op is c.LITERAL:
                run += chr(av)
                continue
            if len(run) >= 3:
                options.append([run])
            run = ""
            if op is c.SUBPATTERN:
                inner = None if av[1] & c.SRE_FLAG_IGNORECASE else of(av[-1])
            elif op is c.BRANCH:
                branches = [of(b) for b in av[1]]
                inner = None if any(b is None for b in branches) else [x for b in branches for x in b or []]
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:
                inner = of(av[2])
            else:
                inner = None
            if inner:
                options.append(inner)
        if len(run) >= 3:
            options.append([run])
        # the fewest alternatives, then the longest shortest literal: the rarest text to look for
        return min(options, key=lambda o: (len(o), -min(len(x) for x in o))) if options else None

    parsed = parser.parse(pattern)
    return None if parsed.state.flags & c.SRE_FLAG_IGNORECASE else of(parsed)


def diagnose_log(catalog: Catalog, text: str, hints: Hints | None = None) -> Diagnosis:
    hints = hints or Hints()
    uncut = _ANSI.sub("", text[-MAX_CHARS:])  # a printed configuration may run past MAX_LOG_LINE (log_config.py)
    text = _clean(text)
    lines = text.split("\n")
    facts = read_facts(catalog, text, hints)
    matches: list[Match] = []
    # a build's own known defect is more specific than a catalog fingerprint of the same line (stable sort below)
    release = facts.build if facts.build and catalog.build(facts.build)[1].version == facts.version else None
    # only a GPU the log or --gpu names: a bare capability may be a kernel's family ("on sm120" on a GB10)
    gpu = str(facts.hardware.compute_capability) if facts.hardware is not None and facts.gpu_named else None
    own = [d.fingerprint for d in defect_fingerprints(catalog) if d.fits(facts.engine, release, gpu)]
    for fp in [*own, *catalog.fingerprints.values()]:
        if not _applies(fp, facts):
            continue
        found = _first_line_match(fp.pattern, text)
        if found is not None:
            number, line, m = found
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            matches.append(_ruled(fp, number, line, groups, facts, text))
    matches.sort(key=lambda m: (m.fingerprint.generic, m.line_number))
    facts = _engine_from_failure(facts, matches)
    looked: list[tuple[int, str]] = []
    if not matches:
        errorish = _errorish(text)
        tail = [(n, line.strip()) for n, line in enumerate(lines, 1) if line.strip()]
        looked = (errorish or tail)[-SHOWN_LINES:]
    summary, plan = _plan_that_runs(catalog, facts, hints)
    from .config_defects import read_config_defects
    from .log_checks import lint_command, slow_path

    return Diagnosis(
        tuple(matches),
        facts,
        tuple(looked),
        summary,
        plan,
        slow_path(catalog, facts, text),
        lint_command(catalog, facts),
        read_config_defects(catalog, facts, uncut),
    )


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

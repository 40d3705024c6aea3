"""Rows for `recipegen list`: one dict per entry, the same for the table and --format json."""

from __future__ import annotations

from typing import Any

from ..catalog.capability import Capability
from ..catalog.index import Catalog
from ..catalog.schema import Hardware, Model, Survey
from ..plan.describe import LINE, clip


def _size(value: float | None) -> str:
    return f"{value / 1e9:.0f} GB" if value else "?"


def _source_urls(model: Model) -> list[str]:
    """Every distinct source a model's facts cite (architecture, variants, pitfalls), in order."""
    groups = [model.sources, model.attention.sources]
    groups += [v.sources for v in model.variants] + [p.sources for p in model.pitfalls]
    if model.linear_attention is not None:
        groups.append(model.linear_attention.sources)
    return list(dict.fromkeys(s.url for group in groups for s in group))


def _engine_rows(catalog: Catalog, detail: bool) -> list[dict[str, Any]]:
    """One row per build; with `detail` (JSON) each says which of its tables were harvested and how, and the
    releases known only from their harvested code follow (usable as --build ENGINE==VERSION)."""
    from ..catalog import harvest

    out: list[dict[str, Any]] = []
    for e in catalog.engines.values():
        for b in e.builds:
            row: dict[str, Any] = {
                "engine": e.id,
                "build": b.id,
                "provenance": b.provenance,
                "released": str(b.released),
                "cuda": b.cuda,
                "images": ", ".join(f"{arch}={ref}" for arch, ref in b.images.items())
                or (f"source: {b.source_build.repo}" if b.source_build else "none known (not deployable here)"),
            }
            if detail:
                row["reported_for"] = list(b.reported_for)  # the models its reports served
                engine_id = harvest.engine_of(b)
                row["harvested"] = harvest.summary(engine_id, b.version) if engine_id else None
            out.append(row)
        if detail:
            have = {b.version for b in e.builds if harvest.engine_of(b) == e.id}
            for release in harvest.releases(e.id):
                if release in have:
                    continue
                facts = harvest.summary(e.id, release)
                # a numbered release is adopted as a build when named; a vendored commit is read only for its flags
                numbered = harvest.release_key(release) is not None
                out.append(
                    {
                        "engine": e.id,
                        "build": None,
                        "release": release,
                        "provenance": "official",
                        "released": (facts["uploaded"] or facts["built"]) if facts else None,
                        "use": f"--build {e.id}=={release}" if numbered else None,
                        **({} if numbered else {"read_for": "lint: flags later releases removed"}),
                        "harvested": facts,
                    }
                )
    return out


def _survey_row(survey: Survey, detail: bool) -> dict[str, Any]:
    classes = dict.fromkeys(c for e in survey.entries for c in e.gpu_classes)
    row: dict[str, Any] = {
        "id": survey.id,
        "surveyed": str(survey.surveyed),
        "by": survey.by,
        "gpu_classes": ",".join(classes),
        "questions": len(survey.entries),
        "added": sum(len(e.catalog) for e in survey.entries),
        "title": survey.title,
    }
    if detail:
        row["entries"] = [
            {
                "gpu_classes": e.gpu_classes,
                "families": e.families,
                "layouts": e.layouts,
                "question": e.question,
                "found": e.found,
                "catalog": e.catalog,
                "not_added": e.not_added,
                "sources": e.sources,
            }
            for e in survey.entries
        ]
    return row


ROLE_ORDER = {"consumer": 0, "workstation": 1, "datacenter": 2}
GROUP_WIDTH = 110  # a group's line wraps here, so the listing fits a terminal


def hardware_groups(catalog: Catalog) -> list[str]:
    """The GPUs in one screen: a line per role and compute capability, each part as id and GiB, smallest first."""
    groups: dict[tuple[int, Capability, str], list[Hardware]] = {}
    for h in catalog.hardware.values():
        groups.setdefault((ROLE_ORDER.get(h.role, 3), h.compute_capability, h.role), []).append(h)
    lines = [f"{'ROLE':<12} {'SM':<6} GPU ID (GiB per GPU)"]
    for (_, cc, role), parts in sorted(groups.items(), key=lambda kv: kv[0][:2]):
        cells = [f"{h.id} ({h.memory_gib:g})" for h in sorted(parts, key=lambda h: (h.memory_gib, h.id))]
        line, head = "", f"{role:<12} {cc.sm:<6} "
        for cell in cells:
            if line and len(head) + len(line) + len(cell) + 3 > GROUP_WIDTH:  # ", " and the comma that ends a line
                lines.append(head + line + ",")
                head, line = " " * 20, ""
            line += (", " if line else "") + cell
        lines.append(head + line)
    lines.append(
        f"{len(catalog.hardware)} GPUs; --verbose: a row each with name, bandwidth, FP8/FP4, host link, aliases"
    )
    return lines


def rows(catalog: Catalog, kind: str, detail: bool = False) -> list[dict[str, Any]]:
    if kind == "models":
        return [
            {
                "id": m.id,
                "name": m.name,
                "architecture": m.architecture,
                "attention": m.attention.kind + (f"+{m.linear_attention.kind}" if m.linear_attention else ""),
                "params_b": f"{m.params_total_b:g}" + (f"/{m.params_active_b:g}" if m.params_active_b else ""),
                "context": m.max_context,
                "variants": ", ".join(f"{v.id}({_size(v.size_bytes)})" for v in m.variants),
                "sources": len(_source_urls(m)),
            }
            for m in sorted(catalog.models.values(), key=lambda m: m.id)
        ]
    if kind == "hardware":
        return [
            {
                "id": h.id,
                "name": h.name,
                "sm": h.compute_capability.sm,
                "memory_gib": f"{h.memory_gib:g}",
                "kind": h.memory_kind,
                "gb_s": f"{h.bandwidth_gbs:g}",
                "role": h.role,
                "fp8": "yes" if h.fp8_tensor_cores else "no",
                "fp4": "yes" if h.fp4_tensor_cores else "no",
                "bf16_tflops": f"{h.tensor_tflops.bf16:g}",
                "host_link": h.host_link.describe(),
                "host": ",".join(h.host_arch),
                "aliases": ", ".join(h.aliases),
            }
            for h in sorted(catalog.hardware.values(), key=lambda h: (h.compute_capability, h.memory_gib))
        ]
    if kind == "engines":
        return _engine_rows(catalog, detail)
    if kind == "fingerprints":
        return [
            {
                "id": f.id,
                "engines": ",".join(f.engines or ["any"]),
                "versions": f.versions or "any",
                "stage": f.stage,
                "gate": f.gate or "-",
                "title": f.title,
            }
            for f in sorted(catalog.fingerprints.values(), key=lambda f: f.id)
        ]
    if kind == "surveys":
        return [_survey_row(s, detail) for s in sorted(catalog.surveys.values(), key=lambda s: (s.surveyed, s.id))]
    return [
        {
            "id": d.id,
            "model": d.model,
            "variant": d.variant,
            "hardware": ",".join(d.hardware),
            "layout": f"{d.nodes}x{d.gpus_per_node}",
            "engine": d.engine,
            "build": d.build,
            "status": d.status,
        }
        for d in sorted(catalog.deployments.values(), key=lambda d: d.id)
    ]


MIN_COLUMN = 12  # a shrunk column still shows a word or two


def table_lines(table: list[dict[str, Any]], whole: bool = False, width: int = LINE) -> list[str]:
    """The rows as a text table under a header. By default it fits `width` columns: the widest columns but the
    first (the id, which a reader copies) shrink, and a cell longer than its column is cut at a word and ends in
    "…", with a last line saying where the whole text is; `whole`: every cell as it is (--verbose)."""
    columns = list(table[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in table)) for c in columns}
    while not whole and sum(widths.values()) + 2 * (len(columns) - 1) > width:
        widest = max(columns[1:], key=lambda c: widths[c])
        if widths[widest] <= MIN_COLUMN:
            break
        widths[widest] -= 1
    cells = [{c: str(r[c]) if whole else clip(str(r[c]), widths[c]) for c in columns} for r in table]
    out = ["  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip()]
    out += ["  ".join(row[c].ljust(widths[c]) for c in columns).rstrip() for row in cells]
    if any(row[c] != str(r[c]) for row, r in zip(cells, table, strict=True) for c in columns):
        out.append(
            f"(cells ending in … are cut to fit {width} columns: --verbose prints them whole, --format json too)"
        )
    return out

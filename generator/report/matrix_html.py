"""The matrix as one HTML page: titled and dated, every reason readable without hovering (<details>), a filter
by model or GPU (also `?filter=` in the address), print-friendly, and nothing fetched from the network."""

from __future__ import annotations

import datetime as dt
import re
from html import escape

from ..catalog.targets import Target
from .matrix import LAYOUT_NOTE, LEGEND, Cell, grid

_CLASS = {"✓": "ok", "◐": "mid", "?": "unk", "✗": "no"}
_CITED = re.compile(r"\[(https://[^\]\s]+)\]")

_STYLE = """
:root{--ok:#e3f3e3;--mid:#fff3cc;--unk:#e8eaf6;--no:#f9e1e1;--line:#c9ccd1}
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1d1f23}
h1{font-size:1.5rem;margin:0 0 .25rem}header p{margin:.2rem 0;color:#444;max-width:60rem}
.tools{margin:1rem 0;display:flex;gap:1rem;align-items:center}
#filter{font:inherit;padding:.35rem .6rem;width:22rem;max-width:100%;border:1px solid var(--line);border-radius:4px}
table{border-collapse:collapse}
th,td{border:1px solid var(--line);padding:.3rem .45rem;vertical-align:top;text-align:left}
thead th{position:sticky;top:0;background:#f4f5f7}tbody th{white-space:nowrap;background:#fafafa}
td{min-width:6rem;max-width:20rem}.ok{background:var(--ok)}.mid{background:var(--mid)}.unk{background:var(--unk)}
.no{background:var(--no)}.mark{font-weight:600}
summary{cursor:pointer}details ul{margin:.25rem 0 0;padding-left:1.1rem;font-size:12px;color:#333}
li{overflow-wrap:anywhere}.legend li{font-size:13px}footer{margin-top:1rem;color:#555;font-size:12px}
@media print{.tools{display:none}body{margin:0;font-size:10px}thead th{position:static}
td,th{padding:.15rem .25rem}details ul{font-size:8px}tr{break-inside:avoid}a{color:inherit}}
"""

# filter terms: one naming a GPU column keeps that column, any other keeps the models containing it
_SCRIPT = """
(function(){
const box=document.getElementById('filter'),shown=document.getElementById('shown');
const gpus=[...document.querySelectorAll('thead th[data-gpu]')].map(th=>th.dataset.gpu);
function apply(){
  const terms=box.value.toLowerCase().split(/[\\s,]+/).filter(Boolean);
  const cols=terms.filter(t=>gpus.some(g=>g.includes(t)));
  const names=terms.filter(t=>!cols.includes(t));
  document.querySelectorAll('[data-gpu]').forEach(el=>{
    el.hidden=cols.length>0&&!cols.some(t=>el.dataset.gpu.includes(t));});
  let rows=0;
  document.querySelectorAll('tbody tr').forEach(tr=>{
    tr.hidden=names.length>0&&!names.some(t=>tr.dataset.model.includes(t));if(!tr.hidden)rows++;});
  shown.textContent=rows+' of '+document.querySelectorAll('tbody tr').length+' models shown';
}
box.addEventListener('input',apply);
const params=new URLSearchParams(location.search),q=params.get('filter');if(q)box.value=q;
apply();
const openAll=()=>document.querySelectorAll('details').forEach(d=>d.open=true);
if(params.has('open'))openAll();
window.addEventListener('beforeprint',openAll);
})();
"""


def _text(reason: str) -> str:
    """A reason, escaped, with its cited https sources as links."""
    out, at = [], 0
    for match in _CITED.finditer(reason):
        url = match.group(1)
        out.append(escape(reason[at : match.start()]))
        out.append(f'[<a href="{escape(url)}">{escape(url)}</a>]')
        at = match.end()
    out.append(escape(reason[at:]))
    return "".join(out)


def _cell(cell: Cell) -> str:
    mark = f'<span class="mark">{escape(cell.short())}</span>'
    # a ✓ opens to its plan, and to a 16-bit size counted from the parameters where that is what it rests on
    reasons = cell.reasons if cell.symbol != "✓" else (cell.summary, *cell.notes)
    items = "".join(f"<li>{_text(r)}</li>" for r in reasons)
    shown = f"<details><summary>{mark}</summary><ul>{items}</ul></details>" if items else mark
    return f'<td class="{_CLASS[cell.symbol]}" data-gpu="{escape(cell.target.casefold())}">{shown}</td>'


def to_html(cells: list[Cell], targets: list[Target], today: dt.date | None = None) -> str:
    from .. import __version__

    date = (today or dt.date.today()).isoformat()
    labels, rows = grid(cells, targets)
    head = "".join(f'<th scope="col" data-gpu="{escape(label.casefold())}">{escape(label)}</th>' for label in labels)
    body = "\n".join(
        f'<tr data-model="{escape(model.casefold())}"><th scope="row">{escape(model)}</th>'
        + "".join(_cell(by_target[label]) for label in labels if label in by_target)
        + "</tr>"
        for model, by_target in rows.items()
    )
    legend = "".join(f"<li><b>{escape(s)}</b> {escape(m)}</li>" for s, m in LEGEND.items())
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>recipegen matrix — {date}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        "<header><h1>Which open models run on which GPUs</h1>\n"
        f"<p>Generated {date} by recipegen {escape(__version__)} from its catalog: {len(rows)} models × "
        f"{len(labels)} GPUs.</p>\n<p>{escape(LAYOUT_NOTE)}</p></header>\n"
        '<div class="tools"><label>Filter <input id="filter" type="search" '
        'placeholder="model or GPU, e.g. qwen3 h200" autocomplete="off"></label>'
        '<span id="shown" aria-live="polite"></span></div>\n'
        f'<ul class="legend">{legend}</ul>\n'
        f'<table id="matrix">\n<thead><tr><th scope="col">model</th>{head}</tr></thead>\n<tbody>\n{body}\n'
        "</tbody>\n</table>\n"
        "<footer>Each cell opens to its reasons (✓: the plan); printing opens them all, and so does ?open in the "
        "address. "
        "`recipegen explain --gpu GPU --model MODEL` gives the full plan.</footer>\n"
        f"<script>{_SCRIPT}</script>\n</body>\n</html>\n"
    )

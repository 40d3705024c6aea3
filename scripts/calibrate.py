#!/usr/bin/env python3
"""The step model against every published row of recipes/measurements/ (run by hand).

python scripts/calibrate.py            # every row: measured, held-out estimate, ratio; the per-class table
python scripts/calibrate.py --write    # also refit generator/plan/speed_constants.py and the README's table
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from recipegen.catalog.load import load as load_catalog
from recipegen.plan.calibration import calibrate, prefill_ratios, readme_table, render_constants
from recipegen.plan.speed import PREFILL_BAND

ROOT = Path(__file__).resolve().parent.parent
CONSTANTS = ROOT / "generator" / "plan" / "speed_constants.py"
README = ROOT / "README.md"
MARKERS = ("<!-- speed-table:start -->", "<!-- speed-table:end -->")


def with_table(readme: str, table: str) -> str:
    start, end = MARKERS
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    return pattern.sub(lambda _: f"{start}\n{table}\n{end}", readme)


def main() -> None:
    cal = calibrate(load_catalog([]))
    print(f"{'measurement':48} {'engine':13} {'class':30} {'meas':>7} {'held-out':>8} {'ratio':>6}")
    for c in cal.comparisons:
        m = c.row
        print(f"{m.id:48} {m.engine:13} {c.regime:30} {m.decode_tps:7.1f} {c.estimate:8.1f} {c.ratio:6.2f}")
    print()
    print(readme_table(cal))
    ratios = prefill_ratios(cal.comparisons)
    if ratios:
        errors = [abs(1 - 1 / r) for r in ratios]
        print(
            f"prefill: {len(ratios)} rows, median error {statistics.median(errors):.0%}, measured/estimated "
            f"{ratios[0]:.2f}-{ratios[-1]:.2f} (band used in the output: {PREFILL_BAND[0]}-{PREFILL_BAND[1]})"
        )
    if "--write" in sys.argv[1:]:
        CONSTANTS.write_text(render_constants(cal), encoding="utf-8")
        README.write_text(with_table(README.read_text(encoding="utf-8"), readme_table(cal)), encoding="utf-8")
        print(f"wrote {CONSTANTS.relative_to(ROOT)} and the table in README.md")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Estimate vs published decode speed for every row of recipes/measurements/ (run by hand).

python scripts/calibrate.py          # the table, the median error and the measured/estimated band
"""

from __future__ import annotations

import statistics

from recipegen.catalog.load import load as load_catalog
from recipegen.plan.calibration import by_regime, compare, load, prefill_ratios, summary
from recipegen.plan.speed import BANDS, PREFILL_BAND


def main() -> None:
    catalog = load_catalog([])
    rows = [compare(catalog, m) for m in load()]
    print(f"{'measurement':44} {'engine':12} {'GPUs':>10} {'measured':>9} {'estimate':>9} {'meas/est':>8}")
    for c in rows:
        m = c.row
        gpus = f"{m.gpus}x{m.hardware}"
        print(f"{m.id:44} {m.engine:12} {gpus:>10} {m.decode_tps:9.1f} {c.estimate:9.1f} {c.ratio:8.2f}")
    median, _, _ = summary(rows)
    print(f"\n{len(rows)} measurements: median error of the roofline {median:.0%}")
    for regime, group in by_regime(rows).items():
        median, low, high = summary(group)
        band = BANDS[regime]
        print(
            f"  {regime}: {len(group)} rows, median error {median:.0%}, measured/estimated 10th-90th percentile "
            f"{low:.2f}-{high:.2f} (band used in the output: {band[0]}-{band[1]})"
        )
    ratios = prefill_ratios(rows)
    if ratios:
        errors = [abs(1 - 1 / r) for r in ratios]
        print(
            f"prefill: {len(ratios)} rows, median error {statistics.median(errors):.0%}, measured/estimated "
            f"{ratios[0]:.2f}-{ratios[-1]:.2f} (band used in the output: {PREFILL_BAND[0]}-{PREFILL_BAND[1]})"
        )


if __name__ == "__main__":
    main()

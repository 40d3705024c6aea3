"""data/selector_heads.yaml (where a release's selector turns on the heads per GPU, read in its code) covers every run
release whose answers differ by head count, and agrees with those runs at every count they asked."""

from __future__ import annotations

from pathlib import Path

from recipegen.catalog import harvest, selector_picks

HARVEST = Path(__file__).resolve().parents[2] / "generator" / "data" / "harvest" / "vllm"


def _releases():
    return sorted(
        (p.name.removesuffix(".selected.json") for p in HARVEST.glob("*.selected.json")), key=harvest.release_key
    )


def _by_heads(release):
    """(shape, case, KV asked, capability) -> {heads per GPU: backend} where the release's answer turns on it."""
    found = {}
    for case, by_kv in (harvest.picks("vllm", release) or {}).items():
        for kv, by_cap in by_kv.items():
            for cap, value in by_cap.items():
                if isinstance(value, dict) and len(set(value.values())) > 1:
                    found[(case.split("/")[0], case, kv, cap)] = {int(h): b for h, b in value.items()}
    return found


def test_every_release_whose_pick_turns_on_heads_per_gpu_has_its_own_rule_and_the_rule_fits_its_run():
    turning, checked = [], 0
    for release in _releases():
        for (shape, case, kv, cap), by_heads in _by_heads(release).items():
            rule = selector_picks.heads_rule("vllm", release, shape)
            if rule is None:
                turning.append(f"{release} {case} {kv} sm_{cap}: {by_heads}")
                continue
            line = int(rule["at_most"])
            low = {b for h, b in by_heads.items() if h <= line}
            high = {b for h, b in by_heads.items() if h > line}
            # one answer on each side of the release's line, and they differ: the line is where the run turns
            assert len(low) == len(high) == 1 and low != high, (release, case, kv, cap, by_heads, line)
            checked += 1
    assert not turning, "read the release's rule into data/selector_heads.yaml:\n" + "\n".join(turning)
    assert checked >= 100  # 0.17.0 to 0.33.0: DSA on SM 10.x with a 16-bit cache


def test_each_rule_cites_a_line_of_the_release_it_is_read_from():
    rows = selector_picks._heads_rules()["vllm"]
    claimed = []
    for row in rows:
        first, last = (harvest.release_key(v) for v in row["releases"])
        assert first <= last, row["releases"]
        url = row["sources"][0]["url"]
        assert url.startswith(f"https://github.com/vllm-project/vllm/blob/v{row['releases'][0]}/") and "#L" in url, url
        claimed += [r for r in _releases() if first <= harvest.release_key(r) <= last]
    # no two rows claim one release (the first would hide the other), and the rows reach from 0.17.0, the first
    # release whose order takes the head count, to the newest run
    assert len(claimed) == len(set(claimed)), sorted(claimed)
    assert {"0.17.0", "0.33.0"} <= set(claimed) and "0.16.0" not in claimed

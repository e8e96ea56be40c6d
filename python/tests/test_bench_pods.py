"""takt bench pods's report from made-up rows: a baseline without a sample (its max 0) has no
takt/baseline ratio (n/a), and the report is made all the same."""

from __future__ import annotations

import json

import pytest

from takt.bench import pods

pytestmark = pytest.mark.release_pass  # pyproject.toml


def _rows(points, empty):
    """A row per point and variant, every latency 10-40 ms; the point empty names (sweep, x): its
    baseline took no sample (the program prints count 0 and zeros)."""
    rows = []
    for sweep, x, *_ in points:
        for variant in pods.CHAINS_VARIANTS if sweep == "chains" else ("takt", "baseline"):
            none = (sweep, x) == empty and variant == "baseline"
            ns = 0 if none else 20_000_000
            rows.append({"variant": variant, "sweep": sweep, "x": x, "count": 0 if none else 2, "min_ns": ns // 2,
                         "mean_ns": ns, "std_ns": ns // 10, "p50_ns": ns, "max_ns": ns * 2, "low_mean_ns": ns,
                         "low_max_ns": ns * 2, "holds": 0, "retransmissions": 0})
    return rows


@pytest.mark.parametrize("mcu", [False, True])
def test_a_baseline_without_samples_has_no_ratio(tmp_path, capsys, mcu):
    # report divided by the baseline's max: ZeroDivisionError, no report at all; report_mcu
    # divided by max(1, it): the takt max in ns given as the ratio
    points = pods.smoke_points(pods.sweep_points(True))
    rows = _rows(points, ("chains", 3))
    render, name = (pods.report_mcu, "pods_mcu") if mcu else (pods.report, "pods")
    assert render(rows, True, tmp_path, 2, points) == 0
    head = json.loads((tmp_path / f"{name}.json").read_text())["headline"]
    assert head["takt_over_baseline_max_at_3_chains"] is None and head["baseline_max_ms_at_3_chains"] == 0
    md = (tmp_path / f"{name}.md").read_text().splitlines()
    assert next(m for m in md if m.startswith("| chains | 3 |")).endswith("| n/a |")
    assert next(m for m in md if m.startswith("| chains | 1 |")).endswith("| 1.00 |")

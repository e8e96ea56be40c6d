"""takt bench dds's report from made-up measurements: ddsperf's per-second lines are read as
ddsperf prints them, the headline ratios are takt over ddsperf's one-way (takt's own ping-pong
halved beside it) and takt's p99 over rclpy's median, every goal is listed as met or not, and a missing peer is n/a, not a failure; the
chains' table and their loaded-over-unloaded ratio."""

from __future__ import annotations

import json

import pytest

from takt.bench import common, dds

pytestmark = pytest.mark.release_pass  # pyproject.toml

# a line of `ddsperf ping` output as Cyclone 0.10.2 prints it (µs; half the round trip: ddsperf
# halves it itself)
LINE = ("[7237] 1.000  vm:7224 size 64 mean 34.465us min 26.800us 50% 33.398us 90% 39.418us "
        "99% 50.474us max 50.474us cnt 99")


def test_ddsperf_line_is_read():
    m = dds.DDSPERF_LINE.search(LINE)
    assert m is not None
    assert (int(m.group(1)), float(m.group(3)), float(m.group(4)), float(m.group(5)), int(m.group(6))) == \
        (64, 33.398, 50.474, 50.474, 99)
    # already one-way: taken as printed (ns), not halved again
    row = dds.ddsperf_rows({64: [m]})[64]
    assert (row["p50"], row["p99"], row["max"], row["count"]) == (33398.0, 50474.0, 50474.0, 99)


def _samples(p50, p99):
    return {s: [p50 * 1e3, p50 * 1e3, p99 * 1e3] for s in dds.SIZES}


def _perf(*_a):
    m = dds.DDSPERF_LINE.search(LINE.replace("50% 33.398us", "50% 32.000us").replace("99% 50.474us", "99% 40.000us"))
    return {s: [m] for s in dds.SIZES}


def test_headline_ratios_and_goals(tmp_path, monkeypatch):
    # the writer thread's path, and the direct write's (pub-direct); ddsperf's one-way 32 us, as
    # printed (not halved again)
    monkeypatch.setattr(dds, "takt_samples",
                        lambda *a: _samples(18.0 if a[3:] == ("pub-direct",) else 20.0, 30.0))
    monkeypatch.setattr(dds, "ddsperf_seconds", _perf)
    monkeypatch.setattr(dds, "pingpong_samples", lambda *a: _samples(24.0, 30.0))
    monkeypatch.setattr(dds, "wake_samples", lambda count, period: [period * 2.0] * count)
    monkeypatch.setattr(dds, "rclpy_samples", lambda *a: {})  # no ROS 2 venv
    monkeypatch.setattr(dds, "chains_rows", lambda *a: _chains())
    assert dds.run(True, tmp_path) == 0
    r = json.loads((tmp_path / "dds.json").read_text())
    assert r["headline"]["p50_takt_over_ddsperf_64B"] == round(20 / 32, 2)
    assert r["headline"]["p50_takt_direct_over_ddsperf_64B"] == round(18 / 32, 2)
    assert r["headline"]["p50_takt_pingpong_over_ddsperf_64B"] == round(24 / 32, 2)
    # the hand-off's floor: wake-ups of 10 µs at 200 Hz, 40 µs at 50 Hz (made up: 2 ns per µs of
    # period); ping-pong 24 µs against ddsperf's 32 + 40
    assert r["headline"]["wake_p50_us_200Hz"] == 10.0 and r["headline"]["wake_p50_us_50Hz"] == 40.0
    assert r["headline"]["p50_takt_pingpong_over_ddsperf_plus_wake_64B"] == round(24 / 72, 2)
    assert "50 Hz p50 40.0 µs" in (tmp_path / "dds.md").read_text()
    assert r["headline"]["p99_takt_over_rclpy_p50_64B"] is None
    md = (tmp_path / "dds.md").read_text()
    assert "p50_takt_over_ddsperf_64B <= 1.1: met" in md
    assert "p99_takt_over_rclpy_p50_64B <= 1.0: n/a" in md
    assert "No rclpy" in md
    first, chains = md.split("## The top chain")
    for part in (first, chains):  # each table's rows have its header's columns
        rows = [l for l in part.splitlines() if l.startswith("|")]
        assert len({l.count("|") for l in rows}) == 1
    # the chains: loaded p99 over unloaded p99, with the lanes and with one lane
    assert r["headline"]["chains_top_p99_loaded_over_unloaded"] == 1.1
    assert r["headline"]["chains_top_p99_loaded_over_unloaded_one_lane"] == 40.0
    assert r["headline"]["chains_top_lost_loaded"] == 0
    assert "chains_top_p99_loaded_over_unloaded <= 1.2: met" in md
    assert "| loaded, one lane, no window | 150.0 | 10000.0 | 10000.0 | 19 / 20 | 400.0 | 0 | 0 |" in chains
    # the floor: the same ratio with no middleware, its rows without publisher statistics
    p99 = lambda us: common.percentiles([150e3, 150e3, us * 1e3])["p99"]  # noqa: E731
    floor_ratio = round(p99(320.0) / p99(200.0), 2)
    assert r["headline"]["chains_top_p99_loaded_over_unloaded_floor"] == floor_ratio
    assert f"| floor, loaded | 150.0 | {p99(320.0) / 1e3:.1f} | 320.0 | 20 / 20 | 1000.0 | — | — |" in chains
    assert f"the floor: {floor_ratio}." in chains


def _chains():
    def cell(p99_us, received, mbps, waits):
        return {"top": common.percentiles([150e3, 150e3, p99_us * 1e3]), "top_received": received,
                "top_published": 20, "low_MBps": mbps, "low_received": [5, 5], "seconds": 1.0,
                "publisher": {"window_waits": waits, "tx_queue_full": 0}}
    floor = lambda p99_us, mbps: dict(cell(p99_us, 20, mbps, 0), publisher={})  # noqa: E731
    return {"unloaded": cell(250.0, 20, None, 0), "loaded": cell(275.0, 20, 900.0, 30),
            "loaded, one lane, no window": cell(10000.0, 19, 400.0, 0),
            "floor, unloaded": floor(200.0, None), "floor, loaded": floor(320.0, 1000.0)}


def test_blocks_are_merged(monkeypatch):
    # the full run's blocks: every block's samples make one distribution per row
    calls = []
    def takt(count, period, domain, mode="pub"):
        calls.append((mode, domain))
        return {64: [float(len(calls))] * count}
    monkeypatch.setattr(dds, "takt_samples", takt)
    monkeypatch.setattr(dds, "ddsperf_seconds", lambda *a: {})
    monkeypatch.setattr(dds, "pingpong_samples",
                        lambda count, period, domain: calls.append(("ping", domain)) or {64: [1.0] * count})
    monkeypatch.setattr(dds, "wake_samples", lambda count, period: [period * 2.0] * count)
    monkeypatch.setattr(dds, "rclpy_samples", lambda *a: {})
    monkeypatch.setattr(dds, "chains_rows", lambda *a: {})
    monkeypatch.setattr(dds, "write_json", lambda out, name, r: calls.append(r))
    monkeypatch.setattr(dds, "write_markdown", lambda *a: None)
    assert dds.run(False, None) == 1  # three sizes and the chains missing
    modes = [c[0] for c in calls[:-1]]
    assert modes == ["pub", "pub-direct", "ping"] * dds.BLOCKS  # interleaved
    assert len({c[1] for c in calls[:-1]}) == 3 * dds.BLOCKS  # each on a domain of its own
    row = calls[-1]["rows"][0]
    assert row["takt"]["count"] == 2000 and row["takt_direct"]["count"] == 2000
    assert row["takt_pingpong"]["count"] == dds.PINGPONG_COUNT


def test_missing_takt_rows_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(dds, "takt_samples", lambda *a: {})
    monkeypatch.setattr(dds, "ddsperf_seconds", lambda *a: {})
    monkeypatch.setattr(dds, "pingpong_samples", lambda *a: _samples(24.0, 30.0))
    monkeypatch.setattr(dds, "wake_samples", lambda count, period: [period * 2.0] * count)
    monkeypatch.setattr(dds, "rclpy_samples", lambda *a: {})
    monkeypatch.setattr(dds, "chains_rows", lambda *a: _chains())
    assert dds.run(True, tmp_path) == 1


def test_missing_chains_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(dds, "takt_samples", lambda *a: _samples(20.0, 30.0))
    monkeypatch.setattr(dds, "ddsperf_seconds", lambda *a: {})
    monkeypatch.setattr(dds, "pingpong_samples", lambda *a: _samples(24.0, 30.0))
    monkeypatch.setattr(dds, "wake_samples", lambda count, period: [period * 2.0] * count)
    monkeypatch.setattr(dds, "rclpy_samples", lambda *a: {})
    monkeypatch.setattr(dds, "chains_rows", lambda *a: {})
    assert dds.run(True, tmp_path) == 1


def test_missing_pingpong_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(dds, "takt_samples", lambda *a: _samples(20.0, 30.0))
    monkeypatch.setattr(dds, "ddsperf_seconds", _perf)
    monkeypatch.setattr(dds, "pingpong_samples", lambda *a: {})
    monkeypatch.setattr(dds, "wake_samples", lambda count, period: [period * 2.0] * count)
    monkeypatch.setattr(dds, "rclpy_samples", lambda *a: {})
    monkeypatch.setattr(dds, "chains_rows", lambda *a: _chains())
    assert dds.run(True, tmp_path) == 1
    r = json.loads((tmp_path / "dds.json").read_text())
    assert r["headline"]["p50_takt_pingpong_over_ddsperf_64B"] is None


def test_chains_blocks_are_interleaved_and_pooled(monkeypatch):
    calls = []
    def cell(count, domain, low_period, extra):
        calls.append((low_period, tuple(extra), domain))
        k = len([c for c in calls if c[2] is not None])  # the takt parts so far
        return {"samples": [k * 1e3] * count, "published": count, "low_bytes": 1000000 * k,
                "low_seconds": 1.0, "low_received": [k, k], "seconds": 1.0,
                "publisher": {"window_waits": k, "tx_queue_full": 1, "lanes": 2, "releases": [k, 1, 1]}}
    monkeypatch.setattr(dds, "_chains_cell", cell)
    monkeypatch.setattr(dds, "_chains_floor_cell",
                        lambda count, low_period: calls.append((low_period, ("floor",), None)) or
                        {"samples": [1e3] * count, "published": count, "low_bytes": 0, "low_seconds": 1.0,
                         "low_received": [0, 0], "seconds": 1.0, "publisher": {}})
    rows = dds.chains_rows(40, 200, blocks=2)
    # unloaded, loaded, one lane, the floor's two; then the other way round: every takt part on a
    # domain of its own
    assert [c[:2] for c in calls] == [(0, ()), (1000, ()), (1000, ("1", "0")), (0, ("floor",)),
                                      (1000, ("floor",)), (1000, ("floor",)), (0, ("floor",)),
                                      (1000, ("1", "0")), (1000, ()), (0, ())]
    assert [c[2] for c in calls if c[2] is not None] == [200, 201, 202, 205, 204, 203]
    loaded = rows["loaded"]  # the 2nd and 5th takt parts
    assert loaded["top_received"] == 40 and loaded["top_published"] == 40 and loaded["blocks"] == 2
    assert loaded["top"]["min"] == 2e3 and loaded["top"]["max"] == 5e3
    assert loaded["low_MBps"] == 3.5  # (2 + 5) MB over 2 s
    assert loaded["low_received"] == [7, 7]
    assert loaded["publisher"] == {"window_waits": 7, "tx_queue_full": 2, "lanes": 2,
                                   "releases": [7, 2, 2]}


def test_chains_case_missing_a_block_is_left_out(monkeypatch):
    n = []
    def cell(count, domain, low_period, extra):
        n.append(1)
        if len(n) == 6:  # the second block's unloaded part (its last) fails
            return None
        return {"samples": [1e3] * count, "published": count, "low_bytes": 0, "low_seconds": 0.0,
                "low_received": [0, 0], "seconds": 1.0, "publisher": {}}
    monkeypatch.setattr(dds, "_chains_cell", cell)
    monkeypatch.setattr(dds, "_chains_floor_cell", lambda count, low_period: None)  # failed
    rows = dds.chains_rows(20, 100, blocks=2)
    assert sorted(rows) == ["loaded", "loaded, one lane, no window"]
    assert rows["loaded"]["low_MBps"] is None

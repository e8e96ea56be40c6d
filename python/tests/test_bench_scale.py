"""takt bench scale's report from a made-up result: every goal is listed with its value and
whether it is met, and every Markdown table row has as many cells as its header."""

from __future__ import annotations

from pathlib import Path

import pytest

from takt.bench import common, scale
from takt.bench.rosrt import SCENARIOS, TIMER_PLAN

pytestmark = pytest.mark.release_pass  # pyproject.toml


def _tp_row(op, threads, size, prio, rate):
    return {"op": op, "threads": threads, "size": size, "priority": prio, "sched_fifo": bool(prio), "runs": 2,
            "runs_discarded": 0, "max_start_late_us": 20.0, "messages": 1000, "errors": 0, "msgs_per_s": rate,
            "msgs_per_s_per_run": [rate * 0.9, rate * 1.1], "ns_per_msg": common.percentiles([100.0, 200.0])}


def _result():
    tp = []
    for size in scale.SIZES:
        for prio in (scale.THROUGHPUT_PRIO, 0):
            tp += [_tp_row("takt", 1, size, prio, 1e6), _tp_row("takt", 2, size, prio, 1.8e6)]
        tp += [_tp_row("memcpy", 1, size, scale.THROUGHPUT_PRIO, 1e7),
               _tp_row("memcpy", 2, size, scale.THROUGHPUT_PRIO, 2e7)]
    ov = []
    for loaded in (False, True):
        for scen in SCENARIOS:
            for ex, lat in (("preempt", 10e3), ("waitset", 40e3)):
                ov.append({"stress": loaded, "stress_present_throughout": True if loaded else None,
                           "scenario": scen, "executor": ex, "expected": 3, "received": 3, "over_1ms": 0,
                           **common.distribution([lat, lat, lat * 2])})
    tm = []
    for period, _ in TIMER_PLAN:
        for ex, j in (("preempt", 12e3), ("raw", 10e3)):
            tm.append({"period_us": period, "executor": ex, "abs": common.percentiles([j, j / 2]),
                       "signed_p1": -j, "signed_mean": 0.0, "signed_p99": j})
    watch = common.Neighbours()
    watch.sample()
    return {"benchmark": "scale", "command": "takt bench scale", "machine": common.machine(), "quick": True,
            "source": {"commit": "0" * 40, "dirty": False}, "elapsed_s": 1.0, "neighbours": watch.summary(),
            "throughput": {"duration_ms": 10, "blocks": 2, "batch": 64, "rows": tp},
            "overhead": {"count_per_run": 3, "period_us": 2000, "blocks": 1, "stress_timeout_s": 20, "rows": ov,
                         "floor": [{"stress": loaded, "received": 4, "expected": 4, "over_1ms": int(loaded),
                                    "steal_fraction": 0.1 if loaded else 0.0,
                                    **common.distribution([5e3, 6e3, 7e3, 2e6 if loaded else 8e3])}
                                   for loaded in (False, True)]},
            "timers": {"blocks": 1, "rows": tm}}


def test_headline_has_every_goal_and_the_report_says_which_are_met():
    result = _result()
    head = scale._headline(result)
    assert head["two_threads_over_one_64B"] == 1.8 and head["two_threads_over_one_4KB"] == 1.8
    assert head["fanout10_p99_preempt_over_waitset"] == 0.25
    for key, op, bound, _ in scale.GOALS:
        assert head[key] is not None, key
    assert head["timer_1000us_p99_jitter_preempt_over_raw"] == 1.2
    assert head["io_load_cyclictest_over_1ms_percent"] == 25.0 and head["no_load_cyclictest_over_1ms_percent"] == 0
    assert head["io_load_steal_percent"] == 10.0 and head["no_load_steal_percent"] == 0
    result["headline"] = head
    md = scale._markdown(result)
    goals = [line for line in md if line.startswith("| ") and ("| ≥" in line or "| ≤" in line)]
    assert len(goals) == len(scale.GOALS)
    assert all(line.endswith("| **yes** |") for line in goals), goals


def test_every_table_row_has_as_many_cells_as_its_header():
    result = _result()
    result["headline"] = scale._headline(result)
    header_cells = None
    for line in scale._markdown(result):
        if not line.startswith("|"):
            header_cells = None
            continue
        cells = line.replace("\\|", "").count("|") - 1
        if header_cells is None:
            header_cells = cells
        assert cells == header_cells, line


def test_neighbours_counts_other_processes_cpu_time():
    watch = common.Neighbours()
    watch.sample()
    s = watch.summary()
    assert s["samples"] == 1 and s["wall_s"] >= 0 and s["other_cpu_s"] >= 0


def test_cyclictest_counts_wake_ups_beyond_its_histogram(monkeypatch, tmp_path):
    """cyclictest prints its histogram and, apart, how many wake-ups fell beyond it: those count
    as the histogram's bound, not as nothing (they are the stalls a floor must show)."""
    fake = tmp_path / "cyclictest"
    fake.write_text("#!/bin/sh\nprintf '000003 000002\\n000010 000001\\n# Histogram Overflows: 00003\\n'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    got = common.cyclictest(6, 60, 2000)
    assert sorted(got) == [3e3, 3e3, 10e3, 20e6, 20e6, 20e6]


def test_steal_ticks_reads_proc_stat():
    v = common.steal_ticks()
    assert v is None or v >= 0


class _Quiet:
    def sample(self):
        pass


def _fake_throughput(missed):
    """run_native for takt-bench-scale's throughput runs: every thread 10^6 messages in the whole
    30 ms window, but the try n (from 1) of a cell for which missed(cell, n): a thread started
    10 ms late (a third of the window) with 10^9 messages."""
    tries = {}

    def run(exe, args):
        op, threads, size, prio = args[1], int(args[2]), int(args[3]), int(args[5])
        cell = (op, threads, size, prio)
        tries[cell] = tries.get(cell, 0) + 1
        late = missed(cell, tries[cell])
        return {"duration_ns": 30_000_000, "batch": 64, "sched_fifo": bool(prio),
                "workers": [{"cpu": i, "messages": 10**9 if late else 10**6, "elapsed_ns": 30_000_000,
                             "late_ns": 10_000_000 if late else 1000, "errors": 0, "batch_ns": [6400, 6400]}
                            for i in range(threads)]}

    return run


def test_a_run_that_missed_its_window_is_no_measurement(monkeypatch):
    """A block whose every try of a throughput cell missed the window (a thread started more than a
    tenth of it late) was kept as the cell's run of that block, its messages/s in the figures."""
    cell = ("takt", 2, 64, scale.THROUGHPUT_PRIO)
    # the cell's first block: every try late
    monkeypatch.setattr(scale, "run_native", _fake_throughput(lambda c, n: c == cell and n <= scale.RETRIES))
    tp = scale._throughput(Path("takt-bench-scale"), quick=False, load=_Quiet())
    row = scale._tp(tp["rows"], *cell)
    assert row["msgs_per_s"] == pytest.approx(2 * 10**6 / 0.03)  # the late runs' 10^9 messages left out
    assert (row["runs"], row["runs_missed"], row["runs_discarded"]) == (tp["blocks"] - 1, 1, scale.RETRIES)
    assert row["msgs_per_s_per_run"][0] is None and None not in row["msgs_per_s_per_run"][1:]
    assert row["messages"] == 2 * 10**6 * (tp["blocks"] - 1)
    # block by block: the other blocks, each against the same block of the 1-thread cell
    ratio, blocks = scale._scaling(tp["rows"], "takt", 64)
    assert ratio == 2.0 and blocks == [pytest.approx(2.0)] * (tp["blocks"] - 1)
    result = _result()
    result["throughput"] = tp
    result["headline"] = scale._headline(result)
    md = scale._markdown(result)
    line = next(m for m in md if m.startswith("| 64B | takt | FIFO 50 | 2 |"))
    assert f"| {tp['blocks'] - 1} ({scale.RETRIES}; 1 missed) |" in line, line


def test_a_cell_without_a_run_in_its_window_is_not_available(monkeypatch):
    """--quick: one block; a cell whose tries all missed the window has no figure (n/a), its
    ratios none, and the report is made all the same."""
    cell = ("takt", 2, 4096, scale.THROUGHPUT_PRIO)
    monkeypatch.setattr(scale, "run_native", _fake_throughput(lambda c, n: c == cell))
    tp = scale._throughput(Path("takt-bench-scale"), quick=True, load=_Quiet())
    row = scale._tp(tp["rows"], *cell)
    assert (row["msgs_per_s"], row["messages"]) == (None, 0)  # not the late run's 10^9 messages
    assert (row["runs"], row["runs_missed"]) == (0, 1)
    result = _result()
    result["throughput"] = tp
    head = scale._headline(result)
    assert head["two_threads_over_one_4KB"] is None and head["takt_2_threads_msgs_per_s_4KB"] is None
    assert head["two_threads_over_one_64B"] == 2.0
    result["headline"] = head
    md = scale._markdown(result)
    line = next(m for m in md if m.startswith("| 4KB | takt | FIFO 50 | 2 |"))
    assert line.startswith("| 4KB | takt | FIFO 50 | 2 | n/a | n/a | 0 (3; 1 missed) |"), line
    goal = next(m for m in md if "(`two_threads_over_one_4KB`)" in m)
    assert goal.endswith("| n/a | n/a |"), goal

"""`takt plot`: the figures of a run's result (chain latency from the histogram) and of its trace
(per-callback response times); the figures printed are checked against the run's own numbers."""

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"

pytest.importorskip("matplotlib")
pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("plot")
    import os
    import subprocess
    import sys
    env = dict(os.environ)
    env.setdefault("TAKT_BUILD_DIR", str(REPO / "build" / "release"))
    proc = subprocess.run([sys.executable, "-m", "takt", "run", str(REPO / "examples" / "robot.yaml"),
                           "--duration", "1", "--quiet", "--rt-priority", "0", "--out", str(d),
                           "--trace", str(d / "robot.pftrace")], capture_output=True, text=True, env=env,
                          cwd=d, timeout=120)
    assert proc.returncode in (0, 3), proc.stderr
    return d, json.loads((d / "run_robot_file.json").read_text())


def test_plot_of_a_result_matches_the_chains(takt, run):
    d, result = run
    proc = takt("plot", d / "run_robot_file.json", "--out", d / "chains.png", check=True)
    assert (d / "chains.png").read_bytes()[:8] == PNG
    lines = [l for l in proc.stdout.splitlines() if l.startswith("chain ")]
    assert len(lines) == 3
    for line, chain in zip(lines, result["chains"]):
        m = re.match(r"chain (\w+): (\d+) samples, p50 ([\d.]+) ms, p99 ([\d.]+) ms", line)
        assert m and m.group(1) == chain["name"] and int(m.group(2)) == chain["count"]
        # the same quantiles as the runner's (both from the histogram, clamped to min/max)
        assert float(m.group(3)) == pytest.approx(chain["p50_ns"] / 1e6, abs=1e-3)
        assert float(m.group(4)) == pytest.approx(chain["p99_ns"] / 1e6, abs=1e-3)


def test_plot_of_a_trace_has_every_callbacks_jobs(takt, run):
    d, result = run
    proc = takt("plot", d / "robot.pftrace", "--out", d / "callbacks.svg", check=True)
    assert (d / "callbacks.svg").read_text().lstrip().startswith("<?xml")
    jobs = {m.group(1): int(m.group(2)) for m in re.finditer(r"callback (\S+): (\d+) jobs", proc.stdout)}
    for cb in result["callbacks"]:
        assert jobs.get(f"{cb['node']}/{cb['name']}", 0) == cb["runs"], cb


def test_plot_errors(takt, tmp_path):
    proc = takt("plot", tmp_path / "nothing.json")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    bad = tmp_path / "empty.json"
    bad.write_text('{"chains": []}')
    proc = takt("plot", bad)
    assert proc.returncode == 1 and "no chain with latency samples" in proc.stderr
    proc = takt("plot", bad, "--out", tmp_path / "x.jpg")
    assert proc.returncode == 2 and "write .png or .svg" in proc.stderr
    # files that are no result or no trace: one line, no traceback
    for name, text, says in (("list.json", "[]", "not a takt run result"),
                             ("zero.json", '{"chains": [{"name": "c", "histogram": [[1000, 0]]}]}',
                              "a histogram with no samples"),
                             ("notrace.yaml", "name: x\n", "not a Perfetto trace")):
        f = tmp_path / name
        f.write_text(text)
        proc = takt("plot", f)
        assert proc.returncode == 1 and says in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_plot_of_a_trace_without_perfetto_says_what_it_needs(tmp_path, monkeypatch, capsys):
    # the ImportError handler came after `except Exception`, which re-raised it: a traceback
    import sys

    from takt import cli
    trace = tmp_path / "x.pftrace"
    trace.write_bytes(b"\x0a\x00")
    for mod in ("perfetto", "perfetto.protos", "perfetto.protos.perfetto", "perfetto.protos.perfetto.trace",
                "perfetto.protos.perfetto.trace.perfetto_trace_pb2"):
        monkeypatch.setitem(sys.modules, mod, None)
    assert cli.main(["plot", str(trace), "--out", str(tmp_path / "x.png")]) == 2
    assert "reading a trace needs PyPI perfetto" in capsys.readouterr().err

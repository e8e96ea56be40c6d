"""`takt run --trace`: the Perfetto trace of the robot demo, decoded with Perfetto's own protos
(perfetto.protos.perfetto.trace.perfetto_trace_pb2 from PyPI `perfetto`): every callback's jobs
are there, each starts at or after its release and ends at or after its start, publications link
to the jobs that consumed them, and jobs sit on the tracks of the threads that ran them."""

import json
from collections import defaultdict
from pathlib import Path

import pytest

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="PyPI perfetto (tools/deps.sh installs it into .venv)")

REPO = Path(__file__).resolve().parents[2]
BEGIN, END, INSTANT = 1, 2, 3


MONOTONIC, BOOTTIME = 3, 6  # Perfetto's builtin clocks


def load(path):
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    # takt's times are CLOCK_MONOTONIC's: the first packet relates that clock to BOOTTIME
    # (Perfetto's default) and makes it the trace's clock; every timestamp says it is MONOTONIC's
    first = trace.packet[0]
    assert first.HasField("clock_snapshot"), first
    clocks = {c.clock_id: c.timestamp for c in first.clock_snapshot.clocks}
    assert set(clocks) == {MONOTONIC, BOOTTIME} and first.clock_snapshot.primary_trace_clock == MONOTONIC
    assert clocks[BOOTTIME] > 0 and clocks[MONOTONIC] > 0
    assert all(p.timestamp_clock_id == MONOTONIC for p in trace.packet[1:] if p.HasField("timestamp"))
    tracks, events = {}, []
    for pkt in trace.packet:
        if pkt.HasField("track_descriptor"):
            tracks[pkt.track_descriptor.uuid] = pkt.track_descriptor
        elif pkt.HasField("track_event"):
            events.append((pkt.timestamp, pkt.track_event))
    return tracks, events


def annotations(te):
    return {a.name: a.int_value for a in te.debug_annotations}


def jobs_of(events):
    """Pair each slice begin with its end, per track (the writer emits them as pairs)."""
    jobs = []
    pending = None
    for ts, te in events:
        if te.type == BEGIN:
            assert pending is None, "a begin without its end"
            pending = (ts, te)
        elif te.type == END:
            assert pending is not None and pending[1].track_uuid == te.track_uuid
            jobs.append({"name": pending[1].name, "track": te.track_uuid, "start": pending[0], "end": ts,
                         "args": annotations(pending[1]), "flows": list(pending[1].flow_ids)})
            pending = None
    assert pending is None
    return jobs


@pytest.mark.parametrize("executor", ["tide", "preempt"])
def test_trace_of_the_robot_demo(takt, tmp_path, executor):
    trace_path = tmp_path / "robot.pftrace"
    proc = takt("run", REPO / "examples" / "robot.yaml", "--executor", executor, "--duration", "0.5",
                "--quiet", "--rt-priority", "0", "--out", tmp_path, "--trace", trace_path)
    assert proc.returncode in (0, 3), proc.stderr  # 3: a hard violation on a loaded machine
    assert "trace written to" in proc.stderr
    result = json.loads((tmp_path / f"run_robot_{executor}.json").read_text())
    tracks, events = load(trace_path)

    process = [t for t in tracks.values() if t.HasField("process")]
    assert len(process) == 1 and process[0].process.process_name == "robot"
    threads = {u: t for u, t in tracks.items() if t.HasField("thread")}
    assert threads and all(t.parent_uuid == process[0].uuid for t in threads.values())

    jobs = jobs_of(events)
    by_name = defaultdict(list)
    for j in jobs:
        assert j["track"] in threads  # on the track of the thread that ran it
        assert j["start"] >= j["args"]["release_ns"], j
        assert j["end"] >= j["start"], j
        by_name[j["name"]].append(j)
    # every callback that ran has its jobs in the trace (the ring holds far more than 0.5 s)
    for cb in result["callbacks"]:
        if cb["runs"] > 0:
            assert len(by_name[f"{cb['node']}/{cb['name']}"]) == cb["runs"], cb

    # chains linked: each subscription job's flow comes from a publication no later than it
    publish = {}
    for ts, te in events:
        if te.type == INSTANT and te.name.startswith("publish "):
            assert len(te.flow_ids) == 1
            publish[te.flow_ids[0]] = (ts, te.name[len("publish "):])
    kinds = {f"{c['node']}/{c['name']}": c["kind"] for c in result["callbacks"]}
    linked = 0
    for j in jobs:
        if kinds.get(j["name"]) == "subscription":
            assert len(j["flows"]) == 1, j
            ts, _topic = publish[j["flows"][0]]
            assert ts <= j["start"]
            linked += 1
        else:
            assert j["flows"] == []
    assert linked > 0
    # the safety chain end to end: bumper_sample publishes bumper_raw, bumper_filter consumes it
    filt = by_name["perception/bumper_filter"]
    assert filt and all(publish[j["flows"][0]][1] == "bumper_raw" for j in filt)


def test_trace_option_errors(takt, tmp_path):
    proc = takt("run", REPO / "examples" / "robot.yaml", "--duration", "0.2", "--quiet",
                "--rt-priority", "0", "--out", tmp_path, "--trace", tmp_path / "no" / "such" / "dir.pftrace")
    assert proc.returncode == 1
    assert "cannot write the trace to" in proc.stderr

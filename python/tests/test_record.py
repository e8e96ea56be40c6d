"""`takt record` / `takt play`: an MCAP recording of a running system read back with PyPI `mcap`
(every message present, in order, with its payload), and a replay into another system recorded
again: the same messages in the same order, their age kept within 1 ms, their spacing within
1 ms of the recorded one (95 % of them; all within 5 ms on a loaded machine)."""

import errno
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import start_system, stop_system

mcap_reader = pytest.importorskip("mcap.reader")

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TAKT_BUILD_DIR", REPO / "build" / "release"))

SOURCE = """name: source
executor: tide
duration_s: 60
topics:
  - {name: scan, size: 32}
  - {name: odom, size: 16}
nodes:
  - name: sensors
    timers:
      - {name: lidar, period_ms: 50, work_us: 100, publish: scan}
      - {name: wheels, period_ms: 200, phase_ms: 7, work_us: 50, publish: odom}
  - name: consumer
    subscriptions:
      - {name: use_scan, topic: scan, work_us: 50}
      - {name: use_odom, topic: odom, work_us: 50}
"""

SINK = """name: sink
executor: tide
duration_s: 60
topics:
  - {name: scan, size: 32}
  - {name: odom, size: 16}
nodes:
  - name: consumer
    subscriptions:
      - {name: use_scan, topic: scan, work_us: 50}
      - {name: use_odom, topic: odom, work_us: 50}
"""


def takt(*args, timeout=60, **kw):
    return subprocess.Popen([sys.executable, "-m", "takt", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, TAKT_BUILD_DIR=str(BUILD)), **kw)


def read(path: Path):
    """{topic: [(log_time, publish_time, sequence, data)]} and the channels' encodings."""
    out, enc = {}, {}
    with open(path, "rb") as f:
        for schema, channel, m in mcap_reader.make_reader(f).iter_messages(log_time_order=True):
            out.setdefault(channel.topic, []).append((m.log_time, m.publish_time, m.sequence, m.data))
            enc[channel.topic] = (channel.message_encoding, schema)
    return out, enc


def test_record_then_play_into_another_system(tmp_path, runtime_dir):
    (tmp_path / "source.yaml").write_text(SOURCE)
    (tmp_path / "sink.yaml").write_text(SINK)
    first = tmp_path / "first.mcap"
    src, _ = start_system(tmp_path / "source.yaml", runtime_dir)
    try:
        rec = takt("record", "scan", "odom", "-o", first, "--duration", "2", "--system", "source")
        out, err = rec.communicate(timeout=30)
        assert rec.returncode == 0, err
    finally:
        stop_system(src)
    msgs, enc = read(first)
    assert set(msgs) == {"/scan", "/odom"}
    assert enc["/scan"][0] == "takt-bytes" and enc["/scan"][1] is None
    for topic, size, period in (("/scan", 32, 50e6), ("/odom", 16, 200e6)):
        ms = msgs[topic]
        seqs = [s for _, _, s, _ in ms]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"{topic}: a message is missing"
        assert len(ms) >= 2.0 / (period / 1e9) - 3
        for log_time, publish_time, seq, data in ms:
            assert len(data) == size
            # the runner's payload: the publication count in the first 8 bytes
            assert int.from_bytes(data[:8], "little") == seq
            assert publish_time <= log_time  # origin time, then publication
    assert f"recorded {len(msgs['/scan']) + len(msgs['/odom'])} messages" in out

    # replay into a system where nothing publishes these topics, recording it again
    second = tmp_path / "second.mcap"
    total = len(msgs["/scan"]) + len(msgs["/odom"])
    # the replay publishes just below the executor's SCHED_FIFO priority (where permitted)
    sink, _ = start_system(tmp_path / "sink.yaml", runtime_dir, rt_priority=60)
    try:
        rec = takt("record", "scan", "odom", "-o", second, "-n", total, "--duration", "20", "--system", "sink")
        time.sleep(1.0)  # the recorder is sampling
        play = takt("play", first, "--system", "sink")
        pout, perr = play.communicate(timeout=60)
        assert play.returncode == 0, perr
        assert f"played {total} messages" in pout
        out, err = rec.communicate(timeout=30)
        assert rec.returncode == 0, err
        # a topic the recording does not have is named, with those it has
        bad = takt("play", first, "nosuch", "--system", "sink")
        bout, berr = bad.communicate(timeout=30)
        assert bad.returncode == 1 and berr.strip() == (f"takt play: {first} has no topic /nosuch "
                                                        "(its topics: /odom, /scan)"), berr
    finally:
        stop_system(sink)
    again, _ = read(second)
    for topic in ("/scan", "/odom"):
        a, b = msgs[topic], again[topic]
        assert [d for *_, d in b] == [d for *_, d in a], f"{topic}: other messages or another order"
        for (la, pa, _, _), (lb, pb, _, _) in zip(a, b):
            assert abs((lb - pb) - (la - pa)) <= 1_000_000, "the age of the data is kept within 1 ms"
    # the pace: every message's offset from the first within 1 ms of the recorded one
    ta = sorted(l for t in ("/scan", "/odom") for l, *_ in msgs[t])
    tb = sorted(l for t in ("/scan", "/odom") for l, *_ in again[t])
    errors = sorted(abs((y - tb[0]) - (x - ta[0])) for x, y in zip(ta, tb))
    # the replay publishes from a SCHED_FIFO thread sleeping until each instant: within 1 ms of
    # the recorded pace; a wake-up the machine delays (a hypervisor pause, a loaded CI machine)
    # may take one message beyond that, never far: 8 ms was seen once in CI, a replay that lost
    # its pace is off by a period (50 ms) or more (the figures of a quiet run: docs/recording.md)
    within = sum(e <= 1_000_000 for e in errors) / len(errors)
    assert within >= 0.95, f"only {within:.0%} of the messages within 1 ms of the recorded pace"
    assert errors[-1] <= 20_000_000, f"replayed {errors[-1] / 1e6:.3f} ms off the recorded pace"


def test_record_errors(tmp_path, runtime_dir):
    p = takt("record", "scan")
    _, err = p.communicate(timeout=30)
    assert p.returncode == 1 and "no running takt system" in err
    p = takt("play", tmp_path / "none.mcap")
    _, err = p.communicate(timeout=30)
    assert p.returncode in (1, 2)
    # a file that is no recording: said in one line, before any system is looked for (it was
    # mcap's InvalidMagic traceback, and only with a system running)
    (tmp_path / "garbage.mcap").write_bytes(b"not a recording at all\n")
    p = takt("play", tmp_path / "garbage.mcap")
    _, err = p.communicate(timeout=30)
    assert p.returncode == 2 and "not an MCAP recording (InvalidMagic" in err, err
    assert "Traceback" not in err


def test_record_generated_types_with_their_schemas(tmp_path, runtime_dir):
    """examples/talker.c: std_msgs/String and sensor_msgs/JointState in ROS 1 serialization and
    in CDR. The recording decodes with mcap's ROS 1 and ROS 2 decoders (from the schemas in the
    file alone) and with rosbags' type stores: a ROS 1 type's CDR is ROS 2's layout (its Header
    without seq, its stamp a builtin_interfaces/Time)."""
    mcap_ros1 = pytest.importorskip("mcap_ros1.decoder")
    mcap_ros2 = pytest.importorskip("mcap_ros2.decoder")
    typesys = pytest.importorskip("rosbags.typesys")
    talker = BUILD / "msgs" / "takt-talker"
    if not talker.exists():
        pytest.skip("takt-talker is built with the generated message types (TAKT_BUILD_MESSAGES)")
    proc = subprocess.Popen([str(talker), "20"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sock = runtime_dir / "takt" / f"talker.{proc.pid}.sock"
    deadline = time.monotonic() + 10
    while not sock.exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    out = tmp_path / "talk.mcap"
    try:
        rec = takt("record", "-a", "-o", out, "-n", "50", "--duration", "15", "--system", "talker")
        _, err = rec.communicate(timeout=30)
        assert rec.returncode == 0, err
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ros1 = typesys.get_typestore(typesys.Stores.ROS1_NOETIC)
    ros2 = typesys.get_typestore(typesys.Stores.ROS2_HUMBLE)
    seen = {}
    with open(out, "rb") as f:
        reader = mcap_reader.make_reader(f, decoder_factories=[mcap_ros1.DecoderFactory(), mcap_ros2.DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=True):
            seen.setdefault(channel.topic, []).append(decoded)
            if channel.topic == "/chatter":
                assert (schema.name, schema.encoding, channel.message_encoding) == ("std_msgs/String", "ros1msg", "ros1")
                assert decoded.data == ros1.deserialize_ros1(message.data, "std_msgs/msg/String").data
            elif channel.topic == "/joints":
                assert (schema.name, schema.encoding) == ("sensor_msgs/JointState", "ros1msg")
                assert "MSG: std_msgs/Header" in schema.data.decode()
                other = ros1.deserialize_ros1(message.data, "sensor_msgs/msg/JointState")
                assert list(other.name) == list(decoded.name) == ["shoulder", "elbow"]
                assert decoded.header.frame_id == "base_link" and len(decoded.position) == 2
            elif channel.topic == "/chatter_cdr":
                assert (schema.name, schema.encoding, channel.message_encoding) == ("std_msgs/msg/String", "ros2msg", "cdr")
                assert decoded.data == ros2.deserialize_cdr(message.data, "std_msgs/msg/String").data
            elif channel.topic == "/joints_cdr":
                assert (schema.name, schema.encoding, channel.message_encoding) == \
                    ("sensor_msgs/msg/JointState", "ros2msg", "cdr")
                text = schema.data.decode()
                assert "MSG: builtin_interfaces/Time" in text and "seq" not in text
                other = ros2.deserialize_cdr(message.data, "sensor_msgs/msg/JointState")
                assert list(other.name) == list(decoded.name) == ["shoulder", "elbow"]
                assert other.header.frame_id == decoded.header.frame_id == "base_link"
                assert other.header.stamp.sec == decoded.header.stamp.sec > 0
                assert other.header.stamp.nanosec == decoded.header.stamp.nanosec
                assert list(other.position) == list(decoded.position) and other.position[1] == -0.25
    assert set(seen) == {"/chatter", "/joints", "/chatter_cdr", "/joints_cdr"}
    assert sum(len(v) for v in seen.values()) == 50
    counts = [int(m.data.split()[1]) for m in seen["/chatter"]]
    assert counts == list(range(counts[0], counts[0] + len(counts))), "every message, in order"
    assert all(m.data.startswith("cdr ") for m in seen["/chatter_cdr"])


def test_record_section_of_a_system_file(tmp_path, runtime_dir):
    def run_recording(name: str, record: str):
        system = tmp_path / f"{name}.yaml"
        system.write_text(SOURCE.replace("duration_s: 60", "duration_s: 1.5") + f"record: {record}\n")
        p = takt("run", system, "--quiet", "--rt-priority", "0", "--out", tmp_path / "res", cwd=tmp_path)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert f"into {tmp_path / (name + '.mcap')}" in err
        return read(tmp_path / f"{name}.mcap")[0]

    msgs = run_recording("rec", "{file: rec.mcap, topics: [scan]}")
    assert list(msgs) == ["/scan"]
    seqs = [s for _, _, s, _ in msgs["/scan"]]
    assert len(seqs) >= 25 and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    # without topics: every topic (the recorder was not started at all: no file, no word)
    msgs = run_recording("every", "{file: every.mcap}")
    assert "/scan" in msgs and len(msgs["/scan"]) >= 25
    bad = tmp_path / "bad.yaml"
    bad.write_text(SOURCE + "record: {file: out.mcap, topics: [nosuch]}\n")
    p = takt("check", bad)
    _, err = p.communicate(timeout=30)
    assert p.returncode != 0 and "record: no topic named 'nosuch' in the system" in err
    # topics that are no list: the runner names it in one line (the recorder raised a traceback)
    bad.write_text(SOURCE + "record: {file: out.mcap, topics: 5}\n")
    p = takt("run", bad, "--quiet", "--rt-priority", "0", "--out", tmp_path / "res", cwd=tmp_path)
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0 and "Traceback" not in err and "topics" in err, err


def test_a_type_without_its_definition_here_is_said_before_the_file_is_made(tmp_path, monkeypatch):
    # a ROS 1 type whose .msg this host lacks: MsgError went past record (a traceback) after the
    # MCAP file was begun (a truncated file left behind)
    from takt.commands import graph, record
    topic = {"name": "odd", "type": "no_such_pkg/Odd", "size": 8, "serialized": True,
             "hash": "0123456789abcdef0123456789abcdef"}
    monkeypatch.setattr(record, "_topics", lambda path, wanted, all_topics: ("sys", [topic]))
    out = tmp_path / "odd.mcap"
    with pytest.raises(graph.NoSystem, match=r"topic /odd: its type's definition is needed"):
        record.record_endpoint(tmp_path / "sys.sock", [], out)
    assert not out.exists()


class _Disk(io.FileIO):
    """A file on a disk with room bytes free: a write takes what fits, as write(2) does, and one
    on the full disk fails with ENOSPC; freed: the disk has room again after that failure (another
    process made room)."""

    def __init__(self, path, room: int, freed: bool = False):
        super().__init__(path, "wb")
        self.room, self.freed = room, freed

    def write(self, b):
        room = self.room - self.tell()
        if room <= 0:
            if self.freed:
                self.room = 1 << 40
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(memoryview(b)[:room])


def _record_onto(monkeypatch, capsys, tmp_path, freed: bool):
    """`takt record` of 40 messages of 64 KiB (incompressible: mcap writes its 1 MiB chunk in the
    recording, not at its end) into a file with 256 KiB of room; its status, stdout, stderr."""
    from takt import cli
    from takt.commands import record
    topic = {"name": "scan", "type": "blob", "size": 65536}
    msgs = [{"topic": "scan", "t_data_ns": 1000 + i, "t_info_ns": 900 + i, "seq": i,
             "bytes": os.urandom(65536).hex()} for i in range(40)]
    monkeypatch.setattr(record, "endpoints", lambda system: [tmp_path / "sys.sock"])
    monkeypatch.setattr(record, "one_system", lambda found: found[0])
    monkeypatch.setattr(record, "_topics", lambda path, wanted, all_topics: ("sys", [topic]))
    monkeypatch.setattr(record, "request", lambda path, line, timeout: iter(msgs + [{"end": True}]))
    monkeypatch.setattr(record, "open", lambda path, mode: io.BufferedWriter(_Disk(path, 256 << 10, freed)),
                        raising=False)
    out = tmp_path / "out.mcap"
    status = cli.main(["record", "scan", "-o", str(out)])
    o, e = capsys.readouterr()
    return status, o, e, out


def test_record_a_full_disk_is_an_error_naming_the_file(tmp_path, monkeypatch, capsys):
    # the file's OSError was taken for the endpoint's (the system stopped): the recording ended
    # there, and the finishing's own failure came out as "[Errno 28] ..." without the file
    status, o, e, out = _record_onto(monkeypatch, capsys, tmp_path, freed=False)
    assert status == 1 and o == "", (status, o, e)
    assert e == f"takt record: cannot write {out}: No space left on device\n", e
    assert out.read_bytes()[:8] == b"\x89MCAP0\r\n"  # what was written is kept


def test_record_a_write_that_failed_is_no_end_of_the_system(tmp_path, monkeypatch, capsys):
    # a write that failed once (the disk had room again after it) ended the recording as if the
    # system had stopped: status 0, "recorded N messages", the chunk lost without a word
    status, o, e, out = _record_onto(monkeypatch, capsys, tmp_path, freed=True)
    assert status == 1 and o == "", o
    assert e == f"takt record: cannot write {out}: No space left on device\n", e
    with open(out, "rb") as f:  # finished all the same: a footer and its summary (readable)
        summary = mcap_reader.make_reader(f).get_summary()
    assert summary is not None and [c.topic for c in summary.channels.values()] == ["/scan"]


def _record_stream(monkeypatch, capsys, tmp_path, samples, topics=None):
    """`takt record` of an endpoint whose echo answers samples (then its end line): its status,
    stdout, stderr and the messages of the file ({topic: [(log_time, publish_time, seq, data)]})."""
    from takt import cli
    from takt.commands import record
    topics = topics or [{"name": "scan", "type": "blob", "size": 4}]
    monkeypatch.setattr(record, "endpoints", lambda system: [tmp_path / "sys.sock"])
    monkeypatch.setattr(record, "one_system", lambda found: found[0])
    monkeypatch.setattr(record, "_topics", lambda path, wanted, all_topics: ("sys", topics))
    monkeypatch.setattr(record, "request", lambda path, line, timeout: iter(samples + [{"end": "count"}]))
    out = tmp_path / "out.mcap"
    status = cli.main(["record", "-o", str(out)])
    o, e = capsys.readouterr()
    return status, o, e, (read(out)[0] if out.exists() else None)


def _sample(seq, t_info, topic="scan"):
    return {"topic": topic, "seq": seq, "t_info_ns": t_info, "t_data_ns": 5_000_000_000 + seq,
            "taken_ns": 0, "size": 4, "bytes": f"{seq:08x}"}


def test_record_an_origin_time_before_the_clock_start_is_written_as_0(tmp_path, monkeypatch, capsys):
    # an origin time before the clock's start (an old header.stamp from ROS 1, a play line with
    # an age larger than the clock) went to MCAP's unsigned publish_time: a struct.error traceback
    # that ended the recording
    samples = [_sample(1, 4_000_000_000), _sample(2, -3_000_000_000), _sample(3, 4_000_000_003)]
    status, o, e, msgs = _record_stream(monkeypatch, capsys, tmp_path, samples)
    assert status == 0 and e == "", e
    assert "recorded 3 messages" in o
    assert [(p, s) for _, p, s, _ in msgs["/scan"]] == [(4_000_000_000, 1), (0, 2), (4_000_000_003, 3)]


def test_record_a_message_the_endpoint_could_not_serialize_is_left_out(tmp_path, monkeypatch, capsys):
    # the endpoint's line for a message it could not serialize (its header and an error, no
    # bytes) ended the whole recording; its own error line (no topic) still ends it
    bad = {k: v for k, v in _sample(2, 1).items() if k != "bytes"}
    bad["error"] = "message size does not match its type"
    samples = [_sample(1, 1), bad, _sample(3, 1), dict(bad, seq=4), _sample(5, 1)]
    status, o, e, msgs = _record_stream(monkeypatch, capsys, tmp_path, samples)
    assert status == 0, e
    assert "recorded 3 messages" in o
    assert [s for _, _, s, _ in msgs["/scan"]] == [1, 3, 5]
    assert e.splitlines() == [
        "takt record: /scan: message seq 2 left out: the endpoint could not serialize it "
        "(message size does not match its type); going on",
        "takt record: /scan: 2 messages left out in all: the endpoint could not serialize them"], e
    status, o, e, msgs = _record_stream(monkeypatch, capsys, tmp_path,
                                        [_sample(1, 1), {"error": "no topic named 'scan'"}])
    assert status == 1 and e == "takt record: no topic named 'scan'\n", e


def test_record_limits_are_named_as_options_and_no_file_is_made(tmp_path, runtime_dir):
    # limits of the endpoint's echo came out as its usage line (`usage: echo TOPIC[,TOPIC...]
    # COUNT TIMEOUT_MS`), an empty .mcap left behind; a system without topics the same
    (tmp_path / "source.yaml").write_text(SOURCE)
    (tmp_path / "none.yaml").write_text("name: none\nduration_s: 60\nnodes:\n  - name: n\n"
                                        "    timers: [{name: t, period_ms: 100}]\n")
    src, _ = start_system(tmp_path / "source.yaml", runtime_dir)
    none, _ = start_system(tmp_path / "none.yaml", runtime_dir)
    out = tmp_path / "x.mcap"
    try:
        for args, said in (
                (["--duration", "100000", "--system", "source"],
                 "--duration 100000: give seconds from 0.001 to 86400"),
                (["--duration", "0.0001", "--system", "source"],
                 "--duration 0.0001: give seconds from 0.001 to 86400"),
                (["-n", "20000000", "--system", "source"],
                 "-n 20000000: give 1 to 10000000 messages (0: until --duration or Ctrl-C)"),
                (["--system", "none"], "system 'none' has no topics to record")):
            p = takt("record", "-o", out, *args)
            _, err = p.communicate(timeout=30)
            assert p.returncode == 1 and err == f"takt record: {said}\n", (args, err)
            assert not out.exists(), args
    finally:
        stop_system(src)
        stop_system(none)


def test_play_fixes_its_start_once_its_lines_are_formatted(tmp_path, monkeypatch):
    # the start (now + 200 ms) was fixed before the lines were formatted: on a large recording
    # the first instants had passed when the stream began. Here formatting one message's bytes
    # takes a second of a fake clock, and the first line's instant must be ahead of that clock
    # when the stream is sent (no real time is measured)
    import argparse
    import mcap.reader
    from mcap.writer import Writer
    from takt.commands import record
    rec = tmp_path / "rec.mcap"
    with open(rec, "wb") as f:
        w = Writer(f)
        w.start()
        ch = w.register_channel("/scan", "takt-bytes", 0)
        for i in range(5):
            w.add_message(ch, log_time=1_000_000_000 + i * 50_000_000, publish_time=1_000_000_000,
                          data=bytes([i]) * 4, sequence=i)
        w.finish()
    clock = [0]

    class SlowBytes(bytes):
        def hex(self, *a):
            clock[0] += 1_000_000_000
            return super().hex(*a)

    real_make_reader = mcap.reader.make_reader

    class Reader:
        def __init__(self, f):
            self.r = real_make_reader(f)

        def get_header(self):
            return self.r.get_header()

        def iter_messages(self, **kw):
            for schema, channel, m in self.r.iter_messages(**kw):
                m.data = SlowBytes(m.data)
                yield schema, channel, m

    sent = {}

    def fake_stream(path, first, chunks, timeout):
        sent["now"] = clock[0]
        sent["text"] = "".join(c if isinstance(c, str) else c.decode() for c in chunks)
        return {"played": 5, "late_max_ns": 0}

    monkeypatch.setattr(mcap.reader, "make_reader", Reader)
    monkeypatch.setattr(record.time, "monotonic_ns", lambda: clock[0])
    monkeypatch.setattr(record, "endpoints", lambda system: [tmp_path / "sys.sock"])
    monkeypatch.setattr(record, "one_system", lambda found: found[0])
    monkeypatch.setattr(record, "one", lambda path, line: {"name": "sink", "topics": [
        {"name": "scan", "type": "takt/Bytes4", "size": 4}]})
    monkeypatch.setattr(record, "stream", fake_stream)
    args = argparse.Namespace(command="play", file=rec, topics=[], rate=1.0, system=None)
    assert record.play(args) == 0
    lines = sent["text"].splitlines()
    assert lines[-1] == "end" and len(lines) == 6
    ats = [int(l.split()[0]) for l in lines[:-1]]
    assert ats[0] == sent["now"] + 200_000_000, "the first instant is 200 ms after the lines are ready"
    assert [a - ats[0] for a in ats] == [i * 50_000_000 for i in range(5)]
    assert lines[0].split()[1:] == ["scan", "00000000", "0"]


def test_a_cdr_schema_names_its_fields_as_ros2_does(tmp_path):
    # the ros2msg schema of a CDR topic came from the ROS 1 definition with its field names:
    # sensor_msgs/CameraInfo's D, K, R, P (ROS 2: d, k, r, p), which mcap-ros2-support refuses
    mcap_ros2 = pytest.importorskip("mcap_ros2.decoder")
    from mcap.writer import Writer
    from takt import msgcodec
    from takt.commands import record
    topic = {"name": "camera_info", "type": "sensor_msgs/CameraInfo", "size": 4096, "serialized": True,
             "hash": "sensor_msgs::msg::dds_::CameraInfo_"}
    name, encoding, data = record.schema_of(topic, record.encoding_of(topic))
    assert (name, encoding) == ("sensor_msgs/msg/CameraInfo", "ros2msg")
    assert "float64[9] k\n" in data.decode() and "float64[12] p\n" in data.decode()
    reg = msgcodec.registry()
    value = {"header": {"frame_id": "cam"}, "width": 640, "height": 480, "distortion_model": "plumb_bob",
             "D": [0.1, -0.2, 0, 0, 0], "K": [500.0, 0, 320, 0, 500, 240, 0, 0, 1]}
    msg = msgcodec.encode_cdr(reg, reg.load_msg("sensor_msgs/CameraInfo"), value)
    out = tmp_path / "cam.mcap"
    with open(out, "wb") as f:
        w = Writer(f)
        w.start()
        ch = w.register_channel("/camera_info", "cdr", w.register_schema(name, encoding, data))
        w.add_message(ch, log_time=1, publish_time=1, data=msg)
        w.finish()
    with open(out, "rb") as f:
        reader = mcap_reader.make_reader(f, decoder_factories=[mcap_ros2.DecoderFactory()])
        (_, _, _, decoded), = list(reader.iter_decoded_messages())
    assert decoded.header.frame_id == "cam" and decoded.width == 640
    assert list(decoded.d) == [0.1, -0.2, 0, 0, 0] and list(decoded.k)[::4] == [500.0, 500.0, 1.0]

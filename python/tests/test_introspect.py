"""`takt node|topic|service|chain` against running systems (the runner's introspection endpoint):
exact node and topic lists, echo of known messages, hz within 5 % of the publishing rate, pub
reaching a subscriber, a service call, chains, and the endpoint's owner-only permissions."""

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import free_port, start_system, stop_system, wait_for

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TAKT_BUILD_DIR", REPO / "build" / "release"))

ROBOT_NODES = ["/actuation", "/control", "/diagnostics", "/drivers", "/perception"]
ROBOT_TOPICS = ["/avoid_cmd", "/bumper_raw", "/camera_image", "/contact", "/detections", "/lidar_scan",
                "/obstacles", "/stop_cmd", "/track_cmd"]


def cli(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "takt", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, TAKT_BUILD_DIR=str(BUILD)))


@pytest.fixture
def robot(runtime_dir):
    proc, sock = start_system(REPO / "examples" / "robot.yaml", runtime_dir, duration=30)
    yield sock
    stop_system(proc)
    assert not sock.exists(), "the endpoint's socket file is removed at the end"


def test_node_and_topic_lists(robot):
    r = cli("node", "list")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ROBOT_NODES
    # an endpoint file left by a process that died, whose pid runs something else now (pid 1):
    # nobody answers there, and the running system is still listed
    stale = robot.parent / "ghost.1.sock"
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(stale))
    s.close()
    try:
        r = cli("node", "list")
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ROBOT_NODES
    finally:
        stale.unlink()
    r = cli("topic", "list")
    assert r.stdout.split() == ROBOT_TOPICS
    r = cli("topic", "info", "/bumper_raw")
    assert r.returncode == 0, r.stderr
    assert "Type: takt/Bytes16" in r.stdout
    pubs, subs = r.stdout.split("Subscribers:")
    assert pubs.split("Publishers:")[1].split() == ["*", "/drivers"]
    assert subs.split() == ["*", "/perception/bumper_filter"]
    r = cli("node", "info", "/control")
    assert r.returncode == 0, r.stderr
    for topic in ("/stop_cmd", "/avoid_cmd", "/track_cmd", "/contact", "/obstacles", "/detections"):
        assert topic in r.stdout
    assert "safety_controller: subscription, priority" in r.stdout and "executor tide" in r.stdout


def test_echo_shows_the_published_messages(robot):
    r = cli("topic", "echo", "bumper_raw", "-n", "3", "--header", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    msgs = [m for m in r.stdout.split("---\n") if m.strip()]
    assert len(msgs) == 3
    seqs = []
    for m in msgs:
        lines = dict(l.strip().split(": ", 1) for l in m.strip().splitlines() if ": " in l)
        data = [int(x) for x in lines["data"].strip("[]").split(", ")]
        seq = int(lines["seq"])
        # the runner's payload: the publication count, little-endian, in the first 8 bytes
        assert len(data) == 16 and int.from_bytes(bytes(data[:8]), "little") == seq
        seqs.append(seq)
    assert seqs == list(range(seqs[0], seqs[0] + 3))


def test_hz_is_the_publishing_rate(robot):
    r = cli("topic", "hz", "lidar_scan", "--duration", "3")
    assert r.returncode == 0, r.stderr
    last = [l for l in r.stdout.splitlines() if l.startswith("average rate:")][-1]
    rate = float(last.split(":")[1])
    assert abs(rate - 20.0) <= 0.05 * 20.0, r.stdout  # timers every 50 ms


def test_chains(robot):
    r = cli("chain", "list")
    assert r.stdout.splitlines()[0] == ("safety (deadline 3 ms): drivers/bumper_sample -> perception/bumper_filter"
                                        " -> control/safety_controller -> actuation/brake")
    time.sleep(0.3)
    r = cli("chain", "stats")
    names = [l.split()[0] for l in r.stdout.splitlines()[1:]]
    assert names == ["safety", "obstacle", "tracking"]
    assert all(int(l.split()[1]) > 0 for l in r.stdout.splitlines()[1:])


def test_endpoint_is_owner_only(robot):
    mode = stat.S_IMODE(robot.stat().st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(robot.parent.stat().st_mode) == 0o700


def test_errors_name_the_problem(robot):
    r = cli("topic", "echo", "nosuch", "-n", "1")
    assert r.returncode == 1 and "no topic named 'nosuch'" in r.stderr
    r = cli("node", "info", "/nosuch")
    assert r.returncode == 1 and "unknown node [/nosuch]" in r.stderr
    r = cli("topic", "pub", "bumper_raw", "zz")
    assert r.returncode == 1 and "16-byte blob" in r.stderr


def test_pub_reaches_the_subscriber_and_service_call(runtime_dir, tmp_path):
    # request0 has a subscriber (the agent's serve0) and here no publisher but the endpoint's
    system = tmp_path / "svc.yaml"
    system.write_text("""name: svc
executor: tide
duration_s: 30
topics:
  - {name: cmd, size: 8, slots: 8}
nodes:
  - name: server
    subscriptions:
      - {name: sink, topic: cmd, work_us: 10}
      - {name: slow, topic: cmd, work_us: 3000, deadline_ms: 1}
    services:
      - {name: add, request_size: 8, response_size: 8, work_us: 10}
""")
    proc, sock = start_system(system, runtime_dir, duration=30)
    try:
        r = cli("topic", "pub", "cmd", "0102030405060708", "-n", "5")
        assert r.returncode == 0, r.stderr
        assert "published 5 messages on /cmd" in r.stdout
        # published is not yet run: the executor takes the five in its own time (the topic holds
        # eight: with its default four, a busy executor would see the newest four, as declared)
        wait_for(lambda: ", 5 runs" in cli("node", "info", "/server").stdout, 20, "sink's five runs")
        wait_for(lambda: ", 5 runs, 5 deadline misses" in cli("node", "info", "/server").stdout, 20,
                 "slow's five late runs")
        r = cli("node", "info", "/server")
        assert "sink: subscription" in r.stdout and ", 5 runs\n" in r.stdout, r.stdout
        # slow works 3 ms against its own 1 ms deadline: each run counted late
        assert "slow: subscription, priority 0, deadline 1 ms, executor tide, 5 runs, 5 deadline misses" \
            in r.stdout, r.stdout
        r = cli("service", "list")
        assert r.stdout.split() == ["/add"]
        r = cli("service", "call", "add", "07")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("data: [")
        r = cli("service", "call", "nosuch")
        assert r.returncode == 1 and "no service named '/nosuch'" in r.stderr
    finally:
        stop_system(proc)


def test_a_typed_service_is_called_with_its_srv_types(runtime_dir, tmp_path):
    # a service typed by a ROS service type (here exported to ROS 1 on an embedded master): its
    # request and response halves come from the type's .srv file, not from .msg files
    port = free_port()
    system = tmp_path / "typed.yaml"
    system.write_text(f"""name: typed
duration_s: 30
nodes:
  - name: n
    services:
      - {{name: toggle}}
ros1:
  master: embedded:{port}
  services:
    - {{name: toggle, type: std_srvs/SetBool, direction: export}}
""")
    proc, sock = start_system(system, runtime_dir, duration=30)
    try:
        r = cli("service", "call", "toggle", "{data: true}")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert any(l.startswith("success: ") for l in lines) and any(l.startswith("message: ") for l in lines), r.stdout
        r = cli("service", "call", "toggle", "{nosuch: 1}")
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "nosuch" in r.stderr
    finally:
        stop_system(proc)


def test_rosnode_kill_ends_a_run_with_a_ros1_node(runtime_dir, tmp_path):
    # rosnode kill asks a node to shut down through its slave API: the run stops in order, saying
    # so, as a ROS node ends (it was ignored: the run went on to its end)
    port = free_port()
    system = tmp_path / "killme.yaml"
    system.write_text(f"""name: killme
duration_s: 60
nodes:
  - name: n
    timers:
      - {{name: t, period_ms: 100, publish: chatter}}
ros1:
  master: embedded:{port}
  node: /killme
  export:
    - {{topic: chatter, type: std_msgs/String}}
""")
    proc, sock = start_system(system, runtime_dir, duration=60)
    try:
        env = dict(os.environ, ROS_MASTER_URI=f"http://127.0.0.1:{port}/")
        r = subprocess.run(["/usr/bin/rosnode", "kill", "/killme"], env=env, capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        code = proc.wait(timeout=15)
        err = proc.stderr.read().decode()
        assert code == 0, err
        assert (f"takt run: ROS 1 node /killme on the master at http://127.0.0.1:{port}/ "
                "(embedded: this run's own)") in err, err
        assert "takt run: the ROS 1 node /killme was asked to shut down (rosnode kill): stopping" in err, err
    finally:
        if proc.poll() is None:
            stop_system(proc)


def test_no_running_system(runtime_dir, tmp_path):
    r = cli("node", "list")
    assert r.returncode == 1
    assert "no running takt system" in r.stderr
    r = cli("chain", "stats")  # said before any table starts
    assert r.returncode == 1 and r.stdout == "" and "no running takt system" in r.stderr
    r = cli("play", tmp_path / "nowhere.mcap")  # the file is what is wrong first
    assert r.returncode == 2 and r.stderr.strip() == f"takt play: {tmp_path / 'nowhere.mcap'}: no such file"


def test_several_systems_are_named_when_one_must_be_chosen(runtime_dir, tmp_path):
    procs = []
    try:
        for name in ("alpha", "beta"):
            f = tmp_path / f"{name}.yaml"
            f.write_text(f"name: {name}\nnodes:\n  - name: n\n    timers: [{{name: t, period_ms: 100}}]\n")
            procs.append(start_system(f, runtime_dir, duration=30))
        r = cli("record", "-n", "1")
        assert r.returncode == 1, r.stderr
        pids = [p.pid for p, _ in procs]
        assert (f"several systems are running: alpha (pid {pids[0]}), beta (pid {pids[1]}); "
                "choose one with --system NAME") in r.stderr
    finally:
        for p, _ in procs:
            stop_system(p)


def test_a_name_in_two_systems_is_not_picked_at_random(runtime_dir):
    # two systems with the same topics: a tool that acts on one topic names both systems and asks
    # for --system (it used the first it listed: a `topic pub` went into another user's system);
    # `topic list -v` lists each system's (it crashed comparing them)
    a, sock_a = start_system(REPO / "examples" / "robot.yaml", runtime_dir, duration=30)
    b, sock_b = start_system(REPO / "examples" / "robot.yaml", runtime_dir, duration=30)
    try:
        r = cli("topic", "info", "/bumper_raw")
        assert r.returncode != 0
        assert (f"topic '/bumper_raw' is in several running systems: robot (pid {a.pid}), robot (pid {b.pid}); "
                "choose one with --system NAME") in r.stderr or \
               (f"topic '/bumper_raw' is in several running systems: robot (pid {b.pid}), robot (pid {a.pid}); "
                "choose one with --system NAME") in r.stderr, r.stderr
        r = cli("topic", "pub", "/bumper_raw", "00")
        assert r.returncode != 0 and "several running systems" in r.stderr, r.stdout + r.stderr
        r = cli("topic", "list")
        assert r.returncode == 0 and r.stdout.split() == ROBOT_TOPICS, r.stdout + r.stderr
        r = cli("topic", "list", "-v")
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("/bumper_raw [takt/Bytes16]") == 2 and "(system robot)" in r.stdout, r.stdout
    finally:
        stop_system(a)
        stop_system(b)


BIG = """name: big
executor: tide
duration_s: 60
topics:
  - {name: big, size: 1048576, slots: 2}
  - {name: lim, size: 4091}
  - {name: top, size: 4092}
  - {name: small, size: 8}
nodes:
  - name: server
    subscriptions:
      - {name: sink, topic: big, work_us: 10}
    services:
      - {name: large, request_size: 65536, response_size: 8, work_us: 10}
      - {name: add, request_size: 8, response_size: 8, work_us: 10}
"""


def test_a_message_too_large_for_a_request_is_refused_in_one_line(runtime_dir, tmp_path):
    # a pub of a message longer than the endpoint's request line: the endpoint answered its
    # error and closed, the send's broken pipe was taken for a closed stdout: nothing published,
    # nothing said, status 0
    from takt.commands import graph
    (tmp_path / "big.yaml").write_text(BIG)
    proc, sock = start_system(tmp_path / "big.yaml", runtime_dir, duration=60)
    try:
        r = cli("topic", "pub", "big", "ff")
        assert r.returncode == 1 and r.stdout == "", r.stdout
        assert r.stderr == ("takt topic pub: the message is 1048576 bytes: a pub request on /big carries at "
                            "most 4091 (the endpoint reads request lines of up to 8191 bytes)\n"), r.stderr
        r = cli("topic", "pub", "top", "ff")  # one byte past the most of its request
        assert r.returncode == 1 and "the message is 4092 bytes: a pub request on /top carries at most 4091" \
            in r.stderr, r.stderr
        r = cli("topic", "pub", "lim", "ff")  # the most: published
        assert r.returncode == 0 and "published 1 message on /lim" in r.stdout, r.stderr
        r = cli("service", "call", "large", "01")
        assert r.returncode == 1 and r.stderr == (
            "takt service call: the message is 65536 bytes: a call of /large carries at most 4087 "
            "(the endpoint reads request lines of up to 8191 bytes)\n"), r.stderr
        # a request the endpoint refuses while it is being sent: its answer, not a broken pipe
        assert list(graph.request(sock, "pub big " + "ab" * 1048576)) == \
            [{"error": "request longer than 8191 bytes"}]
        # and a play line it refuses while the stream is being sent
        assert graph.stream(sock, "play", ["bogus\n", "0" * (8 << 20)], 10) == \
            {"error": "play line 1: expected AT_NS TOPIC HEX AGE_NS"}
        # limits of the protocol, named as the options they come from (they were its usage line)
        for args, said in ((["topic", "echo", "small", "--timeout", "0.0001"],
                            "takt topic echo: --timeout 0.0001: give seconds from 0.001 to 86400"),
                           (["topic", "echo", "small", "-n", "20000000"],
                            "takt topic echo: -n 20000000: give 1 to 10000000 messages (0: until Ctrl-C or "
                            "--timeout)"),
                           (["topic", "hz", "small", "--duration", "100000"],
                            "takt topic hz: --duration 100000: give seconds from 0.001 to 86400"),
                           (["service", "call", "add", "01", "--timeout", "4000"],
                            "takt service call: --timeout 4000: give seconds from 0.001 to 3600")):
            r = cli(*args)
            assert r.returncode == 1 and r.stderr == said + "\n", (args, r.stderr)
    finally:
        stop_system(proc)


def _echo(monkeypatch, capsys, samples):
    from takt import cli as takt_cli
    from takt.commands import graph
    topic = {"name": "scan", "type": "takt/Bytes4", "size": 4, "serialized": False}
    monkeypatch.setattr(graph, "_find_topic", lambda system, name: (Path("sys.sock"), topic))
    monkeypatch.setattr(graph, "request", lambda path, line, timeout: iter(samples))
    status = takt_cli.main(["topic", "echo", "scan"])
    out, err = capsys.readouterr()
    return status, out, err


def test_echo_goes_on_past_a_message_the_endpoint_could_not_serialize(monkeypatch, capsys):
    # one message the endpoint could not serialize (its line: header and error, no bytes) ended
    # the echo with status 1; the endpoint's own error line (no topic) still ends it
    def sample(seq):
        return {"topic": "scan", "seq": seq, "t_info_ns": 1, "t_data_ns": 2, "taken_ns": 3, "size": 4,
                "bytes": "01020304"}
    bad = {"topic": "scan", "seq": 2, "t_info_ns": 1, "t_data_ns": 2, "taken_ns": 3, "size": 4,
           "error": "message size does not match its type"}
    status, out, err = _echo(monkeypatch, capsys, [sample(1), bad, sample(3), {"end": "count", "sent": 3}])
    assert status == 0 and out.count("data: [1, 2, 3, 4]") == 2, out
    assert err == ("takt topic echo: /scan: message seq 2 left out: the endpoint could not serialize it "
                   "(message size does not match its type); going on\n"), err
    status, out, err = _echo(monkeypatch, capsys, [sample(1), {"error": "no topic named 'scan'"}])
    assert status == 1 and err == "takt topic echo: no topic named 'scan'\n", err


def test_a_response_that_does_not_decode_is_said_in_one_line(monkeypatch, capsys):
    # the system's service type differs from this host's definition: a ValueError traceback
    from takt import cli as takt_cli
    from takt.commands import graph
    service = {"name": "toggle", "node": "n", "request_type": "std_srvs/SetBoolRequest",
               "response_type": "std_srvs/SetBoolResponse", "request_hash": "", "response_hash": "",
               "clients": 0}
    monkeypatch.setattr(graph, "graphs", lambda system: [(Path("sys.sock"), {"services": [service]})])
    monkeypatch.setattr(graph, "one", lambda path, line, timeout=5.0: {"serialized": "0109000000ab"})
    status = takt_cli.main(["service", "call", "toggle", "{data: true}"])
    out, err = capsys.readouterr()
    assert status == 1 and out == "", out
    assert len(err.splitlines()) == 1 and err.startswith(
        "takt service call: the response does not decode as std_srvs/SetBoolResponse (truncated message"), err
    assert "std_srvs/srv/SetBool.srv" in err

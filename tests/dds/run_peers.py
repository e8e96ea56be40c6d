#!/usr/bin/env python3
"""Run one takt <-> ROS 2 peer case (tests/CMakeLists.txt registers each as a ctest): takt's
peer program and a real ROS 2 peer (rclpy on Fast DDS, or PyPI cyclonedds) from the Python 3.12
venv, on a DDS domain of the case's own, so cases running at once do not cross.

On loopback, independent of the host's interfaces and default route: as root the case runs in a
network namespace of its own whose only interface is `lo` (multicast enabled on it, made here and
removed after), and both Cyclone DDS peers (takt's and PyPI cyclonedds) are pinned to `lo` by the
configuration tests/dds/peers_lo.xml (CYCLONEDDS_URI); Fast DDS has nothing but `lo` to use. (In
the host's own namespace a Cyclone pinned to `lo` never matches rclpy: Fast DDS then talks on the
other interfaces and ignores the loopback locators of a participant of another vendor.) Without
root the case runs on the default interface, and says so.
Checks exact counts and contents; every process started is ended (killed at the timeout).

  run_peers.py --peer TAKT_DDS_PEER --venv VENV CASE
  run_peers.py --run TAKT_RUN --venv VENV system_file_with_rclpy
"""
from __future__ import annotations

import argparse
import re
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNT = 20

# case -> (domain, talker, listener, type); the domain ids are the cases' own
CASES = {
    "rclpy_to_takt_string": (61, "rclpy", "takt", "string"),
    "takt_to_rclpy_string": (62, "takt", "rclpy", "string"),
    "rclpy_to_takt_header": (63, "rclpy", "takt", "header"),
    "takt_to_rclpy_header": (64, "takt", "rclpy", "header"),
    "cyclone_to_takt_string": (65, "cyclone", "takt", "string"),
    # a bare Cyclone (PyPI cyclonedds) reader decodes takt's samples, origin stamp included
    "takt_to_cyclone_string": (75, "takt", "cyclone", "string"),
    "rclpy_to_takt_image": (66, "rclpy", "takt", "image"),
    "takt_to_rclpy_image": (67, "takt", "rclpy", "image"),
}
# service cases: case -> (domain, caller, server, mapping takt uses)
SERVICE_CASES = {
    "takt_calls_rclpy_service": (68, "takt", "rclpy", "plain"),
    # the same while another client calls the rclpy server: its replies reach takt's reply reader
    # too, and takt takes only those that name its own requests
    "takt_calls_busy_rclpy_service": (81, "takt", "rclpy", "plain"),
    # an rclpy (Fast DDS) client takes a reply only with its request's identity in the RTPS
    # inline QoS, which takt adds to the reply (docs/dds.md, Services)
    "rclpy_calls_takt_service": (69, "rclpy", "takt", "plain"),
    # the same with every call in flight at once: each answer is matched to its own call
    "rclpy_calls_takt_service_concurrently": (82, "rclpy", "takt", "plain"),
    # takt to takt between two processes with the plain mapping: takt's request carries no
    # related identity, so the server answers with the identity it read from the request's
    # DATA submessage (its writer GUID and sequence number, as Cyclone left them after checking)
    "takt_calls_takt_service_plain": (83, "takt", "takt", "plain"),
    "takt_calls_cyclone_service": (70, "takt", "cyclone", "cyclone"),
    "cyclone_calls_takt_service": (71, "cyclone", "takt", "cyclone"),
}
SERVICE_COUNT = 6
# QoS ROS 2 refuses to match: a best-effort rclpy writer and takt's reliable reader
REFUSE_CASES = {"rclpy_best_effort_to_takt_reliable": 72}
# the ROS 2 graph: rclpy (Fast DDS) sees takt's bridge node from ros_discovery_info
GRAPH_CASES = {"takt_node_in_rclpy_graph": 74}
# a system file's dds: section with ROS types (takt-run, --run): rclpy talker -> the file's
# subscription relays chatter to echo (std_msgs/String both) -> rclpy listener; the file's client
# calls an rclpy std_srvs/SetBool server, and an rclpy client calls the file's service as a
# std_srvs/SetBool (the plain mapping: rmw_fastrtps's, both ways)
SYSTEM_CASES = {"system_file_with_rclpy": 78}
# `takt service call` on a service the file imports from rclpy: the tool sends the request as CDR
# and reads the CDR answer (the service's type support is the generated CDR codec, its hash a DDS
# type name); it sent ROS 1 bytes, which the endpoint refused
CLI_CASES = {"takt_cli_calls_rclpy_service": 84}
# rclpy nodes as they start by default (Fast DDS 3 with type propagation on: no fastdds_peers.xml)
# beside takt-run: Cyclone 0.10 parses the TypeLookup replies they send one another and died of
# SIGSEGV on them (2 to 8 runs in 10 with four nodes); takt drops them (src/dds/dds_backend.c)
LOOKUP_CASES = {"takt_survives_fastdds_type_lookup": 85}
LOOKUP_NODES, LOOKUP_COUNT = 6, 60
# a file's client calls an rclpy server with the default (cyclone) mapping, which rclpy does not
# speak: both sides failed silently; takt-run says what to check, once, and counts it in its result
MISMATCH_CASES = {"dds_service_mapping_mismatch_is_told": 86}
MISMATCH_YAML = """\
name: ros2_mismatch
duration_s: 60
nodes:
  - name: n
    clients:
      - {{name: ask, service: set_mode, period_ms: 300}}
dds:
  domain: {domain}
{interface}  services:
    - {{name: set_mode, type: std_srvs/SetBool, direction: import}}
"""
LOOKUP_YAML = """\
name: ros2_lookup
duration_s: 60
nodes:
  - name: n
    subscriptions:
      - {{name: take, topic: chatter, depth: 32}}
dds:
  domain: {domain}
{interface}  import: [{{topic: chatter, type: std_msgs/String}}]
"""
CLI_YAML = """\
name: ros2_cli
duration_s: 60
nodes:
  - name: n
    timers:
      - {{name: idle, period_ms: 1000}}
dds:
  domain: {domain}
{interface}  services:
    - {{name: set_mode, type: std_srvs/SetBool, direction: import, mapping: plain}}
"""
SYSTEM_COUNT, SYSTEM_CALLS = 20, 3
SYSTEM_YAML = """\
name: ros2_typed
duration_s: 60
topics:
  - {{name: chatter, slots: 32}}
  - {{name: echo, slots: 32}}
nodes:
  - name: relay
    subscriptions:
      - {{name: fwd, topic: chatter, depth: 32, publish: echo}}
    clients:
      - {{name: ask, service: set_mode, period_ms: 1200}}
    services:
      - {{name: toggle}}
dds:
  domain: {domain}
{interface}  import: [{{topic: chatter, type: std_msgs/String}}]
  export: [{{topic: echo, type: std_msgs/String, depth: 32}}]
  services:
    - {{name: set_mode, type: std_srvs/SetBool, direction: import, mapping: plain}}
    - {{name: toggle, type: std_srvs/SetBool, direction: export, mapping: plain}}
"""
W, H = 640, 480


def count_of(kind: str) -> int:
    return 5 if kind == "image" else COUNT


def expected(kind: str, prefix: str) -> list[str]:
    if kind == "image":  # crc32 of the pixels, computed here independently of both peers
        out = []
        for i in range(count_of(kind)):
            data = bytes(((31 * j + i) & 0xFF) for j in range(W * H * 3))
            out.append(f"got {prefix}{i} {W}x{H} rgb8 {W * 3} {zlib.crc32(data):08x}")
        return out
    if kind == "string":
        return [f"got {prefix} {i}" for i in range(COUNT)]
    return [f"got {prefix}{i} {i} {1000 * i}" for i in range(COUNT)]


NETNS_ENV = "TAKT_PEERS_NETNS"  # set inside the namespace this script made


def peer_env(domain: int) -> dict:
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), RMW_IMPLEMENTATION="rmw_fastrtps_cpp",
               FASTDDS_DEFAULT_PROFILES_FILE=str(HERE / "fastdds_peers.xml"))
    for k in ("CYCLONEDDS_URI", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
        env.pop(k, None)
    if os.environ.get(NETNS_ENV):
        env["CYCLONEDDS_URI"] = "file://" + str(HERE / "peers_lo.xml")
    return env


def in_loopback_namespace() -> int | None:
    """Run this same case again inside a namespace of its own with only `lo`; its exit status, or
    None where namespaces cannot be made (not root) or this is that run already."""
    if os.environ.get(NETNS_ENV) or os.geteuid() != 0 or shutil.which("ip") is None:
        return None
    ns = f"takt_peers{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
        return None
    try:
        ex = ["ip", "netns", "exec", ns]
        for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "link", "set", "lo", "multicast", "on"],
                    ["ip", "route", "add", "224.0.0.0/4", "dev", "lo"]):
            subprocess.run(ex + cmd, check=True, capture_output=True)
        return subprocess.run(ex + [sys.executable] + sys.argv,
                              env=dict(os.environ, **{NETNS_ENV: ns})).returncode
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def run_pair(first: list[str], second: list[str], env: dict) -> tuple:
    """Start first, then second; wait for both (60 s); kill whatever is left."""
    procs = []
    try:
        p1 = subprocess.Popen(first, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p1)
        p2 = subprocess.Popen(second, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p2)
        o2, e2 = p2.communicate(timeout=60)
        o1, e1 = p1.communicate(timeout=60)
        return p1.returncode, o1 + e1, p2.returncode, o2 + e2
    except subprocess.TimeoutExpired:
        return None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()


def service_case(a) -> int:
    domain, caller, server, mapping = SERVICE_CASES[a.case]
    env = peer_env(domain)
    name = f"takt_test_{a.case}"
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    n = str(SERVICE_COUNT)

    def cmd(who: str, role: str) -> list[str]:
        if who == "takt":
            return [a.peer, role, name, mapping, n, "30", str(domain)]
        if role == "call" and a.case.endswith("_concurrently"):
            role = "call-all"
        if role == "serve" and "_busy_" in a.case:
            role = "serve-busy"
        mode = role if who == "rclpy" else f"cyclone-{role}"
        return ros2 + [mode, name, "setbool", n, "30"]

    res = run_pair(cmd(server, "serve"), cmd(caller, "call"), env)
    if res is None:
        print(f"{a.case}: timed out", file=sys.stderr)
        return 1
    src, sout, crc, cout = res
    print(f"--- server ({server}) rc={src}\n{sout}--- caller ({caller}) rc={crc}\n{cout}")
    want = [f"answer {i} {int(i % 2 != 0)} {'was on' if i % 2 == 0 else 'was off'}"
            for i in range(SERVICE_COUNT)]
    got = [l for l in cout.splitlines() if l.startswith("answer ")]
    served = [l for l in sout.splitlines() if l.startswith("served ")]
    if "_busy_" in a.case:  # one line: how many of others' calls it served
        served = ["served"] * SERVICE_COUNT if src == 0 and served else served
    if src != 0 or crc != 0 or got != want or len(served) != SERVICE_COUNT:
        print(f"{a.case}: FAILED: {len(got)} of {SERVICE_COUNT} answers ({got[:3]}...), "
              f"{len(served)} served", file=sys.stderr)
        return 1
    if "_busy_" in a.case:
        # the other client's replies reached takt and were refused, none taken for takt's calls
        m = re.search(r"replies_dropped (\d+)", cout)
        if m is None or int(m.group(1)) < 1:
            print(f"{a.case}: FAILED: no other client's reply was seen and refused "
                  f"({m.group(0) if m else 'no statistics'})", file=sys.stderr)
            return 1
    if server == "takt" and mapping == "plain":
        # every reply left with its request's identity in the inline QoS (a retransmission
        # counts again), none without
        m = re.search(r"reply_ids_added (\d+) reply_ids_missed (\d+)", sout)
        if m is None or int(m.group(1)) < SERVICE_COUNT or int(m.group(2)) != 0:
            print(f"{a.case}: FAILED: replies with the request identity: "
                  f"{m.group(0) if m else 'no statistics'}", file=sys.stderr)
            return 1
    print(f"{a.case}: {SERVICE_COUNT} calls answered, each with its own answer")
    return 0


def refuse_case(a) -> int:
    domain = REFUSE_CASES[a.case]
    env = peer_env(domain)
    topic = f"takt_test_{a.case}"
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    res = run_pair([a.peer, "refuse", topic, "string", "0", "20", str(domain)],
                   ros2 + ["talk-best-effort", topic, "string", "40", "0.1", "rclpy-says"], env)
    if res is None:
        print(f"{a.case}: timed out", file=sys.stderr)
        return 1
    trc, tout, prc, pout = res
    print(f"--- takt (reliable reader) rc={trc}\n{tout}--- rclpy (best-effort writer) rc={prc}\n{pout}")
    said = f"{topic}: a writer elsewhere offers incompatible QoS (last incompatible policy: RELIABILITY)"
    if trc != 0 or prc != 0 or "got " in tout or said not in tout:
        print(f"{a.case}: FAILED: the incompatible pair was not reported (counted and said: "
              f"'{said}'), or data arrived", file=sys.stderr)
        return 1
    print(f"{a.case}: refused and reported, nothing delivered")
    return 0


def graph_case(a) -> int:
    domain = GRAPH_CASES[a.case]
    env = peer_env(domain)
    topic = f"takt_test_{a.case}"
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    res = run_pair([a.peer, "listen-first", topic, "string", "1", "40", str(domain)],
                   ros2 + ["graph", topic, "dds_bridge", "35"], env)
    if res is None:
        print(f"{a.case}: timed out", file=sys.stderr)
        return 1
    trc, tout, prc, pout = res
    print(f"--- takt (listener) rc={trc}\n{tout}--- rclpy (graph) rc={prc}\n{pout}")
    want = ["node /dds_bridge", f"subscribes /{topic} std_msgs/msg/String",
            f"subscriber of /{topic}: /dds_bridge"]  # as `ros2 topic info -v` names it
    missing = [w for w in want if w not in pout.splitlines()]
    if trc != 0 or prc != 0 or missing or "got graph-seen" not in tout:
        print(f"{a.case}: FAILED: {missing or 'a peer failed'}", file=sys.stderr)
        return 1
    print(f"{a.case}: rclpy's graph shows takt's node /dds_bridge and its subscription, named by it")
    return 0


def system_case(a) -> int:
    domain = SYSTEM_CASES[a.case]
    env = peer_env(domain)
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    procs: list[subprocess.Popen] = []

    def start(cmd: list[str]) -> subprocess.Popen:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(p)
        return p

    def finish(p: subprocess.Popen, timeout: float) -> str:
        try:
            return p.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            p.kill()
            return p.communicate()[0] + "\n(killed at its timeout)"

    with tempfile.TemporaryDirectory(prefix="takt_ros2_system_") as tmp:
        yaml, result = Path(tmp) / "system.yaml", Path(tmp) / "result.json"
        # in the namespace of loopback only, Cyclone on lo (the file's dds.interface)
        yaml.write_text(SYSTEM_YAML.format(domain=domain, interface="  interface: lo\n"
                                           if os.environ.get(NETNS_ENV) else ""))
        try:
            server = start(ros2 + ["serve", "set_mode", "setbool", str(SYSTEM_CALLS), "40"])
            listener = start(ros2 + ["listen-seen", "echo", "string", str(SYSTEM_COUNT), "40"])
            run = start([a.run, str(yaml), "--json", str(result), "--no-introspect", "--quiet"])
            seen = ""
            for line in listener.stdout:  # the listener has matched takt's writer of echo
                seen += line
                if line.strip() in ("publisher seen", "no publisher"):
                    break
            talker = start(ros2 + ["talk", "chatter", "string", str(SYSTEM_COUNT), "0.02", "rclpy-says"])
            caller = start(ros2 + ["call", "toggle", "setbool", str(SYSTEM_CALLS), "40"])
            lout = seen + finish(listener, 45)
            tout, sout, cout = finish(talker, 30), finish(server, 45), finish(caller, 45)
            run.send_signal(signal.SIGINT)  # an orderly stop: the result is written
            rout = finish(run, 15)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        print(f"--- takt-run rc={run.returncode}\n{rout}--- rclpy listener rc={listener.returncode}\n"
              f"{lout}--- rclpy talker rc={talker.returncode}\n{tout}--- rclpy server "
              f"rc={server.returncode}\n{sout}--- rclpy client rc={caller.returncode}\n{cout}")
        doc = json.loads(result.read_text()) if result.exists() else {"callbacks": []}
    cbs = {c["name"]: c for c in doc["callbacks"]}
    failures = []
    want = [f"got rclpy-says {i}" for i in range(SYSTEM_COUNT)]
    got = [l for l in lout.splitlines() if l.startswith("got ")]
    if got != want:
        failures.append(f"the listener got {len(got)} of {SYSTEM_COUNT} relayed messages ({got[:3]}...)")
    if cbs.get("fwd", {}).get("runs") != SYSTEM_COUNT:
        failures.append(f"the relay ran {cbs.get('fwd', {}).get('runs')} times, not {SYSTEM_COUNT}")
    served = [l for l in sout.splitlines() if l.startswith("served ")]
    if served != ["served off"] * SYSTEM_CALLS or cbs.get("ask", {}).get("answers") != SYSTEM_CALLS:
        failures.append(f"{len(served)} calls served, {cbs.get('ask', {}).get('answers')} answers "
                        f"taken (want {SYSTEM_CALLS} each, data false)")
    # the file's service answers each rclpy call (a synthetic service: takt run's job sets the
    # answer's first byte, here the bool success, to its run count, 1, 2, 3; the codec writes
    # any nonzero byte as true; the message empty)
    answers = [l for l in cout.splitlines() if l.startswith("answer ")]
    if answers != [f"answer {i} 1 " for i in range(SYSTEM_CALLS)] or \
            cbs.get("toggle", {}).get("runs") != SYSTEM_CALLS:
        failures.append(f"the rclpy client got {len(answers)} of {SYSTEM_CALLS} answers "
                        f"({answers[:2]}...); the file's service ran {cbs.get('toggle', {}).get('runs')} times")
    if run.returncode != 0 or listener.returncode != 0 or talker.returncode != 0 or \
            server.returncode != 0 or caller.returncode != 0:
        failures.append("a process failed")
    if failures:
        print(f"{a.case}: FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    print(f"{a.case}: {SYSTEM_COUNT} messages relayed rclpy -> takt-run -> rclpy as std_msgs/String, "
          f"{SYSTEM_CALLS} SetBool calls answered by rclpy, {SYSTEM_CALLS} rclpy calls answered by the file's "
          "service")
    return 0


def system_file(tmp: str, text: str, domain: int) -> tuple[Path, Path]:
    """A case's system file (text with {domain} and {interface}: `lo` in the loopback namespace)
    written in tmp, and where its result goes."""
    yaml = Path(tmp) / "system.yaml"
    yaml.write_text(text.format(domain=domain, interface="  interface: lo\n" if os.environ.get(NETNS_ENV) else ""))
    return yaml, Path(tmp) / "result.json"


def lookup_case(a) -> int:
    domain = LOOKUP_CASES[a.case]
    env = peer_env(domain)
    env.pop("FASTDDS_DEFAULT_PROFILES_FILE")  # Fast DDS as a user's rclpy starts it
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    with tempfile.TemporaryDirectory(prefix="takt_ros2_lookup_") as tmp:
        yaml, result = system_file(tmp, LOOKUP_YAML, domain)
        run = subprocess.Popen([a.run, str(yaml), "--json", str(result), "--no-introspect", "--quiet"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        talkers = [subprocess.Popen(ros2 + ["talk", "chatter", "string", str(LOOKUP_COUNT), "0.1", f"n{i}-"],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                   for i in range(LOOKUP_NODES)]
        try:
            touts = [t.communicate(timeout=60)[0] for t in talkers]
            alive = run.poll() is None
            if alive:
                run.send_signal(signal.SIGINT)  # an orderly stop: the result is written
            rout = run.communicate(timeout=15)[0]
        finally:
            for p in talkers + [run]:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        doc = json.loads(result.read_text()) if result.exists() else {"callbacks": []}
    runs = {c["name"]: c for c in doc["callbacks"]}.get("take", {}).get("runs", 0)
    print(f"--- takt-run rc={run.returncode}\n{rout}--- rclpy talkers rc={[t.returncode for t in talkers]}\n"
          + "".join(o[-300:] for o in touts))
    if not alive or run.returncode != 0 or runs < LOOKUP_COUNT:
        print(f"{a.case}: FAILED: takt-run {'alive' if alive else 'ended early'}, rc {run.returncode}, "
              f"took {runs} messages from {LOOKUP_NODES} rclpy nodes", file=sys.stderr)
        return 1
    print(f"{a.case}: takt-run ran beside {LOOKUP_NODES} default rclpy nodes and took {runs} messages")
    return 0


def mismatch_case(a) -> int:
    domain = MISMATCH_CASES[a.case]
    env = peer_env(domain)
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    with tempfile.TemporaryDirectory(prefix="takt_ros2_mismatch_") as tmp:
        yaml, result = system_file(tmp, MISMATCH_YAML, domain)
        server = subprocess.Popen(ros2 + ["serve", "set_mode", "setbool", "1", "12"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        run = subprocess.Popen([a.run, str(yaml), "--json", str(result), "--no-introspect", "--duration", "8"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            rout = run.communicate(timeout=30)[0]
        finally:
            for p in (run, server):
                if p.poll() is None:
                    p.kill()
            sout = server.communicate()[0]
        doc = json.loads(result.read_text()) if result.exists() else {}
    print(f"--- takt-run rc={run.returncode}\n{rout}--- rclpy server\n{sout[-500:]}")
    told = [l for l in rout.splitlines() if l.startswith("dds: a call to a DDS service got no answer in time")]
    expired = doc.get("dds", {}).get("calls_expired", 0)
    if run.returncode != 0 or len(told) != 1 or expired < 1 or "(rclpy/rmw_fastrtps: mapping: plain;" not in told[0]:
        print(f"{a.case}: FAILED: {len(told)} hint line(s), calls_expired {expired}", file=sys.stderr)
        return 1
    print(f"{a.case}: told once ({told[0]}); {expired} calls expired in the result")
    return 0


def cli_case(a) -> int:
    domain = CLI_CASES[a.case]
    env = peer_env(domain)
    ros2 = [str(Path(a.venv) / "bin" / "python"), str(HERE / "ros2_peer.py")]
    build = Path(a.run).resolve().parents[1]  # <build>/tools/takt-run
    with tempfile.TemporaryDirectory(prefix="takt_ros2_cli_") as tmp:
        yaml, _ = system_file(tmp, CLI_YAML, domain)
        tool_env = dict(env, XDG_RUNTIME_DIR=tmp, TAKT_BUILD_DIR=str(build))
        tool_py = HERE.parents[1] / ".venv" / "bin" / "python"  # the takt CLI's (tools/deps.sh)
        server = subprocess.Popen(ros2 + ["serve", "set_mode", "setbool", "1", "40"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        run = subprocess.Popen([a.run, str(yaml), "--quiet"], env=tool_env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        out, ok = "", False
        try:
            end = time.monotonic() + 30
            while time.monotonic() < end and not ok:  # until the service is matched and answers
                r = subprocess.run([str(tool_py), "-m", "takt", "service", "call", "set_mode",
                                    "{data: true}", "--timeout", "2"], env=tool_env,
                                   capture_output=True, text=True, timeout=30)
                out = r.stdout + r.stderr
                ok = r.returncode == 0
                if not ok:
                    time.sleep(0.5)
            sout = server.communicate(timeout=30)[0]
        finally:
            for p in (server, run):
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            rout = run.communicate(timeout=15)[0] if run.poll() is None else run.communicate()[0]
            if server.poll() is None:
                server.kill()
                server.communicate()
    print(f"--- takt service call\n{out}--- rclpy server rc={server.returncode}\n{sout}--- takt-run\n{rout}")
    lines = out.splitlines()
    # the server answers a true with success false, "was on" (ros2_peer.answer_of)
    if not ok or "success: False" not in lines or 'message: "was on"' not in lines or \
            "served on" not in sout.splitlines():
        print(f"{a.case}: FAILED: the call's answer {lines}", file=sys.stderr)
        return 1
    print(f"{a.case}: takt service call set_mode {{data: true}} answered by rclpy: {lines}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", help="takt-dds-peer (the peer cases)")
    ap.add_argument("--run", help="takt-run (the system file cases)")
    ap.add_argument("--venv", required=True)
    ap.add_argument("case", choices=sorted(CASES) + sorted(SERVICE_CASES) + sorted(REFUSE_CASES)
                    + sorted(GRAPH_CASES) + sorted(SYSTEM_CASES) + sorted(CLI_CASES)
                    + sorted(LOOKUP_CASES) + sorted(MISMATCH_CASES))
    a = ap.parse_args()
    rc = in_loopback_namespace()
    if rc is not None:
        return rc
    where = os.environ.get(NETNS_ENV)
    print(f"on loopback only (namespace {where}, Cyclone pinned to lo)" if where else
          "on the default interface (not root: no namespace of loopback only)")
    if a.case in SERVICE_CASES:
        return service_case(a)
    if a.case in REFUSE_CASES:
        return refuse_case(a)
    if a.case in GRAPH_CASES:
        return graph_case(a)
    if a.case in MISMATCH_CASES:
        if not a.run:
            ap.error("this case needs --run TAKT_RUN")
        return mismatch_case(a)
    if a.case in LOOKUP_CASES:
        if not a.run:
            ap.error("this case needs --run TAKT_RUN")
        return lookup_case(a)
    if a.case in CLI_CASES:
        if not a.run:
            ap.error("a tool case needs --run TAKT_RUN")
        return cli_case(a)
    if a.case in SYSTEM_CASES:
        if not a.run:
            ap.error("a system file case needs --run TAKT_RUN")
        return system_case(a)
    if not a.peer:
        ap.error("a peer case needs --peer TAKT_DDS_PEER")
    domain, talker, listener, kind = CASES[a.case]
    topic = f"takt_test_{a.case}"
    count = count_of(kind)
    period = "100" if kind == "image" else "20"
    prefix = f"{talker}-says"
    env = peer_env(domain)
    py = str(Path(a.venv) / "bin" / "python")
    ros2 = [py, str(HERE / "ros2_peer.py")]
    if listener == "takt":
        lcmd = [a.peer, "listen", topic, kind, str(count), "30", str(domain)]
    elif listener == "cyclone":
        lcmd = ros2 + ["cyclone-listen", topic, kind, str(count), "30"]
    else:
        lcmd = ros2 + ["listen", topic, kind, str(count), "30"]
    if talker == "takt":
        tcmd = [a.peer, "talk", topic, kind, str(count), period, prefix, str(domain)]
    elif talker == "rclpy":
        tcmd = ros2 + ["talk", topic, kind, str(count), str(int(period) / 1000), prefix]
    else:
        tcmd = ros2 + ["cyclone-talk", topic, kind, str(count), str(int(period) / 1000), prefix]
    procs = []
    try:
        lp = subprocess.Popen(lcmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(lp)
        tp = subprocess.Popen(tcmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(tp)
        tout, terr = tp.communicate(timeout=60)
        lout, lerr = lp.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        for p in procs:
            p.communicate()
        print(f"{a.case}: timed out", file=sys.stderr)
        return 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f"--- talker ({talker}) rc={tp.returncode}\n{tout}{terr}--- listener ({listener}) rc={lp.returncode}\n{lout}{lerr}")
    got = [l for l in lout.splitlines() if l.startswith("got ")]
    want = expected(kind, prefix)
    ok = tp.returncode == 0 and lp.returncode == 0 and got == want
    if not ok:
        missing = [w for w in want if w not in got]
        extra = [g for g in got if g not in want]
        print(f"{a.case}: FAILED: {len(got)} of {count} received; missing {missing[:5]}; "
              f"unexpected {extra[:5]}; in order: {got == sorted(got, key=got.index) and got == want}",
              file=sys.stderr)
        return 1
    print(f"{a.case}: {count} of {count} messages, in order, contents exact")
    return 0


if __name__ == "__main__":
    sys.exit(main())

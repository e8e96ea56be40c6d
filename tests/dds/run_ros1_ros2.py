#!/usr/bin/env python3
"""ROS 1 <-> ROS 2 through one takt process (tests/dds/ros1_ros2_bridge.c): a real rosmaster,
rospy talkers and listeners (Debian's /usr/bin/python3), rclpy talkers and listeners (Fast DDS,
from the venv), and takt's bridge between them. Exact contents both ways, for std_msgs/String
(rospy /r1_to_r2 -> takt -> rclpy rt/r1_to_r2, rclpy rt/r2_to_r1 -> takt -> rospy /r2_to_r1) and
for geometry_msgs/PointStamped, whose Header differs (ROS 1's has seq): /p_r1_to_r2 keeps rospy's
stamp and frame_id on the ROS 2 side; on /p_r2_to_r1 the ROS 1 side gets the points in order with
the origin time as header.stamp (an rclpy sample carries none of takt's: its arrival).
As run_peers.py: as root inside a network namespace with only `lo` (Cyclone pinned to it).

  run_ros1_ros2.py --bridge TAKT_ROS1_ROS2_BRIDGE --venv VENV
  run_ros1_ros2.py --run TAKT_RUN --venv VENV

With --run, the takt process is takt-run on a system file that says the same with routes only
(SYSTEM_YAML: each topic imported from one side and exported to the other, no callbacks); the
talkers start once takt-run says that its DDS writers matched the rclpy listeners (`dds: export
TOPIC matched 1 reader(s)`), as the C bridge says "ready". (Waiting for the rclpy listener's graph
to show takt-run's writers instead failed in some runs: docs/ros2.md.)
"""
from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_peers import NETNS_ENV, in_loopback_namespace, peer_env  # noqa: E402
sys.path.insert(0, str(HERE.parent))
from ports import free_port  # noqa: E402

ROS1_PEERS = HERE.parent / "ros1" / "peers"
DOMAIN = 76         # the C bridge
SYSTEM_DOMAIN = 80  # the system file
COUNT = 20
SYSTEM_YAML = """\
name: ros1_ros2
duration_s: 120
nodes: []
topics:
  - {{name: r1_to_r2, slots: 32}}
  - {{name: r2_to_r1, slots: 32}}
  - {{name: p_r1_to_r2, slots: 32}}
  - {{name: p_r2_to_r1, slots: 32}}
ros1:
  master: {master}
  node: /takt_bridge
  receive_priority: 0
  import:
    - {{topic: r1_to_r2, type: std_msgs/String, priority: 20}}
    - {{topic: p_r1_to_r2, type: geometry_msgs/PointStamped, priority: 10}}
  export:
    - {{topic: r2_to_r1, type: std_msgs/String}}
    - {{topic: p_r2_to_r1, type: geometry_msgs/PointStamped}}
dds:
  domain: {domain}
{interface}  export: [{{topic: r1_to_r2, depth: 32}}, {{topic: p_r1_to_r2, depth: 32}}]
  import:
    - {{topic: r2_to_r1, type: std_msgs/String, priority: 20, depth: 32}}
    - {{topic: p_r2_to_r1, type: geometry_msgs/PointStamped, priority: 10, depth: 32}}
"""
STAMP = (1700000000, 5000)  # what the rospy PointStamped talker stamps


def wait_line(p: subprocess.Popen, want: str | set[str], timeout: float, seen: list[str]) -> bool:
    """Read p's output (kept in seen, whole lines and the start of the next) until a line equals
    want (every one of a set of lines, in any order); False at EOF or timeout. Reads the pipe
    itself, not through p.stdout: a line that readline left in p.stdout's buffer is not seen by
    a select on the pipe (two lines written at once, the second waited for until the timeout)."""
    missing = {want} if isinstance(want, str) else set(want)
    fd = p.stdout.fileno()
    part = ""
    end = time.monotonic() + timeout
    try:
        while missing and time.monotonic() < end:
            r, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
            if not r:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            *lines, part = (part + chunk.decode(errors="replace")).split("\n")
            for line in lines:
                seen.append(line + "\n")
                missing.discard(line.strip())
    finally:
        if part:
            seen.append(part)  # the rest of this line comes with the rest of the output
    return not missing


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bridge", help="the C bridge program (tests/dds/ros1_ros2_bridge.c)")
    ap.add_argument("--run", help="takt-run: the same routes from a system file")
    ap.add_argument("--venv", required=True)
    a = ap.parse_args()
    if (a.bridge is None) == (a.run is None):
        ap.error("give --bridge or --run")
    rc = in_loopback_namespace()
    if rc is not None:
        return rc
    port = free_port()
    master = f"http://127.0.0.1:{port}/"
    domain = SYSTEM_DOMAIN if a.run else DOMAIN
    env = peer_env(domain)
    env["ROS_MASTER_URI"] = master
    py2 = str(Path(a.venv) / "bin" / "python")
    ros2 = [py2, str(HERE / "ros2_peer.py")]
    procs: list[subprocess.Popen] = []
    tmp = tempfile.TemporaryDirectory(prefix="takt_ros1_ros2_")  # the system file (--run)

    def start(cmd: list[str]) -> subprocess.Popen:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(p)
        return p

    try:
        start(["rosmaster", "--core", "-p", str(port)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        listen = "listen"
        if a.run:
            yaml = Path(tmp.name) / "bridge.yaml"
            yaml.write_text(SYSTEM_YAML.format(master=master, domain=domain, interface="  interface: lo\n"
                                               if os.environ.get(NETNS_ENV) else ""))
            bridge = start([a.run, str(yaml), "--no-introspect"])
        else:
            bridge = start([a.bridge, master, str(domain), str(COUNT), "60"])
        r2_listener = start(ros2 + [listen, "r1_to_r2", "string", str(COUNT), "60"])
        r1_listener = start(["/usr/bin/python3", str(ROS1_PEERS / "listener.py"), "/r2_to_r1", str(COUNT)])
        p2_listener = start(ros2 + [listen, "p_r1_to_r2", "point", str(COUNT), "60"])
        p1_echo = start(["/usr/bin/python3", str(ROS1_PEERS / "stamped.py"), "echo", "/p_r2_to_r1", str(COUNT)])
        # the talkers start once the far sides listen: the bridge's DDS writer has matched the
        # rclpy listener, and the rospy listeners' TCPROS connections to the bridge are up; each
        # talker waits for the bridge's subscriber itself
        early: dict[str, list[str]] = {"takt bridge": [], "rospy listener": [], "rospy stamped echo": [],
                                       "rclpy listener": [], "rclpy stamped listener": []}
        ready = [(r1_listener, "connected", "rospy listener"), (p1_echo, "stamped: connected", "rospy stamped echo")]
        if a.run:  # takt-run says when its DDS writers matched the rclpy listeners' readers
            ready.insert(0, (bridge, {"dds: export r1_to_r2 matched 1 reader(s)",
                                      "dds: export p_r1_to_r2 matched 1 reader(s)"}, "takt bridge"))
        else:
            ready.insert(0, (bridge, "ready", "takt bridge"))
        if not all(wait_line(p, want, 40, early[name]) for p, want, name in ready):
            print("the bridge or a listener did not get ready:", early)
            if bridge.poll() is None:
                bridge.send_signal(signal.SIGINT)
            print(f"--- takt bridge\n{bridge.communicate(timeout=20)[0]}")
            return 1
        time.sleep(1.0)
        r1_talker = start(["/usr/bin/python3", str(ROS1_PEERS / "talker.py"), "/r1_to_r2", str(COUNT), "rospy-says"])
        r2_talker = start(ros2 + ["talk", "r2_to_r1", "string", str(COUNT), "0.02", "rclpy-says"])
        p1_talker = start(["/usr/bin/python3", str(ROS1_PEERS / "stamped.py"), "pub", "/p_r1_to_r2",
                           str(STAMP[0]), str(STAMP[1]), str(COUNT)])
        p2_talker = start(ros2 + ["talk", "p_r2_to_r1", "point", str(COUNT), "0.02", "rclpy"])
        outs = {}
        for name, p in (("rospy talker", r1_talker), ("rclpy talker", r2_talker), ("rclpy listener", r2_listener),
                        ("rospy listener", r1_listener), ("rospy stamped talker", p1_talker),
                        ("rclpy stamped talker", p2_talker), ("rclpy stamped listener", p2_listener),
                        ("rospy stamped echo", p1_echo), ("takt bridge", bridge)):
            if p is bridge and a.run:
                p.send_signal(signal.SIGINT)  # takt-run ends as Ctrl-C ends it, exit status 0
            try:
                out, _ = p.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            outs[name] = (p.returncode, "".join(early.get(name, [])) + out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        tmp.cleanup()
    for name, (code, out) in outs.items():
        print(f"--- {name} rc={code}\n{out}")
    got2 = [l for l in outs["rclpy listener"][1].splitlines() if l.startswith("got ")]
    got1 = [l for l in outs["rospy listener"][1].splitlines() if l.startswith("got: ")]
    want2 = [f"got rospy-says {i}" for i in range(COUNT)]
    want1 = [f"got: rclpy-says {i}" for i in range(COUNT)]
    # PointStamped: rospy's stamp and frame_id arrive as they were (the DDS side writes no stamp)
    gotp2 = [l for l in outs["rclpy stamped listener"][1].splitlines() if l.startswith("got ")]
    wantp2 = [f"got rospy{i} {STAMP[0]} {STAMP[1]} x {i}" for i in range(COUNT)]
    # ... and the other way: the points in order, stamped with their origin (arrival) time
    echo = [l.split() for l in outs["rospy stamped echo"][1].splitlines() if l.startswith("stamp ")]
    now = time.time()
    points_ok = [e[4] for e in echo] == [str(i) for i in range(COUNT)]
    stamps_ok = bool(echo) and all(abs(int(e[1]) - now) < 120 for e in echo)
    ok = got2 == want2 and got1 == want1 and gotp2 == wantp2 and points_ok and stamps_ok and \
        all(code == 0 for code, _ in outs.values())
    print("ros1 -> ros2:", "exact" if got2 == want2 else f"got {got2}")
    print("ros2 -> ros1:", "exact" if got1 == want1 else f"got {got1}")
    print("ros1 -> ros2 PointStamped:", "exact" if gotp2 == wantp2 else f"got {gotp2}")
    print("ros2 -> ros1 PointStamped:", "in order, stamped now" if points_ok and stamps_ok else f"got {echo}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

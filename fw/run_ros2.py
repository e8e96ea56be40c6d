#!/usr/bin/env python3
"""ROS 2 from the MCU: the firmware examples/mcu/ros_node.c in QEMU and its agent (takt-run with
examples/mcu/ros2_agent.yaml: a described link and a `dds:` section) on the firmware's serial
line, and a real ROS 2 peer around it: rclpy on Fast DDS from the Python 3.12 venv
(tools/deps_ros2.sh), a listener and a talker (tests/dds/ros2_peer.py). ctest runs it
(fw/TaktFirmware.cmake); by hand:

    fw/run_ros2.py --qemu qemu-system-arm --board mps2-an500 \
        --elf build/release/fw/mps2-an500/takt-fw-ros.elf --agent build/release/tools/takt-run \
        --venv .venv-ros2 --workdir /tmp/x

As root the case runs in a network namespace of its own whose only interface is `lo`, as
tests/dds/run_peers.py does (and for the same reason: Fast DDS and a Cyclone pinned to `lo` meet
only there). Pass: an rclpy listener gets five (or more) consecutive `chatter` messages from the MCU,
intact, and every command an rclpy talker sends on `cmd` comes back from the MCU on `echo`,
exactly once and in order.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "dds"))
from run_link import Qemu, end_all, firmware_args, open_raw  # noqa: E402
from run_peers import in_loopback_namespace, peer_env  # noqa: E402

PEER = REPO / "tests" / "dds" / "ros2_peer.py"


def main() -> int:
    ap = firmware_args()
    ap.add_argument("--venv", required=True, help="the Python 3.12 venv with rclpy")
    ap.add_argument("--domain", type=int, default=97)
    a = ap.parse_args()
    rc = in_loopback_namespace()
    if rc is not None:
        return rc
    py = Path(a.venv) / "bin" / "python"
    if not py.is_file():
        print(f"run_ros2: no {py}: make the ROS 2 venv (tools/deps_ros2.sh)")
        return 1
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    env = peer_env(a.domain)
    yaml_text = (REPO / "examples" / "mcu" / "ros2_agent.yaml").read_text()
    yaml_text, n = re.subn(r"(?m)^(\s*domain:\s*)\d+", rf"\g<1>{a.domain}", yaml_text)
    assert n == 1, "ros2_agent.yaml: no domain: line"
    agent_yaml = work / "ros2_agent.yaml"
    agent_yaml.write_text(yaml_text)

    procs: list[subprocess.Popen] = []
    q = None
    fd = None
    ok = False
    try:
        q = Qemu(argparse.Namespace(workdir=str(work), group="ros", count=0, microros=False, qemu=a.qemu,
                                    board=a.board, elf=a.elf))
        fd = open_raw(q.pty)
        agent = subprocess.Popen([a.agent, str(agent_yaml), "--quiet", "--duration", "600",
                                  "--link", f"uart=emu:baud=115200/serial:{q.pty}"], env=env,
                                 stderr=subprocess.PIPE, text=True)
        procs.append(agent)
        time.sleep(1.2)  # QEMU notices an opened pseudo-terminal on a 1 s timer
        q.cont()
        # the agent asks the MCU what it is, then builds its system (its DDS topics among it)
        described = agent.stderr.readline()
        print(f"run_ros2: agent: {described.strip()}")
        if "the far side is node 'mcu_node'" not in described:
            print("run_ros2: FAIL: the agent did not get the MCU's description")
            return 1

        # the ROS 2 graph shows the MCU's node with its topics, as rosnode/rostopic show it on ROS 1
        out = subprocess.run([str(py), str(PEER), "node", "mcu_node", "2", "1", "30"], env=env,
                             capture_output=True, text=True, timeout=60).stdout
        print(f"run_ros2: graph: {out.strip()}")
        want = ["node /mcu_node", "publishes /chatter std_msgs/msg/String",
                "publishes /echo std_msgs/msg/String", "subscribes /cmd std_msgs/msg/String",
                # each endpoint named by the MCU's node, as `ros2 topic info -v` shows it
                "publisher of /chatter: /mcu_node", "publisher of /echo: /mcu_node",
                "subscriber of /cmd: /mcu_node"]
        if [l for l in out.splitlines() if l.strip()] != want:
            print(f"run_ros2: FAIL: expected the graph entry {want}")
            return 1

        # MCU -> ROS 2: an rclpy listener, 5 consecutive messages, intact
        out = subprocess.run([str(py), str(PEER), "listen", "chatter", "string", "5", "30"], env=env,
                             capture_output=True, text=True, timeout=60).stdout
        got = re.findall(r"^got (.*)$", out, re.M)
        nums = [int(m.group(1)) for m in (re.fullmatch(r"hello from the MCU (\d+)", g) for g in got) if m]
        print(f"run_ros2: chatter from the MCU: {got}")
        # (the listener may print a few more that arrived while it ended)
        if len(got) < 5 or len(nums) != len(got) or nums != list(range(nums[0], nums[0] + len(nums))):
            print("run_ros2: FAIL: expected at least 5 consecutive 'hello from the MCU N'")
            return 1

        # ROS 2 -> MCU -> ROS 2: each command answered once, in order
        listener = subprocess.Popen([str(py), str(PEER), "listen", "echo", "string", "10", "40"], env=env,
                                    stdout=subprocess.PIPE, text=True)
        procs.append(listener)
        time.sleep(3)  # the listener's participant and reader are discovered by the agent
        talk = subprocess.run([str(py), str(PEER), "talk", "cmd", "string", "10", "0.1", "ping"], env=env,
                              capture_output=True, text=True, timeout=60)
        echo_out, _ = listener.communicate(timeout=60)
        echoes = re.findall(r"^got (.*)$", echo_out, re.M)
        print(f"run_ros2: talker status {talk.returncode}; echo: {echoes}")
        if echoes != [f"mcu heard: ping {i}" for i in range(10)]:
            print("run_ros2: FAIL: expected 'mcu heard: ping 0' .. 'ping 9', each once, in order")
            return 1
        agent.send_signal(signal.SIGINT)
        agent.wait(15)
        if agent.returncode != 0:
            print(f"run_ros2: FAIL: the agent ended with status {agent.returncode}")
            return 1
        ok = True
        print("run_ros2: PASSED")
        return 0
    finally:
        end_all("run_ros2", procs, q, fd, ok)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""ROS from the MCU: the firmware examples/mcu/ros_node.c in QEMU, its agent (takt-run with
examples/mcu/ros_agent.yaml, which asks the MCU to describe its node) on the firmware's serial line, and the real Debian ROS 1 around it:
rosmaster (or the agent's embedded master), a rospy listener and talker, rostopic and rosnode.
ctest runs it (fw/TaktFirmware.cmake); by hand:

    /usr/bin/python3 fw/run_ros1.py --qemu qemu-system-arm --board mps2-an500 \
        --elf build/release/fw/mps2-an500/takt-fw-ros.elf --agent build/release/tools/takt-run \
        --workdir /tmp/x [--master rosmaster|embedded]

Pass: the MCU's node registers as /mcu_node; a rospy listener gets its `chatter` messages, in
order and intact; every command a rospy talker sends on /cmd comes back from the MCU on
/echo, exactly once and in order, though the agent is stopped for a second as they are sent
(they come as a burst of one origin time, answered faster than the line carries the answers);
`rosservice call /led` is answered by the MCU's service;
rosnode/rostopic show /mcu_node with its topics and service; after the MCU is reset (QEMU's
system_reset) its messages come through again within seconds, counted from 0; and
(with rosmaster) the node is gone from `rosnode list` once the agent stops.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import xmlrpc.client
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_link import Qemu, end_all, firmware_args, open_raw  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO / "tests" / "ros1" / "peers"
ROSPY = "/usr/bin/python3"
RUN_BEFORE_RESET = 10.0  # s the MCU has run before it is reset (longer than RESET_WITHIN)
RESET_WITHIN = 6.0       # s from the reset to three messages on a rospy listener
STALL_S = 1.0            # s the agent is stopped as the commands come


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def system_state(uri: str):
    try:
        code, _, state = xmlrpc.client.ServerProxy(uri).getSystemState("/run_ros1")
        return state if code == 1 else None
    except (OSError, xmlrpc.client.Error):
        return None


def wait_for(what: str, check, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    print(f"run_ros1: {what}: not within {timeout:.0f} s")
    return False


def node_registered(uri: str, node: str) -> bool:
    state = system_state(uri)
    return state is not None and any(node in nodes for kind in state for _, nodes in kind)


def tool(env: dict, *args: str) -> str:
    r = subprocess.run([ROSPY, *args], env=env, capture_output=True, text=True, timeout=30)
    print(f"$ {' '.join(Path(a).name if i == 0 else a for i, a in enumerate(args))}\n{r.stdout}{r.stderr}")
    return r.stdout


def print_agent_counts(agent: subprocess.Popen, work: Path) -> None:
    """Stop the agent in order and print its link's and ROS 1 routes' counters (where a message
    went missing: refused by a topic, by the link, never received)."""
    agent.send_signal(signal.SIGINT)
    try:
        agent.wait(15)
        result = json.loads((work / "agent.json").read_text())
        print(f"run_ros1: the agent's link: {result['links']}\nrun_ros1: its ROS 1 routes: {result.get('ros1')}")
    except (subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
        print(f"run_ros1: the agent's counters: not written ({e})")


def main() -> int:
    ap = firmware_args()
    ap.add_argument("--master", choices=["rosmaster", "embedded"], default="rosmaster")
    a = ap.parse_args()
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    uri = f"http://127.0.0.1:{port}/"
    env = dict(os.environ, ROS_MASTER_URI=uri, ROS_HOSTNAME="127.0.0.1", ROS_LOG_DIR=str(work / "log"),
               ROS_HOME=str(work))
    yaml_text = (REPO / "examples" / "mcu" / "ros_agent.yaml").read_text()
    master_value = f"embedded:{port}" if a.master == "embedded" else uri
    yaml_text, n = re.subn(r"(?m)^(\s*master:\s*)\S+", rf"\g<1>{master_value}", yaml_text)
    assert n == 1, "ros_agent.yaml: no master: line"
    agent_yaml = work / "ros_agent.yaml"
    agent_yaml.write_text(yaml_text)

    procs: list[subprocess.Popen] = []
    ok = False
    q = None
    fd = None
    try:
        if a.master == "rosmaster":
            procs.append(subprocess.Popen([ROSPY, "/usr/bin/rosmaster", "--core", "-p", str(port)], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if not wait_for("rosmaster", lambda: system_state(uri) is not None, 20):
                return 1
        q = Qemu(argparse.Namespace(workdir=str(work), group="ros", count=0, microros=False, qemu=a.qemu,
                                    board=a.board, elf=a.elf))
        fd = open_raw(q.pty)
        agent = subprocess.Popen([a.agent, str(agent_yaml), "--quiet", "--duration", "600",
                                  "--link", f"uart=emu:baud=115200/serial:{q.pty}",
                                  "--json", str(work / "agent.json")], env=env)
        procs.append(agent)
        time.sleep(1.2)  # QEMU notices an opened pseudo-terminal on a 1 s timer
        q.cont()
        started = time.monotonic()
        # the agent asks the MCU for its description, then registers the MCU's node
        if not wait_for("the MCU's node /mcu_node", lambda: node_registered(uri, "/mcu_node"), 40):
            return 1

        # MCU -> ROS: a rospy listener, 5 messages in order and intact
        out = subprocess.run([ROSPY, str(PEERS / "listener.py"), "/chatter", "5"], env=env,
                             capture_output=True, text=True, timeout=40).stdout
        got = re.findall(r"^got: (.*)$", out, re.M)
        nums = [int(m.group(1)) for m in (re.fullmatch(r"hello from the MCU (\d+)", g) for g in got) if m]
        print(f"run_ros1: /chatter from the MCU: {got}")
        if len(nums) != 5 or len(got) != 5 or nums != list(range(nums[0], nums[0] + 5)):
            print("run_ros1: FAIL: expected 5 consecutive 'hello from the MCU N'")
            return 1

        # ROS -> MCU -> ROS: every command answered once, in order
        listener = subprocess.Popen([ROSPY, str(PEERS / "listener.py"), "/echo", "10"], env=env,
                                    stdout=subprocess.PIPE, text=True)
        procs.append(listener)
        if listener.stdout.readline().strip() != "ready":
            print("run_ros1: FAIL: the /echo listener did not start")
            return 1
        if not wait_for("the /echo connection",
                        lambda: "/rospy_listener" in tool(env, "/usr/bin/rostopic", "info", "/echo"), 15):
            return 1
        # the agent stops for STALL_S as the talker begins to publish (a host busy elsewhere):
        # the ten commands wait in the connection and come as a burst, read at once (one origin
        # time), and the MCU answers them faster than the line carries the answers; still each
        # one is answered
        talker = subprocess.Popen([ROSPY, str(PEERS / "talker.py"), "/cmd", "10", "ping"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(talker)
        started_line = talker.stdout.readline().strip()
        if started_line != "talker: publishing":
            print(f"run_ros1: FAIL: the talker did not begin to publish: {started_line!r}")
            return 1
        agent.send_signal(signal.SIGSTOP)
        try:
            time.sleep(STALL_S)
        finally:
            agent.send_signal(signal.SIGCONT)
        talk_out, _ = talker.communicate(timeout=40)
        echo_out, _ = listener.communicate(timeout=30)
        echoes = re.findall(r"^got: (.*)$", echo_out, re.M)
        print(f"run_ros1: talker: {talk_out.strip()}; /echo (the agent stopped {STALL_S} s): {echoes}")
        if echoes != [f"mcu heard: ping {i}" for i in range(10)]:
            print("run_ros1: FAIL: expected 'mcu heard: ping 0' .. 'ping 9', each once, in order")
            print_agent_counts(agent, work)
            return 1

        # a service on the MCU: described, served on ROS 1 by the agent, answered by the MCU
        answers = [tool(env, "/usr/bin/rosservice", "call", "/led", f"data: {v}") for v in ("true", "false")]
        print(f"run_ros1: rosservice call /led: {answers}")
        if not (re.search(r'success: True\s+message: "led on"', answers[0])
                and re.search(r'success: True\s+message: "led off"', answers[1])):
            print("run_ros1: FAIL: expected the MCU's answers 'led on' then 'led off'")
            return 1

        # the graph: the MCU's node under its own name, with its topics and service
        nodes = tool(env, "/usr/bin/rosnode", "list").split()
        info = tool(env, "/usr/bin/rostopic", "info", "/chatter")
        ninfo = tool(env, "/usr/bin/rosnode", "info", "-q", "/mcu_node")
        pubs = ninfo.split("Publications:")[-1].split("Subscriptions:")[0]
        subs = ninfo.split("Subscriptions:")[-1].split("Services:")[0]
        srvs = ninfo.split("Services:")[-1]
        if ("/mcu_node" not in nodes or not re.search(r"Publishers:\s*\n \* /mcu_node ", info)
                or "/chatter [std_msgs/String]" not in pubs or "/echo [std_msgs/String]" not in pubs
                or "/cmd" not in subs or "/led" not in srvs):
            print(f"run_ros1: FAIL: the graph does not show /mcu_node with /chatter, /echo, /cmd and /led:\n{ninfo}")
            return 1

        # the MCU resets (QEMU's system_reset) after running for a while: its clock begins again,
        # and its messages come through again within seconds, counting from 0 (the agent maps the
        # MCU's clock onto its own: peer_clock). Without the mapping they came in as the MCU's
        # time since its reset, older than anything the agent's topic held: refused as late
        # until the MCU had run as long as before the reset.
        ran = time.monotonic() - started
        if ran < RUN_BEFORE_RESET:
            time.sleep(RUN_BEFORE_RESET - ran)
        q.monitor("system_reset")
        reset_at = time.monotonic()
        ran = reset_at - started
        out = subprocess.run([ROSPY, str(PEERS / "listener.py"), "/chatter", "3"], env=env,
                             capture_output=True, text=True, timeout=60).stdout
        took = time.monotonic() - reset_at
        got = re.findall(r"^got: (.*)$", out, re.M)
        nums = [int(m.group(1)) for m in (re.fullmatch(r"hello from the MCU (\d+)", g) for g in got) if m]
        print(f"run_ros1: after the MCU's reset ({ran:.1f} s after it started): {got} within {took:.1f} s")
        if len(nums) != 3 or nums != list(range(nums[0], nums[0] + 3)) or nums[0] > took * 10 + 10:
            print("run_ros1: FAIL: expected 3 consecutive 'hello from the MCU N', counted from its reset")
            return 1
        if took > RESET_WITHIN:
            print(f"run_ros1: FAIL: the MCU's messages came {took:.1f} s after its reset (at most {RESET_WITHIN} s)")
            return 1

        # an orderly stop: the node unregisters (with rosmaster, which outlives the agent)
        agent.send_signal(signal.SIGINT)
        agent.wait(15)
        if agent.returncode != 0:
            print(f"run_ros1: FAIL: the agent ended with status {agent.returncode}")
            return 1
        if a.master == "rosmaster" and "/mcu_node" in tool(env, "/usr/bin/rosnode", "list").split():
            print("run_ros1: FAIL: /mcu_node still registered after the agent stopped")
            return 1
        if not any("ros_node: running" in line for line in q.out):
            print("run_ros1: FAIL: no start line on the firmware's console")
            return 1
        ok = True
        print(f"run_ros1: PASSED ({a.master})")
        return 0
    finally:
        end_all("run_ros1", procs, q, fd, ok)


if __name__ == "__main__":
    sys.exit(main())

"""`takt mcu run`: the PoDS firmware of examples/mcu in QEMU with its agent on the serial line; the
chain table comes from the MCU's reports over the link; Ctrl-C (SIGINT) stops QEMU and the agent
in order. Skipped where QEMU or the firmware build is missing (tools/deps.sh, `make`)."""
from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TAKT_BUILD_DIR", REPO / "build" / "release"))
FIRMWARE = BUILD / "fw" / "mps2-an500" / "takt-fw-pods.elf"
AGENT = REPO / "examples" / "mcu" / "agent.yaml"

pytestmark = pytest.mark.skipif(shutil.which("qemu-system-arm") is None or not FIRMWARE.is_file(),
                                reason="qemu-system-arm or the firmware build missing (tools/deps.sh, make)")

ROW = re.compile(r"^chain(\d)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)ms\s+(\d+)\s+(\d+ of \d+|-)$")


def children_of(pid: int):
    """Processes whose parent is pid (QEMU and the agent, while they run)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d.name))
    return out


def test_mcu_run_shows_the_mcus_chain_table_and_stops_both_on_ctrl_c(tmp_path):
    env = dict(os.environ, TAKT_BUILD_DIR=str(BUILD), PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "takt", "mcu", "run", str(FIRMWARE), "--agent", str(AGENT),
                          "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, cwd=tmp_path)
    lines, reports = [], 0
    deadline = time.monotonic() + 60
    children = []
    # each line waited for no later than the deadline (a run that falls silent fails here with
    # what it said, instead of blocking the suite in a read)
    fd, pending = p.stdout.fileno(), b""
    while reports < 3 and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)  # (the fd, not the text wrapper: nothing waits in its buffer)
        if not chunk:
            break
        pending += chunk
        *whole, pending = pending.split(b"\n")
        for raw in whole:
            line = raw.decode(errors="replace")
            lines.append(line.rstrip())
            if line.startswith("mcu report") and reports < 3:
                reports += 1
                children = children or children_of(p.pid)
    if pending:
        lines.append(pending.decode(errors="replace").rstrip())
    if reports < 3:  # nothing left running: QEMU and the agent, then the runner
        for pid in set(children_of(p.pid) + children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.kill()
        p.wait(timeout=30)
    assert reports >= 3, "\n".join(lines)
    assert len(children) == 2, (children, lines)  # QEMU and the agent
    p.send_signal(signal.SIGINT)
    rest, _ = p.communicate(timeout=30)
    lines += rest.splitlines()
    assert p.returncode == 0, "\n".join(lines)
    assert any(l.startswith("takt mcu run: stopped") for l in lines)
    for pid in children:  # both gone, not left running
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    # the last full table: every chain ran, ordered by PoDS priority (chain 0 the fastest)
    table = [m for m in (ROW.match(l) for l in lines) if m][-3:]
    shown = "\n".join(lines)
    assert [int(m.group(1)) for m in table] == [0, 1, 2], shown
    counts = [int(m.group(2)) for m in table]
    means = [float(m.group(3)) for m in table]
    assert all(c >= 10 for c in counts), shown
    assert means[0] < means[2], shown
    assert [int(m.group(6)) for m in table] == [30, 60, 90]
    assert re.fullmatch(r"\d+ of \d+", table[0].group(8))  # chain 0's sink is validated (FIRM)
    # every report shown, none lost between two of them
    seqs = [int(l.split()[2].rstrip(":")) for l in lines if l.startswith("mcu report ")]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    assert any(l.startswith("[mcu] pods_mcu: running") for l in lines)


ROS_FIRMWARE = BUILD / "fw" / "mps2-an500" / "takt-fw-ros.elf"


@pytest.mark.skipif(not ROS_FIRMWARE.is_file(), reason="the firmware build is missing (make)")
def test_mcu_run_puts_the_mcus_node_on_ros1_under_its_name(tmp_path):
    """examples/mcu/ros_agent.yaml: the agent asks the MCU for its node and topics, is the ROS master
    (embedded, here on a free port), and the MCU's node registers as /mcu_node with its topics;
    --duration ends both in order."""
    import socket
    import xmlrpc.client
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent = tmp_path / "ros_agent.yaml"
    text = (REPO / "examples" / "mcu" / "ros_agent.yaml").read_text()
    agent.write_text(re.sub(r"(?m)^(\s*master:\s*)embedded\b", rf"\g<1>embedded:{port}", text, count=1))
    env = dict(os.environ, TAKT_BUILD_DIR=str(BUILD), PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "takt", "mcu", "run", str(ROS_FIRMWARE), "--agent", str(agent),
                          "--out", str(tmp_path), "--duration", "8"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    lines = []
    state = None
    for line in p.stdout:
        lines.append(line.rstrip())
        if line.startswith("[mcu] ros_node: running"):
            master = xmlrpc.client.ServerProxy(f"http://127.0.0.1:{port}/")
            for _ in range(100):  # the agent asks the MCU, then starts the master: at most 10 s
                try:
                    code, _, state = master.getSystemState("/test")
                except OSError:
                    code = 0
                # the node registers its topics one by one: wait for all three
                if code == 1 and all(entry in table for entry, table in (
                        (["/chatter", ["/mcu_node"]], state[0]), (["/echo", ["/mcu_node"]], state[0]),
                        (["/cmd", ["/mcu_node"]], state[1]))):
                    break
                time.sleep(0.1)
    p.wait(30)
    shown = "\n".join(lines)
    assert p.returncode == 0, shown
    assert ("the MCU's node is the ROS 1 node its description names (the example firmware's: /mcu_node) "
            f"on master http://127.0.0.1:{port}/ (embedded)") in shown
    # the agent asked the MCU what it is (describe: true)
    assert ("takt run: link 'uart': the far side is node 'mcu_node' with 3 topics and 1 service: "
            "out chatter (std_msgs/String) out echo (std_msgs/String) in cmd (std_msgs/String) "
            "serves led (std_srvs/SetBool)") in shown
    assert state is not None, shown
    publishers, subscribers = dict((t, n) for t, n in state[0]), dict((t, n) for t, n in state[1])
    assert publishers.get("/chatter") == ["/mcu_node"] and publishers.get("/echo") == ["/mcu_node"], state
    assert subscribers.get("/cmd") == ["/mcu_node"], state
    assert lines[-1] == "takt mcu run: stopped", shown


def test_mcu_run_fails_when_the_firmware_faults_or_is_no_image(tmp_path):
    # the fault group of the test firmware runs an undefined instruction: the port's handler prints
    # `takt: fault: ...` and QEMU ends with status 4; the run said "stopped" and exited 0
    tests_elf = BUILD / "fw" / "mps2-an500" / "takt-fw-tests.elf"
    env = dict(os.environ, TAKT_BUILD_DIR=str(BUILD))
    r = subprocess.run([sys.executable, "-m", "takt", "mcu", "run", str(tests_elf), "--agent", str(AGENT),
                        "--append", "fault", "--duration", "20", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=90, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "takt mcu run: the firmware faulted: takt: fault: exception 0x00000003" in r.stderr, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "takt", "mcu", "run", str(REPO / "README.md"), "--agent",
                        str(AGENT), "--out", str(tmp_path)], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 2 and "not a firmware image" in r.stderr, r.stderr
    bad = tmp_path / "bad_agent.yaml"
    bad.write_text("links: [\n")
    r = subprocess.run([sys.executable, "-m", "takt", "mcu", "run", str(tests_elf), "--agent", str(bad),
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 2 and f"{bad}:2: not YAML" in r.stderr and "Traceback" not in r.stderr, r.stderr

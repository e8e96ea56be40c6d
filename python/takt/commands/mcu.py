"""`takt mcu run FIRMWARE --agent FILE`: a firmware in QEMU and its host agent together.

QEMU runs the firmware with the console (UART0) on this terminal's output and UART1 on a
pseudo-terminal; the agent (`takt agent FILE`, the native runner) serves the first link of FILE on
that terminal, its transmissions paced at the line's baud. When the agent's system has the topic
`mcu_report` (examples/mcu/pods_mcu.c's, sent over the link), its reports are read from the agent's
endpoint and shown as a chain table; a `ros1:` section is named at the start (examples/mcu/
ros_node.c: the MCU's node on ROS 1). Ctrl-C (or SIGTERM, or --duration) stops both in order.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path
from typing import List, Optional

from takt import native

REPORT_CHAINS = 3
CHAIN = struct.Struct("<8I")  # count, misses, mean, p50, max, deadline (us), violations, received


def add_parser(sub) -> None:
    p = sub.add_parser("mcu", help="microcontroller firmware in QEMU: `takt mcu run FIRMWARE --agent FILE`")
    msub = p.add_subparsers(dest="mcu_command", required=True)
    r = msub.add_parser("run", help="start QEMU with FIRMWARE and the agent of FILE on its serial line; "
                                    "show the chain table the firmware reports (if it does); Ctrl-C stops both")
    r.add_argument("firmware", type=Path, help="an image built by fw/ (e.g. build/release/fw/mps2-an500/takt-fw-pods.elf)")
    r.add_argument("--agent", type=Path, required=True, help="the agent's system file (examples/mcu/agent.yaml)")
    r.add_argument("--board", default="mps2-an500", choices=["mps2-an386", "mps2-an500"])
    r.add_argument("--baud", type=int, default=115200, help="the agent's line rate (default 115200)")
    r.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0: at Ctrl-C, within a day)")
    r.add_argument("--out", type=Path, default=Path("results"))
    r.add_argument("--qemu", default="qemu-system-arm")
    r.add_argument("--append", default="", help="the firmware's command line (QEMU's -append), e.g. "
                   "a test group of takt-fw-tests.elf")


def load_agent(agent: Path) -> dict:
    """The agent's system file, read once (ValueError in one line: where and what)."""
    import yaml
    try:
        doc = yaml.safe_load(agent.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{agent}:{mark.line + 1}" if mark is not None else str(agent)
        raise ValueError(f"{where}: not YAML: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{agent}: not a system description (a mapping with nodes, links, ...)")
    links = doc.get("links")
    if not isinstance(links, list) or not links or not isinstance(links[0], dict) or "name" not in links[0]:
        raise ValueError(f"{agent}: no links: the agent needs one for the firmware's serial line")
    return doc


def first_link(doc: dict) -> str:
    return str(doc["links"][0]["name"])


def has_reports(doc: dict) -> bool:
    """Whether the agent's system has the topic `mcu_report` (examples/mcu/pods_mcu.c's)."""
    topics = doc.get("topics")
    return isinstance(topics, list) and any(isinstance(t, dict) and t.get("name") == "mcu_report" for t in topics)


def describes(doc: dict) -> bool:
    """Whether the agent's first link has `describe: true` (the MCU names its node and topics)."""
    return doc["links"][0].get("describe") is True


def ros1_node(doc: dict) -> Optional[str]:
    """`master node` of the agent's ros1: section, for the start line (None without one)."""
    r1 = doc.get("ros1")
    if not isinstance(r1, dict):
        return None
    master = str(r1.get("master", os.environ.get("ROS_MASTER_URI", "?")))
    if master.startswith("embedded"):
        port = master.split(":", 1)[1] if ":" in master else "11311"
        master = f"http://127.0.0.1:{port}/ (embedded)"
    if r1.get("node"):
        return f"ROS 1 node {r1['node']} on master {master}"
    if describes(doc):
        return f"the ROS 1 node its description names (the example firmware's: /mcu_node) on master {master}"
    return f"ROS 1 node /takt_{doc.get('name', 'system')} on master {master}"


def format_report(data: bytes) -> List[str]:
    seq = struct.unpack_from("<I", data, 0)[0]
    lines = [f"mcu report {seq}: chain latency on the MCU (sensor release -> actuator end, across the link)",
             f"{'chain':<8} {'count':>6} {'mean ms':>8} {'p50 ms':>8} {'max ms':>8} {'deadline':>9} "
             f"{'misses':>7} {'violations':>13}"]
    for i in range(REPORT_CHAINS):
        c = CHAIN.unpack_from(data, 4 + i * CHAIN.size)
        count, misses, mean, p50, mx, deadline, violations, received = c
        val = f"{violations} of {received}" if received else "-"  # of the data validated
        lines.append(f"chain{i:<3} {count:>6} {mean / 1e3:>8.2f} {p50 / 1e3:>8.2f} {mx / 1e3:>8.2f} "
                     f"{deadline / 1e3:>7.0f}ms {misses:>7} {val:>13}")
    return lines


def _die_with_parent() -> None:
    """In a child before exec: the kernel sends it SIGTERM when this process dies (killed, its
    terminal gone), so a QEMU in a session of its own is not left running the firmware."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Qemu:
    """QEMU paused, UART0 to our stdout, UART1 on a pseudo-terminal opened (raw) and held here."""

    def __init__(self, qemu: str, board: str, elf: Path, workdir: Path, append: str = "", echo: bool = True,
                 extra: Optional[List[str]] = None):
        workdir.mkdir(parents=True, exist_ok=True)
        self.mon = workdir / f"qemu-{os.getpid()}.mon"
        self.mon.unlink(missing_ok=True)
        self.p = subprocess.Popen(
            [qemu, "-M", board, "-display", "none", "-S", "-monitor", f"unix:{self.mon},server=on,wait=off",
             "-serial", "stdio", "-serial", "pty", "-semihosting-config", "enable=on,target=native",
             "-kernel", str(elf)] + (["-append", append] if append else []) + (extra or []),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches us, and we stop QEMU in order
            preexec_fn=_die_with_parent)
        self.pty: Optional[str] = None
        self.console: List[str] = []
        found = threading.Event()

        def reader() -> None:
            for raw in iter(self.p.stdout.readline, b""):
                text = raw.decode(errors="replace")
                m = re.search(r"char device redirected to (\S+) \(label serial1\)", text)
                if m:
                    self.pty = m.group(1)
                    found.set()
                    continue
                self.console.append(text)
                if echo:
                    sys.stdout.write(f"[mcu] {text}")
                    sys.stdout.flush()
            found.set()

        self.reader = threading.Thread(target=reader, daemon=True)
        self.reader.start()
        found.wait(20)
        if self.pty is None:
            self.stop()
            raise RuntimeError("QEMU named no pseudo-terminal for UART1")
        self.fd = os.open(self.pty, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd)

    def monitor(self, command: str) -> None:
        for _ in range(100):
            if self.mon.exists():
                break
            time.sleep(0.05)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.mon))
            s.sendall(command.encode() + b"\n")
            time.sleep(0.1)

    def stop(self) -> int:
        if self.p.poll() is None:
            try:
                self.monitor("quit")
                self.p.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.p.terminate()
                self.p.wait(5)
        # QEMU has exited, but its last lines may still be in the pipe: the console is complete
        # only when the reader has seen the end of it
        self.reader.join(5)
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)
            self.fd = None
        self.mon.unlink(missing_ok=True)
        return self.p.returncode


def run(args: argparse.Namespace) -> int:
    from takt.commands.graph import NoSystem, endpoint_of, request
    from takt.commands.system import stop_signals
    if not args.firmware.is_file():
        print(f"takt mcu run: {args.firmware}: no such file", file=sys.stderr)
        return 2
    with open(args.firmware, "rb") as f:
        if f.read(4) != b"\x7fELF":
            print(f"takt mcu run: {args.firmware}: not a firmware image (an ELF file, such as "
                  "build/release/fw/<board>/takt-fw-ros.elf)", file=sys.stderr)
            return 2
    if not args.agent.is_file():
        print(f"takt mcu run: {args.agent}: no such file", file=sys.stderr)
        return 2
    try:
        doc = load_agent(args.agent)
    except (ValueError, OSError) as e:
        print(f"takt mcu run: {e}", file=sys.stderr)
        return 2
    link = first_link(doc)
    exe = native.program("tools/takt-run")
    args.out.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    # a closed terminal (SIGHUP) stops both too, unless SIGHUP was ignored (`nohup`)
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in stop_signals()}
    qemu = agent = None
    reports = 0
    try:
        end = time.monotonic() + args.duration if args.duration > 0 else float("inf")  # --duration
        try:
            qemu = Qemu(args.qemu, args.board, args.firmware, args.out, append=args.append)
        except RuntimeError as e:
            print(f"takt mcu run: {e}", file=sys.stderr)
            return 1
        result = args.out / f"mcu_{args.agent.stem}.json"
        # the agent runs until this stops it (its own duration past ours, whatever the file says:
        # a file without duration_s would end it after 10 s), and ends should this process die
        # (TAKT_SUPERVISOR_PID: the kernel sends it SIGTERM then)
        agent_s = min(args.duration + 60, 86400) if args.duration > 0 else 86400  # (takt-run's bound)
        agent = subprocess.Popen([str(exe), str(args.agent), "--json", str(result), "--quiet",
                                  "--duration", str(agent_s),
                                  "--link", f"{link}=emu:baud={args.baud}/serial:{qemu.pty}",
                                  "--peer-clock", link],  # the MCU's clock began at its reset
                                 env=dict(os.environ, TAKT_SUPERVISOR_PID=str(os.getpid())),
                                 start_new_session=True)
        sock: Optional[Path] = None  # its endpoint, found by the agent's pid

        def wait_for_agent(seconds: float) -> bool:
            nonlocal sock
            deadline = time.monotonic() + seconds
            while (found := endpoint_of(agent.pid)) is None and agent.poll() is None and time.monotonic() < deadline:
                if stop.wait(0.05):  # Ctrl-C while it starts
                    return False
            if found is not None:
                sock = found
            if agent.poll() is not None:
                print(f"takt mcu run: the agent ended with status {agent.returncode}", file=sys.stderr)
                return False
            return True

        # a described link: the agent asks the running MCU what it is before it builds its system
        described = describes(doc)
        if not described and not wait_for_agent(10):
            return 1
        time.sleep(1.2)  # QEMU notices an opened pseudo-terminal on a 1 s timer
        qemu.monitor("cont")
        # (within --duration, when one is given: the run ends then however far it got)
        if described and not wait_for_agent(min(40.0, max(0.0, end - time.monotonic()))):
            return 1
        print(f"takt mcu run: {args.firmware.name} on {args.board}, UART1 = {qemu.pty}, agent {args.agent} "
              f"(pid {agent.pid}); Ctrl-C stops both")
        ros = ros1_node(doc)
        if ros:
            print(f"takt mcu run: the MCU's node is {ros}", flush=True)
        reporting = has_reports(doc)

        def watch() -> None:
            while not stop.is_set():
                if time.monotonic() >= end or qemu.p.poll() is not None or agent.poll() is not None:
                    stop.set()
                time.sleep(0.1)

        threading.Thread(target=watch, daemon=True).start()
        while not stop.is_set() and not reporting:  # nothing to show but the console
            stop.wait(0.5)
        while not stop.is_set():
            if sock is None and (sock := endpoint_of(agent.pid)) is None:  # not made yet
                stop.wait(0.2)
                continue
            try:
                # one echo for every report (an echo per report missed those published while it
                # reconnected); a report comes every second, so a stop is seen within one
                for s in request(sock, "echo mcu_report 10000000 86400000", timeout=3):
                    if stop.is_set():
                        break
                    if "error" in s:
                        raise NoSystem(s["error"])
                    if "bytes" in s or "serialized" in s:
                        data = bytes.fromhex(s.get("bytes", s.get("serialized", "")))
                        if len(data) >= 4 + REPORT_CHAINS * CHAIN.size:
                            print("\n".join(format_report(data)), flush=True)
                            reports += 1
            except (NoSystem, OSError, ValueError):
                if stop.wait(0.2):
                    break
        status = 0 if reports > 0 or args.duration == 0 or not reporting else 1
        ended_itself = qemu.p.poll() is not None  # before we stop it: the firmware ended or died
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if agent is not None and agent.poll() is None:
            agent.send_signal(signal.SIGINT)  # an orderly stop: its result is written
            try:
                agent.wait(15)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
        qemu_status = qemu.stop() if qemu is not None else 0
        print(f"takt mcu run: stopped ({reports} reports from the MCU)" if reports else "takt mcu run: stopped")
    # a firmware that faulted (the port's fault handler prints `takt: fault: ...`) or a QEMU that
    # ended with an error (a lockup, a bad image) fails the run, as a crashed program would
    faults = [ln.strip() for ln in qemu.console if ln.startswith("takt: fault:")]
    if faults:
        print(f"takt mcu run: the firmware faulted: {faults[0]}", file=sys.stderr)
        return 1
    if ended_itself and qemu_status not in (0, None):
        tail = next((ln.strip() for ln in reversed(qemu.console) if ln.strip()), "")
        print(f"takt mcu run: QEMU ended with status {qemu_status}{': ' + tail if tail else ''}",
              file=sys.stderr)
        return 1
    return status


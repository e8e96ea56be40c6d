#!/usr/bin/env python3
"""Run a firmware link test: QEMU with the firmware's UART1 on a pseudo-terminal, and the host side
on that terminal — the agent (takt-run, what `takt agent` runs) or this script's feeder of bad
input. ctest runs it (fw/TaktFirmware.cmake); by hand:

    fw/run_link.py --qemu qemu-system-arm --board mps2-an386 --elf build/.../takt-fw-tests.elf \
        --group link_reliable --agent build/release/tools/takt-run --workdir /tmp/x [--count N]

QEMU starts paused (-S) and runs once the terminal is open here (QEMU discards what the guest
writes to a pseudo-terminal nobody has open, and notices an opened one within a second).
Pass: QEMU's exit status 0 with a PASSED line and, for link_reliable and link_restart, the
agent's result showing every message received exactly once, in order, intact.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
import tty
import zlib
from pathlib import Path

AGENT_YAML = """\
# The host side of the firmware's link_reliable and link_restart tests (fw/tests/test_link.c).
name: fw_link_agent
executor: tide
duration_s: 600
topics:
  - {name: data, size: 16, slots: 64}
nodes:
  - name: agent
    subscriptions:
      - {name: check, topic: data, depth: 1024, check: sequence}
links:
  - name: uart
    spec: "serial:/dev/null"   # the pseudo-terminal: --link uart=serial:PATH
    window: 32
    import:
      - {topic: data, entity: 0}
"""


def frame(kind: int, entity: int, payload: bytes, priority: int = 5, flags: int = 0, seq: int = 0,
          length: int | None = None, crc_xor: int = 0) -> bytes:
    """One frame as takt's framing puts it on the line (include/takt/frame.h, docs/protocol.md)."""
    n = len(payload) if length is None else length
    hdr = struct.pack("<BBBBHHHq", (1 << 4) | kind, 0, priority, flags, seq, entity, n, 0)
    crc = zlib.crc32(hdr + payload) ^ crc_xor
    body = hdr + payload + struct.pack("<I", crc)
    out = bytearray([0x7E])
    for b in body:
        if b in (0x7E, 0x7D):
            out += bytes([0x7D, b ^ 0x20])
        else:
            out.append(b)
    out.append(0x7E)
    return bytes(out)


class Qemu:
    def __init__(self, a: argparse.Namespace):
        self.mon = Path(a.workdir) / "monitor.sock"
        self.mon.unlink(missing_ok=True)
        append = a.group + (f" count={a.count}" if a.count else "") + (" microros" if a.microros else "")
        cmd = [a.qemu, "-M", a.board, "-display", "none", "-S",
               "-monitor", f"unix:{self.mon},server=on,wait=off",
               "-serial", "stdio", "-serial", "pty",
               "-semihosting-config", "enable=on,target=native",
               "-kernel", a.elf, "-append", append]
        # guest time counted in instructions: a restart's start looks like the first
        if getattr(a, "icount", False):
            cmd[1:1] = ["-icount", "shift=5,sleep=off"]
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out: list[str] = []
        self.pty = None
        found = threading.Event()

        def pty_named(text: str) -> bool:  # QEMU says it on stdout or stderr (versions differ)
            m = re.search(r"char device redirected to (\S+) \(label serial1\)", text)
            if m:
                self.pty = m.group(1)
                found.set()
            return m is not None

        def err_reader() -> None:
            for line in iter(self.p.stderr.readline, b""):
                text = line.decode(errors="replace")
                if not pty_named(text):
                    sys.stdout.write(text)
            found.set()

        def out_reader() -> None:
            for line in iter(self.p.stdout.readline, b""):
                text = line.decode(errors="replace")
                if pty_named(text):
                    continue
                self.out.append(text)
                sys.stdout.write(text)
                sys.stdout.flush()
            found.set()

        threading.Thread(target=err_reader, daemon=True).start()
        self.out_thread = threading.Thread(target=out_reader, daemon=True)
        self.out_thread.start()
        found.wait(20)
        if self.pty is None:  # (QEMU, paused, would be left running)
            self.p.kill()
            self.p.wait()
            raise SystemExit("run_link: QEMU named no pseudo-terminal for UART1")

    def cont(self) -> None:
        for _ in range(100):
            if self.mon.exists():
                break
            time.sleep(0.05)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.mon))
            s.sendall(b"cont\n")
            time.sleep(0.1)

    def monitor(self, command: str) -> None:
        """One command to QEMU's monitor (system_reset, quit, ...)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.mon))
            s.sendall(command.encode() + b"\n")
            time.sleep(0.1)

    def wait(self, timeout: float) -> int:
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            print(f"run_link: QEMU still running after {timeout:.0f} s: killed")
            return -1
        self.out_thread.join(5)
        return rc


def open_raw(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    return fd


def firmware_args() -> argparse.ArgumentParser:
    """The arguments of a host-side script that runs a firmware with its agent (run_ros1.py,
    run_ros2.py); each adds its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--elf", required=True)
    ap.add_argument("--agent", required=True, help="takt-run")
    ap.add_argument("--workdir", required=True)
    return ap


def end_all(who: str, procs: list, q: "Qemu | None", fd: "int | None", ok: bool) -> None:
    """Stop what a firmware test started: its processes, newest first (SIGINT, killed after 10 s),
    QEMU and the held terminal; show the firmware's console when the test failed."""
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGCONT)  # one a test stopped (SIGSTOP) takes the SIGINT too
            p.send_signal(signal.SIGINT)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    if q is not None and q.p.poll() is None:
        q.p.kill()
        q.p.wait()
    if fd is not None:
        os.close(fd)
    if not ok:
        print(f"{who}: firmware console:\n" + "".join(q.out if q else []))


def read_flags(fd: int, want: int, have: int, deadline: float) -> int:
    """Read until `want` frame flags (0x7E) have come in total (have: seen so far)."""
    while have < want and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                have += os.read(fd, 4096).count(0x7E)
            except OSError:  # QEMU ended (EIO): nothing more comes
                break
    return have


def bad_input(fd: int, q: Qemu) -> bool:
    deadline = time.monotonic() + 40
    flags = read_flags(fd, 2, 0, deadline)  # the firmware's marker 1: its link is open
    if flags < 2:
        print("run_link: no marker from the firmware")
        return False
    cmd = lambda i: frame(0, 5, struct.pack("<II", i, i * 3))  # noqa: E731
    feed = bytearray()
    feed += bytes(range(1, 64)) + b"\x7d\x7d garbage \x00\xff" * 2     # garbage, no flags
    whole = cmd(1000)
    feed += whole[: len(whole) // 2]                                  # a torn frame...
    feed += frame(0, 5, struct.pack("<II", 7, 7), crc_xor=0x10)       # ...then a corrupted one
    feed += frame(0, 77, struct.pack("<II", 1, 2))                    # an unknown entity
    feed += frame(2, 0, b"\x01\x02\x03\x04")                          # ACKNACK, 4 bytes not 12
    feed += frame(0, 5, bytes(200))                                   # longer than any buffer
    for i in range(10):                                               # 2 fit, 8 overflow
        feed += cmd(i)
    os.write(fd, bytes(feed))
    flags = read_flags(fd, 4, flags, time.monotonic() + 40)  # marker 2: part 1 checked
    if flags < 4:
        print("run_link: no second marker from the firmware")
        return False
    os.write(fd, frame(0, 6, b"end!"))
    return True


def deframe(raw: bytes) -> list:
    """The line's bytes as takt's deframer sees them: [("frame", kind, entity, payload, crc_ok)] for
    each flag-delimited frame, ("aborted", unstuffed bytes) for one ended by the abort sequence
    ESC FLAG, ("torn", bytes) for any other that is not a frame. A frame set aside by the suspend
    sequence (ESC 0x01) is held and goes on at the resume sequence (ESC 0x02); each is also listed
    as ("suspended",) and ("resumed",) where it came."""
    out, buf, esc, started = [], bytearray(), False, False
    held = None
    for b in raw:
        if b == 0x7E:
            if started and (buf or esc):
                if esc:
                    out.append(("aborted", bytes(buf)))
                elif len(buf) >= 22:
                    kind_ver, _s, _p, _f, _seq, entity, n, _t = struct.unpack("<BBBBHHHq", buf[:18])
                    ok = len(buf) == 22 + n and zlib.crc32(bytes(buf[:-4])) == struct.unpack("<I", buf[-4:])[0]
                    out.append(("frame", kind_ver & 0x0F, entity, bytes(buf[18:-4]), ok))
                else:
                    out.append(("torn", bytes(buf)))
            buf, esc, started = bytearray(), False, True
        elif not started:
            continue
        elif b == 0x7D:
            esc = True
        elif esc and b == 0x01:  # suspend: the frame so far is held
            held, buf, esc = buf, bytearray(), False
            out.append(("suspended",))
        elif esc and b == 0x02:  # resume: the held frame goes on
            if held is not None:
                buf, held = held, None
                out.append(("resumed",))
            esc = False
        else:
            buf.append(b ^ 0x20 if esc else b)
            esc = False
    return out


def read_line(fd: int, q: "Qemu") -> bytes:
    """Everything the firmware sends on the line until QEMU ends (60 s at most)."""
    raw = bytearray()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        chunk = b""
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
        raw += chunk
        if not chunk and q.p.poll() is not None:
            break
    return bytes(raw)


LOW = bytes((i * 7) & 0xFF for i in range(1000))  # the long frame's payload (fw/tests/test_link.c)


def link_cut(fd: int, q: "Qemu") -> bool:
    """The firmware's link_cut: the long frame's torn start ended by the abort sequence, then the
    urgent frame, then the long frame whole."""
    raw = read_line(fd, q)
    got = deframe(raw)
    shape = [(g[0], g[2] if g[0] == "frame" else None) for g in got]
    print(f"run_link: link_cut: {len(raw)} bytes on the line: {shape}")
    if len(got) != 3 or got[0][0] != "aborted" or not LOW.startswith(got[0][1][18:]):
        print("run_link: link_cut: FAILED: the long frame's torn start, ended by ESC FLAG, does not come first")
        return False
    if got[1][:5] != ("frame", 0, 2, b"urgent!!", True) or got[2][:5] != ("frame", 0, 1, LOW, True):
        print("run_link: link_cut: FAILED: not the urgent frame, then the long one, both intact")
        return False
    return True


def link_suspend(fd: int, q: "Qemu") -> bool:
    """The firmware's link_suspend: the long frame suspended, the urgent frame, the long frame
    resumed and whole; the line carried each of its bytes once (the two frames and four code
    bytes, nothing sent twice)."""
    raw = read_line(fd, q)
    got = deframe(raw)
    shape = [(g[0], g[2] if g[0] == "frame" else None) for g in got]
    print(f"run_link: link_suspend: {len(raw)} bytes on the line: {shape}")
    want = [("suspended",), ("frame", 0, 2, b"urgent!!", True), ("resumed",), ("frame", 0, 1, LOW, True)]
    if [g[:5] for g in got] != want:
        print("run_link: link_suspend: FAILED: not the suspension, the urgent frame, the resume and the "
              "long frame whole")
        return False
    stuffed = lambda p: sum(2 if x in (0x7D, 0x7E) else 1 for x in p)  # noqa: E731 (bytes, stuffed)
    # flags, headers and CRCs (stuffing of header and CRC bytes aside: a few bytes of slack)
    frames = 2 * (2 + 18 + 4) + stuffed(LOW) + stuffed(b"urgent!!")
    if not frames + 4 <= len(raw) <= frames + 4 + 16:
        print(f"run_link: link_suspend: FAILED: {len(raw)} bytes on the line, the frames and codes "
              f"take about {frames + 4}: something was sent twice")
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--elf", required=True)
    ap.add_argument("--group", required=True,
                    choices=["link_reliable", "link_restart", "link_bad_input", "link_cut", "link_suspend"])
    ap.add_argument("--agent", help="takt-run (link_reliable, link_restart)")
    ap.add_argument("--icount", action="store_true",
                    help="QEMU with -icount shift=5,sleep=off (link_restart: starts alike)")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--microros", action="store_true", help="link_reliable: the daemon's micro-ROS-like mode")
    ap.add_argument("--timeout", type=float, default=150)
    ap.add_argument("--host-link-prefix", default="emu:baud=115200/",
                    help="what comes before serial:PTY in the agent's link (default: its "
                         "transmissions paced at 115200 baud)")
    a = ap.parse_args()
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    q = Qemu(a)
    try:
        fd = open_raw(q.pty)  # held open: QEMU sees the terminal connected before the guest runs
    except OSError as e:
        q.p.kill()
        q.p.wait()
        raise SystemExit(f"run_link: cannot open {q.pty}: {e}")
    agent = None
    result = Path(a.workdir) / "agent.json"
    result.unlink(missing_ok=True)
    ok = True
    try:
        if a.group in ("link_reliable", "link_restart"):
            yaml = Path(a.workdir) / "link_agent.yaml"
            yaml.write_text(AGENT_YAML)
            agent = subprocess.Popen([a.agent, str(yaml), "--json", str(result), "--quiet",
                                      "--rt-priority", "80", "--link", f"uart={a.host_link_prefix}serial:{q.pty}"])
            time.sleep(1.5)  # the agent has the terminal, QEMU has seen it open
            q.cont()
        else:
            time.sleep(1.2)
            q.cont()
            readers = {"link_bad_input": bad_input, "link_cut": link_cut, "link_suspend": link_suspend}
            ok = readers[a.group](fd, q)
        rc = q.wait(a.timeout)
    finally:
        if agent is not None:
            agent.send_signal(signal.SIGINT)  # an orderly stop: the result is written
            try:
                agent.wait(20)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
        os.close(fd)
        if q.p.poll() is None:
            q.p.kill()
    took = time.monotonic() - t0
    out = "".join(q.out)
    print(f"run_link: {a.group} on {a.board}: QEMU exit status {rc}, {took:.1f} s")
    if rc != 0 or not re.search(r"PASSED: [0-9]+ checks, 0 failed", out) or not ok:
        print("run_link: FAILED (firmware)")
        return 1
    if a.group in ("link_reliable", "link_restart"):
        if agent is None or agent.returncode != 0 or not result.exists():
            print(f"run_link: FAILED: the agent ended with {agent.returncode if agent else None}, no result")
            return 1
        doc = json.loads(result.read_text())
        cb = next(c for c in doc["callbacks"] if c["name"] == "check")
        seq = cb["sequence"]
        count = a.count or 100000
        print(f"run_link: agent: {seq}, subscription dropped {cb['dropped']}, links {doc['links']}")
        if (seq["in_order"] != count or seq["missing"] or seq["repeated"] or seq["corrupt"]
                or seq["next"] != count or cb["dropped"]):
            print(f"run_link: FAILED: the agent did not receive {count} messages exactly once, in order, intact")
            return 1
    print(f"run_link: PASSED ({took:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

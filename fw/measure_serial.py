#!/usr/bin/env python3
"""Measure QEMU's host side of a UART (docs/mcu.md, "A link to the host"): the firmware group
serial_measure with UART1 on a pseudo-terminal and on a UNIX socket chardev; this script echoes.

    fw/measure_serial.py build/release/fw/mps2-an500/takt-fw-tests.elf [mps2-an500]
"""
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time
import tty


def echo(fd_read, fd_write, stop):
    """Echo bytes until a 0xFF arrives after the echo phase; answer it with one byte."""
    seen = 0
    while True:
        r, _, _ = select.select([fd_read], [], [], 30)
        if not r:
            return
        data = os.read(fd_read, 65536) if isinstance(fd_read, int) else fd_read.recv(65536)
        if not data:
            return
        if seen < 200 and 0xFF not in data:
            k = min(200 - seen, len(data))
            send = data[:k]
            (os.write(fd_write, send) if isinstance(fd_write, int) else fd_write.sendall(send))
            seen += k
            data = data[k:]
        if 0xFF in data:
            (os.write(fd_write, b"!") if isinstance(fd_write, int) else fd_write.sendall(b"!"))
            return


def run(elf, board, kind):
    d = tempfile.mkdtemp()
    base = ["qemu-system-arm", "-M", board, "-display", "none", "-monitor", "none",
            "-semihosting-config", "enable=on,target=native", "-kernel", elf, "-append", "serial_measure",
            "-serial", "stdio"]
    if kind == "pty":
        p = subprocess.Popen(base + ["-serial", "pty"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = p.stdout.readline()
        path = re.search(r"(/dev/pts/\d+)", line).group(1)
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(fd)
        echo(fd, fd, None)
        out = p.stdout.read()
        os.close(fd)
    else:
        sock = os.path.join(d, "uart.sock")
        p = subprocess.Popen(base + ["-chardev", f"socket,id=l,path={sock},server=on,wait=on", "-serial", "chardev:l"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        while not os.path.exists(sock):
            time.sleep(0.05)
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        echo(s, s, None)
        out = p.stdout.read()
        s.close()
    p.wait()
    return [l for l in out.splitlines() if l.startswith("serial_measure") or "PASSED" in l or "FAIL" in l]


if __name__ == "__main__":
    elf = sys.argv[1]
    board = sys.argv[2] if len(sys.argv) > 2 else "mps2-an500"
    for kind in ("pty", "socket"):
        print(kind, *run(elf, board, kind), sep="\n  ")

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# the native build under test: the release build, or the one TAKT_BUILD_DIR names (sanitizers)
BUILD = Path(os.environ.get("TAKT_BUILD_DIR", REPO / "build" / "release"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a master a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    """Until predicate() is true; an assertion naming what after timeout seconds."""
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def takt(tmp_path):
    """Run `takt ARGS...` (this package's CLI) and return the CompletedProcess."""

    def call(*args, check=False):
        env = dict(os.environ)
        env.setdefault("TAKT_BUILD_DIR", str(REPO / "build" / "release"))
        proc = subprocess.run([sys.executable, "-m", "takt", *map(str, args)], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=120)
        if check:
            assert proc.returncode == 0, proc.stderr
        return proc

    return call


@pytest.fixture
def write(tmp_path):
    def make(name, text):
        p = tmp_path / name
        p.write_text(text)
        return p

    return make


@pytest.fixture
def runtime_dir(tmp_path, monkeypatch):
    """Introspection endpoints of this test only: a private XDG_RUNTIME_DIR."""
    d = tmp_path / "xdg"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d))
    return d


def system_name(system: Path) -> str:
    for line in system.read_text().splitlines():
        if line.startswith("name:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{system}: no name")


def start_system(system: Path, runtime_dir: Path, rt_priority: int = 0, duration: float = 0):
    """takt-run on system (quiet), returned once its introspection endpoint exists."""
    cmd = [str(BUILD / "tools" / "takt-run"), str(system), "--quiet", "--rt-priority", str(rt_priority)]
    if duration:
        cmd += ["--duration", str(duration)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sock = runtime_dir / "takt" / f"{system_name(system)}.{proc.pid}.sock"
    deadline = time.monotonic() + 10
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no endpoint {sock}: {proc.stderr.read().decode()}")
        time.sleep(0.02)
    return proc, sock


def stop_system(proc) -> None:
    """SIGINT, as Ctrl-C: the runner stops in order."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise

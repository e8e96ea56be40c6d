"""Stopping `takt run` and `takt agent` as a supervisor does: started with SIGINT ignored (a
background job of a non-interactive shell, some CI systems and supervisors), stopped by SIGTERM or
SIGINT sent to the `takt` process. Each must stop within 2 s with its result written and leave no
process behind, checked by process id."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BUILD, REPO, wait_for

RUNNER = str(BUILD / "tools" / "takt-run")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def gone(pid):
    """The process has exited (reaped, or a zombie waiting for a parent that does not reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def children(pid):
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(c) for c in text.split()]


@pytest.fixture
def started():
    """The ids of the processes a test starts; any still running at its end (a failed test) is
    killed, so a failure leaves nothing behind either."""
    pids = []
    yield pids
    for pid in pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


def start(kind, out, started, session=False, preexec=ignore_sigint):
    """`takt run` or `takt agent` on a long duration, SIGINT ignored as inherited (in a process
    group of its own if session); returns the wrapper's Popen and the runner's pid once the
    runner is running its system."""
    env = dict(os.environ, TAKT_BUILD_DIR=str(BUILD))
    if kind == "run":
        args = ["run", str(REPO / "examples" / "robot.yaml"), "--duration", "60", "--quiet"]
    else:
        a, m = free_port(), free_port()
        args = ["agent", str(REPO / "examples" / "link_agent.yaml"),
                "--link", f"uart=udp:127.0.0.1:{a}:127.0.0.1:{m}"]
    proc = subprocess.Popen([sys.executable, "-m", "takt", *args, "--rt-priority", "0",
                             "--out", str(out)], env=env, preexec_fn=preexec,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=session)
    started.append(proc.pid)

    def runner_up():
        assert proc.poll() is None, proc.communicate()
        kids = children(proc.pid)
        return len(kids) == 1 and os.path.realpath(f"/proc/{kids[0]}/exe") == os.path.realpath(RUNNER)

    wait_for(runner_up, 20, "takt-run to start")
    runner = children(proc.pid)[0]
    started.append(runner)
    # the runner masks nothing of SIGINT/SIGTERM once it runs: wait until it has taken them
    wait_for(lambda: sig_caught(runner, signal.SIGINT) and sig_caught(runner, signal.SIGTERM), 10,
             "takt-run to take its signals")
    time.sleep(0.3)  # let it run its system for a moment: the stop interrupts real work
    return proc, runner


def sig_mask(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1], 16)
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def sig_caught(pid, sig):
    bit = 1 << (sig - 1)
    return bool(sig_mask(pid, "SigCgt") & bit) and not sig_mask(pid, "SigBlk") & bit


@pytest.mark.parametrize("kind", ["run", "agent"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_with_sigint_ignored(tmp_path, started, kind, sig):
    proc, runner = start(kind, tmp_path / "out", started)
    # the environment's SIG_IGN for SIGINT is what the wrapper inherited
    assert sig_mask(proc.pid, "SigIgn") & (1 << (signal.SIGINT - 1)) == 0  # the wrapper took it back
    t0 = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    took = time.monotonic() - t0
    assert proc.returncode == 0, err
    assert took < 2.0, f"stopping took {took:.2f} s"
    wait_for(lambda: gone(runner), 2.0 - min(took, 1.9), f"takt-run {runner} to exit")
    results = list((tmp_path / "out").glob("run_*.json"))
    assert len(results) == 1 and f"result: {results[0]}" in out
    result = json.loads(results[0].read_text())
    assert 0 < result["duration_s"] < 30  # stopped early, in order: the result is complete
    assert result["panic"] is None
    if kind == "run":
        assert sum(c["runs"] for c in result["callbacks"]) > 0
    else:  # the agent served its link (no peer here: nothing arrived to run its callbacks)
        assert [link["name"] for link in result["links"]] == ["uart"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_one_signal_to_the_whole_group_is_one_stop(tmp_path, started, sig):
    # a terminal's Ctrl-C reaches every process of the foreground group, systemd's SIGTERM every
    # process of the unit: the runner gets the signal itself and forwarded by `takt`, which is
    # one stop in order, not a second signal
    proc, runner = start("run", tmp_path / "out", started, session=True)
    t0 = time.monotonic()
    os.killpg(proc.pid, sig)
    out, err = proc.communicate(timeout=10)
    took = time.monotonic() - t0
    assert proc.returncode == 0, err
    assert "second signal" not in err
    assert took < 2.0, f"stopping took {took:.2f} s"
    wait_for(lambda: gone(runner), 2.0 - min(took, 1.9), f"takt-run {runner} to exit")
    assert 0 < json.loads(next((tmp_path / "out").glob("run_*.json")).read_text())["duration_s"] < 30


def test_nohup_keeps_sighup_ignored(tmp_path, started):
    def nohup():
        ignore_sigint()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc, runner = start("run", tmp_path / "out", started, preexec=nohup)
    hup = 1 << (signal.SIGHUP - 1)
    assert sig_mask(proc.pid, "SigIgn") & hup and sig_mask(runner, "SigIgn") & hup
    proc.send_signal(signal.SIGHUP)
    os.kill(runner, signal.SIGHUP)
    # had SIGHUP stopped the run, this SIGTERM would be a second signal: no result, status 143
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert 0 < json.loads(next((tmp_path / "out").glob("run_*.json")).read_text())["duration_s"] < 30


def test_wrapper_killed_takes_the_runner_along(tmp_path, started):
    # SIGKILL cannot be forwarded: the kernel sends the runner SIGTERM (PR_SET_PDEATHSIG)
    proc, runner = start("run", tmp_path / "out", started)
    proc.kill()
    proc.communicate(timeout=10)
    wait_for(lambda: gone(runner), 2.0, f"takt-run {runner} to exit after its parent was killed")
    result = json.loads(next((tmp_path / "out").glob("run_*.json")).read_text())
    assert 0 < result["duration_s"] < 30


def test_second_signal_exits_at_once(tmp_path, started):
    proc, runner = start("run", tmp_path / "out", started)
    # the runner is stopped while both signals reach it, so the second one is certainly handled
    # before the first one's orderly stop could end the run
    os.kill(runner, signal.SIGSTOP)
    wait_for(lambda: Path(f"/proc/{runner}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T",
             5, "takt-run to stop")
    proc.send_signal(signal.SIGTERM)
    wait_for(lambda: sig_mask(runner, "ShdPnd") & (1 << (signal.SIGTERM - 1)), 5, "SIGTERM forwarded")
    proc.send_signal(signal.SIGINT)
    wait_for(lambda: sig_mask(runner, "ShdPnd") & (1 << (signal.SIGINT - 1)), 5, "SIGINT forwarded")
    os.kill(runner, signal.SIGCONT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM), err
    assert "second signal: exiting without a result" in err
    assert gone(runner)
    assert not list((tmp_path / "out").glob("run_*.json"))


def test_runner_alone_stops_in_order_with_sigint_ignored(tmp_path, started):
    # takt-run started directly (no wrapper): it takes SIGINT back and stops in order
    path = tmp_path / "r.json"
    proc = subprocess.Popen([RUNNER, str(REPO / "examples" / "robot.yaml"), "--duration", "60",
                             "--quiet", "--rt-priority", "0", "--json", str(path)],
                            preexec_fn=ignore_sigint, stderr=subprocess.PIPE, text=True)
    started.append(proc.pid)
    wait_for(lambda: sig_caught(proc.pid, signal.SIGINT), 10, "takt-run to take SIGINT")
    time.sleep(0.3)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert time.monotonic() - t0 < 2.0
    assert 0 < json.loads(path.read_text())["duration_s"] < 30


def test_a_runner_killed_outright_is_said(tmp_path, started):
    # SIGKILL (the OOM killer, a watchdog) gives the runner no chance to say anything: `takt run`
    # says it, with the status a shell reports for it, and no result is claimed
    proc, runner = start("run", tmp_path / "out", started)
    os.kill(runner, signal.SIGKILL)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 128 + signal.SIGKILL
    assert f"takt: takt-run (pid {runner}) was killed by SIGKILL; it wrote no result" in err, err
    assert "result:" not in out
    assert not list((tmp_path / "out").glob("run_*.json"))

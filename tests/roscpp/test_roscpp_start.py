#!/usr/bin/env python3
"""How a ported node (tests/roscpp/start.cpp) starts without a master and with a bad master URI,
and how it ends while it waits for the master, beside roscpp's behaviour:

- ROS_MASTER_URI unset: ros::master::getURI() is roscpp's default http://localhost:11311; the node
  says once that it cannot contact the master there and retries; SIGINT or SIGTERM then ends it
  at once, exit status 0, with nothing more on stderr (the same with __master:= a closed port);
- ros::shutdown() from another thread while it waits ends the wait too;
- a master URI that is not one (ROS_MASTER_URI=xyz, __master:=bogus): exit status 1 at once, one
  line naming the variable or argument and its value.

Every wait is bounded. No master runs: nothing listens on the ports used (11311 is checked; when
something listens there, the cases with ROS_MASTER_URI unset are skipped).

Usage: test_roscpp_start.py START_PROGRAM (exit 0 when every check passes)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ports import free_port  # noqa: E402

WAIT = 5.0  # seconds for any one step


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Node:
    """The program running with ROS_MASTER_URI as given (None: unset), its stderr in a file."""

    def __init__(self, prog: str, args: list[str], master_uri: str | None):
        env = dict(os.environ)
        env.pop("ROS_MASTER_URI", None)
        if master_uri is not None:
            env["ROS_MASTER_URI"] = master_uri
        self.err = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen([prog] + args, env=env, stdout=subprocess.PIPE, stderr=self.err,
                                  text=True)

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read()

    def wait_stderr(self, text: str) -> bool:
        end = time.monotonic() + WAIT
        while time.monotonic() < end and self.p.poll() is None:
            if text in self.stderr():
                return True
            time.sleep(0.05)
        return text in self.stderr()

    def end(self) -> tuple[int | None, str, float]:
        """(exit status or None if it had to be killed, stdout, seconds it took)."""
        t = time.monotonic()
        try:
            out = self.p.communicate(timeout=WAIT)[0]
            return self.p.returncode, out, time.monotonic() - t
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None, self.p.communicate()[0], time.monotonic() - t


def check(name: str, ok: bool, detail: str) -> bool:
    print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}")
    return ok


def retry_then(prog: str, args: list[str], master_uri: str | None, uri: str,
               stop) -> tuple[bool, str]:
    """The node retries contacting uri; stop(node) ends it: at once, status 0, quietly."""
    n = Node(prog, args, master_uri)
    retrying = n.wait_stderr("Retrying")
    if retrying:
        stop(n)
    else:
        n.p.send_signal(signal.SIGINT)
    rc, out, took = n.end()
    lines = n.stderr().splitlines()
    ok = (retrying and rc == 0 and took < 2.0 and f"uri {uri}\n" in out and "loop ended" in out
          and len(lines) == 1 and f"[{uri}]" in lines[0])
    return ok, (f"retrying={retrying} status={rc} took={took:.2f}s stdout={out!r} "
                f"stderr={n.stderr()!r}")


def bad_uri(prog: str, args: list[str], master_uri: str | None, says: str) -> tuple[bool, str]:
    """The node exits at once with status 1 and one line that says what is wrong."""
    n = Node(prog, args, master_uri)
    rc, out, took = n.end()
    err = n.stderr()
    ok = rc == 1 and took < WAIT and err.count("\n") == 1 and says in err
    return ok, f"status={rc} (None: hung, killed) stdout={out!r} stderr={err!r}"


def main() -> int:
    prog = sys.argv[1]
    failures = 0
    default = "http://localhost:11311"
    if listening(11311):
        print("skip ROS_MASTER_URI unset: something listens on 127.0.0.1:11311")
    else:
        for sig in (signal.SIGINT, signal.SIGTERM):
            ok, detail = retry_then(prog, [], None, default, lambda n, s=sig: n.p.send_signal(s))
            name = f"ROS_MASTER_URI unset: retries at {default}, ends on {sig.name}"
            failures += not check(name, ok, detail)
    port = free_port()  # nothing listens there
    closed = f"http://127.0.0.1:{port}/"
    ok, detail = retry_then(prog, [f"__master:={closed}"], "xyz", closed,
                            lambda n: n.p.send_signal(signal.SIGTERM))
    failures += not check("__master:= a closed port (over ROS_MASTER_URI): ends on SIGTERM", ok,
                          detail)
    ok, detail = retry_then(prog, ["--shutdown-thread", f"__master:={closed}"], None, closed,
                            lambda n: n.p.send_signal(signal.SIGUSR1))  # its thread's cue
    failures += not check("ros::shutdown() from another thread ends the wait", ok, detail)
    ok, detail = bad_uri(prog, [], "xyz", "ROS_MASTER_URI 'xyz' is not a valid http URI")
    failures += not check("ROS_MASTER_URI=xyz: status 1, one line", ok, detail)
    ok, detail = bad_uri(prog, ["__master:=bogus"], None,
                         "__master 'bogus' is not a valid http URI")
    failures += not check("__master:=bogus: status 1, one line", ok, detail)
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""`takt run`, `takt agent` and `takt check`: a system description under the native runner."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from takt import native


# What a supervisor (systemd, a shell, Ctrl-C on a terminal) sends to stop a service.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_signals() -> List[int]:
    """STOP_SIGNALS to take, but SIGHUP when inherited as ignored (`nohup`): it stays ignored."""
    return [s for s in STOP_SIGNALS if not (s == signal.SIGHUP and signal.getsignal(s) is signal.SIG_IGN)]


def supervise(cmd: List[str], stopped: Optional[List[int]] = None,
              started: Optional[Callable[[subprocess.Popen], None]] = None) -> int:
    """Run cmd as a child and return its exit status (128 + N when signal N killed it).

    SIGINT, SIGTERM and SIGHUP sent to this process are forwarded to the child, whatever
    disposition this process inherited (a non-interactive shell starts background jobs with
    SIGINT ignored, where Python installs no KeyboardInterrupt handler), except a SIGHUP inherited
    as ignored (`nohup`), which stays ignored; the child stops in order and this waits for it. The signals are blocked while the child starts: it begins with them
    blocked and takes them (takt-run: first thing in main), so one sent early is not lost nor
    kills it before it can stop in order; here it stays pending until the child's id is known.
    The child learns this process's id (TAKT_SUPERVISOR_PID) and has the kernel send it SIGTERM
    should this process die first. The signals received are appended to stopped if it is given.
    """
    child: Optional[subprocess.Popen] = None
    forwarded: List[int] = []

    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        if stopped is not None:
            stopped.append(signum)
        if child is not None and child.returncode is None:
            child.send_signal(signum)

    taken = stop_signals()  # an ignored SIGHUP stays ignored here and in the child
    previous = {s: signal.signal(s, forward) for s in taken}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, taken)
    try:
        env = dict(os.environ, TAKT_SUPERVISOR_PID=str(os.getpid()))
        try:
            child = subprocess.Popen(cmd, env=env)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # pending ones are forwarded now
        if started is not None:
            started(child)
        rc = child.wait()  # PEP 475: a handled signal does not interrupt the wait
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if rc < 0 and -rc not in forwarded:
        # killed by a signal nobody here passed on (SIGKILL, a crash): said, not just a status
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        print(f"takt: {Path(cmd[0]).name} (pid {child.pid}) was killed by {name}; "
              "it wrote no result", file=sys.stderr)
    return 128 - rc if rc < 0 else rc


class Recorder:
    """The system file's `record:` section: `takt record` of the runner's endpoint, in a thread,
    from the moment the endpoint exists until the runner stops (docs/recording.md)."""

    def __init__(self, file: Path):
        self.wanted, self.thread, self.result = None, None, None
        try:
            import yaml
            doc = yaml.safe_load(file.read_text())
        except Exception:
            return  # the runner reports what is wrong with the file
        rec = doc.get("record") if isinstance(doc, dict) else None
        if isinstance(rec, dict) and rec.get("file"):
            self.out = (file.parent / str(rec["file"])) if not Path(str(rec["file"])).is_absolute() else Path(str(rec["file"]))
            topics = rec.get("topics")
            self.wanted = [str(t) for t in topics] if isinstance(topics, list) else []  # (the runner names a bad one)

    def start(self, child: subprocess.Popen) -> None:
        import threading
        self.thread = threading.Thread(target=self._record, args=(child,), daemon=True)
        self.thread.start()

    def _record(self, child: subprocess.Popen) -> None:
        import time
        from takt.commands.graph import endpoint_of
        from takt.commands.record import record_endpoint
        while (sock := endpoint_of(child.pid)) is None:
            if child.poll() is not None:
                return
            time.sleep(0.01)
        try:
            counts = record_endpoint(sock, self.wanted, self.out, all_topics=not self.wanted)
            self.result = f"recorded {sum(counts.values())} messages into {self.out}"
        except Exception as e:  # reported, the run itself goes on
            self.result = f"takt run: no recording: {e}"

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join(timeout=15)
            if self.result:
                print(self.result, file=sys.stderr)


def run_system(file: Path, executor: Optional[str], duration: Optional[float], out: Path,
               rt_priority: int = 80, cpu: int = -1, quiet: bool = False,
               links: Optional[List[str]] = None,
               stopped: Optional[List[int]] = None,
               trace: Optional[Path] = None,
               shared_domain: Optional[str] = None,
               peer_clocks: Optional[List[str]] = None,
               no_introspect: bool = False) -> Tuple[int, Optional[Path]]:
    """Run takt-run on file; return (exit status, path of the JSON result or None).

    A stop signal (Ctrl-C, SIGTERM, SIGHUP) ends the run in order: the result is written and the
    status is 0; a second one ends it at once. The signals received are appended to stopped if
    it is given (see supervise). trace: record a scheduling trace into this file (Perfetto).
    shared_domain: the shared-memory domain of the file's shared topics (docs/shm.md).
    peer_clocks: links whose far clock is mapped (a microcontroller's: docs/transport.md)."""
    exe = native.program("tools/takt-run")
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / f"run_{file.stem}_{executor or 'file'}.json"
    cmd: List[str] = [str(exe), str(file), "--json", str(json_path),
                      "--rt-priority", str(rt_priority), "--cpu", str(cpu)]
    if executor:
        cmd += ["--executor", executor]
    if duration is not None:
        cmd += ["--duration", str(duration)]
    if quiet:
        cmd.append("--quiet")
    for link in links or []:
        cmd += ["--link", link]
    for name in peer_clocks or []:
        cmd += ["--peer-clock", name]
    if trace is not None:
        cmd += ["--trace", str(trace)]
    if shared_domain:
        cmd += ["--shared-domain", shared_domain]
    if no_introspect:
        cmd.append("--no-introspect")
    json_path.unlink(missing_ok=True)  # a result left by an earlier run is not this run's
    recorder = Recorder(file)
    if no_introspect and recorder.wanted is not None:  # it records through the endpoint
        print("takt run: --no-introspect: the file's record: section records nothing", file=sys.stderr)
        recorder.wanted = None
    # (`record:` without topics records every topic: wanted is [] then)
    rc = supervise(cmd, stopped, started=recorder.start if recorder.wanted is not None else None)
    recorder.join()
    return rc, (json_path if rc == 0 and json_path.exists() else None)


def not_a_file(command: str, path: Path) -> bool:
    """Says (one line) why path cannot be read as a file, if it cannot."""
    if path.is_file():
        return False
    why = "is a directory, not a file" if path.is_dir() else "no such file"
    print(f"takt {command}: {path}: {why}", file=sys.stderr)
    return True


def run(args: argparse.Namespace) -> int:
    """`takt run FILE ...`: run with a live table, print where the result went."""
    if not_a_file("run", args.file):
        return 2
    rc, path = run_system(args.file, args.executor, args.duration, args.out, args.rt_priority, args.cpu, args.quiet,
                          getattr(args, "link", None), trace=args.trace,
                          shared_domain=getattr(args, "shared_domain", None),
                          peer_clocks=getattr(args, "peer_clock", None),
                          no_introspect=getattr(args, "no_introspect", False))
    if path is not None:
        print(f"result: {path}")
    return rc


def agent(args: argparse.Namespace) -> int:
    """`takt agent FILE ...`: serve the file's links until stopped."""
    if not_a_file("agent", args.file):
        return 2
    rc, path = run_system(args.file, None, args.duration, args.out, args.rt_priority, -1, True, args.link,
                          trace=getattr(args, "trace", None), peer_clocks=getattr(args, "peer_clock", None))
    if path is not None:
        print(f"result: {path}")
    return rc


def check(args: argparse.Namespace) -> int:
    """`takt check FILE`: validate without running."""
    if not_a_file("check", args.file):
        return 2
    return subprocess.call([str(native.program("tools/takt-run")), str(args.file), "--check"])

"""`takt record` and `takt play`: MCAP recordings of running takt systems (docs/recording.md).

Recording samples topics through the system's introspection endpoint (a subscription of the
endpoint's own node, keep-last, run by the endpoint's thread: never on the system's executors;
a slow recorder loses the oldest samples of a topic, the publishers never wait) and writes the
MCAP file with PyPI `mcap` here, outside the real-time process. Per message: log_time = the
publication instant in takt (t_data), publish_time = the origin time of the information (t_info),
sequence = takt's per-topic sequence number. Encodings: a generated ROS 1 type is recorded as
`ros1` with its `ros1msg` schema (the full definition, as rosbag writes it), a ROS 2 (CDR) type
as `cdr` with its `ros2msg` schema where its definition is found, a system file's byte-blob topic
as `takt-bytes` without a schema.

Playing publishes the messages into a running system through its endpoint at their recorded
pace (scaled by --rate), each with an origin time that keeps the recorded age (t_data - t_info)."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from takt import msgcodec
from takt.commands.graph import (ECHO_COUNT_MAX, ECHO_SECONDS_MAX, NoSystem, SampleErrors, check_count,
                                 endpoints, one, one_system, request, seconds_ms, stream)
from takt.msggen import ros1
from takt.msggen.spec import MsgError

MD5 = re.compile(r"^[0-9a-f]{32}$")


def encoding_of(topic: dict) -> str:
    h = topic.get("hash", "")
    if topic.get("serialized") and MD5.match(h):
        return "ros1"
    if topic.get("serialized") and "::" in h:
        return "cdr"
    return "takt-bytes"


def schema_of(topic: dict, enc: str) -> Optional[Tuple[str, str, bytes]]:
    """(name, schema encoding, data) for the topic's type, or None (no schema)."""
    if enc == "ros1":
        reg = msgcodec.registry()
        spec = reg.load_msg(topic["type"])
        return topic["type"], "ros1msg", ros1.full_text(reg, spec).encode()
    if enc == "cdr":
        name = topic["type"] if "/msg/" in topic["type"] else topic["type"].replace("/", "/msg/", 1)
        pkg, _, short = name.partition("/msg/")
        reg = msgcodec.registry()
        try:
            spec = reg.load_msg(f"{pkg}/{short}")
        except Exception:
            return None
        return name, "ros2msg", ros1.ros2_full_text(reg, spec).encode()
    return None


def _topics(path: Path, wanted: List[str], all_topics: bool) -> Tuple[str, List[dict]]:
    g = one(path, "graph")
    by_name = {t["name"]: t for t in g["topics"]}
    if all_topics or not wanted:
        return g["name"], list(by_name.values())
    chosen = []
    for w in wanted:
        t = by_name.get(w.lstrip("/"))
        if t is None:
            raise NoSystem(f"no topic named '{w.lstrip('/')}' in system '{g['name']}'")
        chosen.append(t)
    return g["name"], chosen


class _Output:
    """The recording's file as mcap's Writer writes it, its OSError (a full disk) a NoSystem
    naming the file: the endpoint's socket raises OSError when the system stops, the recording's
    ordinary end, and a failed write was taken for that end (success, the messages after it lost
    without a word)."""

    def __init__(self, f, name: Path):
        self.f, self.name = f, name

    def _do(self, op, *args):
        try:
            return op(*args)
        except OSError as e:
            raise NoSystem(f"cannot write {self.name}: {e.strerror or e}") from None

    def write(self, data) -> int:
        return self._do(self.f.write, data)

    def tell(self) -> int:
        return self._do(self.f.tell)

    def flush(self) -> None:
        self._do(self.f.flush)

    def close(self) -> None:  # (its flush writes what is buffered)
        self._do(self.f.close)


def _limits(duration: float, count: int) -> int:
    """The recording's duration in the endpoint's milliseconds, after checking it and count
    against the endpoint's limits of an echo (NoSystem naming the option)."""
    check_count("-n", count, "until --duration or Ctrl-C")
    return seconds_ms("--duration", duration, ECHO_SECONDS_MAX)


def record_endpoint(path: Path, wanted: List[str], out: Path, duration: float = 86400.0,
                    count: int = 0, all_topics: bool = False) -> Dict[str, int]:
    """Record topics of the system behind endpoint path into the MCAP file out until duration
    passed, count messages were taken, the system stopped or Ctrl-C; the messages per topic."""
    from mcap.writer import Writer

    ms = _limits(duration, count)
    system, topics = _topics(path, wanted, all_topics)
    if not topics:  # (before the file is made: an empty recording is no recording)
        raise NoSystem(f"system '{system}' has no topics to record")
    if len(topics) > 16:
        raise NoSystem(f"{len(topics)} topics: one recording takes at most 16 (name them)")
    counts: Dict[str, int] = {t["name"]: 0 for t in topics}
    schemas = {}
    for t in topics:  # before the file is made: a type without its .msg here is said in one line
        try:
            schemas[t["name"]] = schema_of(t, encoding_of(t))
        except MsgError as e:
            raise NoSystem(f"topic /{t['name']}: its type's definition is needed for the recording's "
                           f"schema and is not on this host ({e}; TAKT_MSG_PATH adds folders)") from None
    with contextlib.closing(_Output(open(out, "wb"), out)) as f:
        w = Writer(f)
        w.start(profile="ros1" if all(encoding_of(t) == "ros1" for t in topics) else "",
                library="takt record")
        channels: Dict[str, int] = {}
        for t in topics:
            enc = encoding_of(t)
            sch = schemas[t["name"]]
            sid = w.register_schema(*sch) if sch else 0
            channels[t["name"]] = w.register_channel(
                f"/{t['name']}", enc, sid,
                {"takt_type": t["type"], "takt_size": str(t["size"]), "takt_hash": t.get("hash", "")})
        line = f"echo {','.join(t['name'] for t in topics)} {count or ECHO_COUNT_MAX} {ms}"
        left_out = SampleErrors("takt record")
        try:
            for s in request(path, line, timeout=duration + 10):
                if SampleErrors.of(s):
                    left_out.add(s)
                    continue
                if "error" in s:
                    raise NoSystem(s["error"])
                if "end" in s:
                    if s.get("dropped"):
                        print(f"takt record: {s['dropped']} message(s) not recorded: the recorder "
                              f"fell behind the system", file=sys.stderr)
                    break
                data = bytes.fromhex(s.get("serialized", s.get("bytes", "")))
                # MCAP's times are unsigned: an origin time before the clock's start (an old
                # header.stamp bridged from ROS 1, a play line older than the clock) is written
                # as 0, the earliest the file holds (its age as recorded is then t_data)
                w.add_message(channels[s["topic"]], log_time=max(0, s["t_data_ns"]), data=data,
                              publish_time=max(0, s["t_info_ns"]), sequence=s["seq"])
                counts[s["topic"]] += 1
        except KeyboardInterrupt:
            pass
        except (ConnectionError, OSError):
            pass  # the system stopped (the socket's; the file's are NoSystem): what was taken is kept
        except BaseException:  # an error: what was taken stays readable, the error is the one told
            try:
                _finish(w, system)
            except Exception:
                pass
            try:
                f.f.close()  # now, quietly: on a full disk closing fails too, the error told is the first
            except OSError:
                pass
            raise
        _finish(w, system)
    left_out.report()
    return counts


def _finish(w, system: str) -> None:
    w.add_metadata("takt", {"system": system, "clock": "CLOCK_MONOTONIC ns",
                            "log_time": "t_data (publication)",
                            "publish_time": "t_info (origin of the information)"})
    w.finish()


def record(args: argparse.Namespace) -> int:
    _limits(args.duration, args.n)  # the arguments first: they are wrong with any system
    path = one_system(endpoints(args.system))
    out: Path = args.output or Path(time.strftime("takt_%Y-%m-%d-%H-%M-%S.mcap"))
    counts = record_endpoint(path, args.topics, out, args.duration, args.n, args.all)
    total = sum(counts.values())
    print(f"recorded {total} messages into {out}: " + ", ".join(f"/{k} {v}" for k, v in counts.items()))
    return 0


def play(args: argparse.Namespace) -> int:
    from mcap.reader import make_reader

    if not args.file.is_file():  # before looking for a system: the file is the first thing wrong
        why = "is a directory, not a file" if args.file.is_dir() else "no such file"
        print(f"takt play: {args.file}: {why}", file=sys.stderr)
        return 2
    from mcap.exceptions import McapError

    with open(args.file, "rb") as f:  # the file first: one that is no recording needs no system
        try:
            make_reader(f).get_header()
        except (McapError, StopIteration) as e:  # (magic alone: no record after it)
            print(f"takt play: {args.file}: not an MCAP recording ({type(e).__name__}: {e})", file=sys.stderr)
            return 2
    path = one_system(endpoints(args.system))
    g = one(path, "graph")
    by_name = {t["name"]: t for t in g["topics"]}
    with open(args.file, "rb") as f:
        reader = make_reader(f)
        msgs = []
        recorded = set()
        for schema, channel, message in reader.iter_messages(log_time_order=True):
            name = channel.topic.lstrip("/")
            recorded.add(name)
            if args.topics and name not in [t.lstrip("/") for t in args.topics]:
                continue
            t = by_name.get(name)
            if t is None:
                raise NoSystem(f"the recording's topic /{name} does not exist in system '{g['name']}'")
            if channel.message_encoding == "takt-bytes" and len(message.data) != t["size"]:
                raise NoSystem(f"/{name}: recorded messages of {len(message.data)} bytes, the system's "
                               f"topic takes {t['size']}")
            msgs.append((message.log_time, message.publish_time, name, message.data))
    missing = [t for t in (args.topics or []) if t.lstrip("/") not in recorded]
    if missing:
        have = ", ".join(f"/{n}" for n in sorted(recorded)) or "none"
        print(f"takt play: {args.file} has no topic {', '.join('/' + t.lstrip('/') for t in missing)} "
              f"(its topics: {have})", file=sys.stderr)
        return 1
    if not msgs:
        print(f"takt play: {args.file} holds no messages", file=sys.stderr)
        return 1
    rate = args.rate if args.rate > 0 else 1.0
    first = msgs[0][0]
    span = (msgs[-1][0] - first) / 1e9  # recorded
    # every line is formatted (its hex: the long part) before the start is fixed, so that the
    # first instants have not passed when the lines are ready (on a large recording the first
    # messages would go out late and together)
    rest = []
    for log_time, publish_time, name, data in msgs:
        age = log_time - publish_time  # the data's age when it was published: kept
        rest.append((int((log_time - first) / rate), f" {name} {data.hex() or '-'} {max(0, age)}\n".encode()))
    msgs.clear()  # (their bytes are in the lines now)

    def lines(start: int) -> Iterator[bytes]:
        for offset, tail in rest:
            yield str(start + offset).encode()
            yield tail
        yield b"end\n"

    # the endpoint publishes each line at its instant: the stream runs ahead of the clock, so
    # this process's own scheduling does not enter the replay's timing
    start = time.monotonic_ns() + 200_000_000
    answer = None
    try:
        answer = stream(path, "play", lines(start), timeout=span / rate + 30)
    except KeyboardInterrupt:
        pass
    if answer is None:
        return 130
    if "error" in answer:
        raise NoSystem(answer["error"])
    print(f"played {answer['played']} messages of {args.file} ({span:.3f} s recorded) into system '{g['name']}'; "
          f"latest {answer['late_max_ns'] / 1e6:.3f} ms after its instant")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("record", help="record topics of a running system into an MCAP file")
    p.add_argument("topics", nargs="*", help="topics (default: every topic, at most 16)")
    p.add_argument("-a", "--all", action="store_true", help="every topic")
    p.add_argument("-o", "--output", type=Path, help="the file (default: takt_DATE.mcap)")
    p.add_argument("--duration", type=float, default=86400.0, help="seconds to record (default: until Ctrl-C)")
    p.add_argument("-n", type=int, default=0, help="stop after this many messages")
    p.add_argument("--system", help="the running system of this name")
    p = sub.add_parser("play", help="publish an MCAP recording into a running system at its pace")
    p.add_argument("file", type=Path)
    p.add_argument("topics", nargs="*", help="only these topics")
    p.add_argument("-r", "--rate", type=float, default=1.0, help="speed factor (default 1)")
    p.add_argument("--system", help="the running system of this name")


def run(args: argparse.Namespace) -> int:
    try:
        return record(args) if args.command == "record" else play(args)
    except NoSystem as e:
        print(f"takt {args.command}: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"takt {args.command}: {e.filename}: no such file", file=sys.stderr)
        return 2

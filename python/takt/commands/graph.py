"""`takt node|topic|service|chain ...`: the ROS-style view of running takt systems, through
their introspection endpoints (takt/introspect.h; docs/introspection.md)."""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from takt import msgcodec


class NoSystem(Exception):
    pass


def endpoint_dir() -> Path:
    """Where endpoints live (the same rule as takt_introspect_default_dir)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg.startswith("/"):
        return Path(xdg) / "takt"
    if os.geteuid() == 0:
        return Path("/run/takt")
    return Path(f"/tmp/takt-{os.geteuid()}")


def endpoints(system: Optional[str]) -> List[Path]:
    """Endpoints of running systems (a socket nobody answers on is skipped), by name if asked."""
    d = endpoint_dir()
    found = []
    for p in sorted(d.glob("*.sock")) if d.is_dir() else []:
        name, _, rest = p.name.rpartition(".sock")[0].rpartition(".")
        if system is not None and name != system:
            continue
        pid = rest
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                p.unlink()  # left by a process that died: nobody will answer there again
            except OSError:
                pass
            continue
        found.append(p)
    if not found:
        raise NoSystem(f"no running takt system{' named ' + repr(system) if system else ''} "
                       f"(no endpoint in {d}; is it started with introspection on?)")
    return found


def endpoint_of(pid: int) -> Optional[Path]:
    """The endpoint of the system process pid, if it has made one (found by its pid, not by a
    name read again from its file: YAML reads `name: yes` as a boolean)."""
    d = endpoint_dir()
    found = sorted(d.glob(f"*.{pid}.sock")) if d.is_dir() else []
    return found[0] if found else None


def one_system(paths: List[Path]) -> Path:
    """The one endpoint of paths, or NoSystem naming the systems to choose from."""
    if len(paths) == 1:
        return paths[0]
    names = []
    for p in paths:
        name, _, pid = p.name.rpartition(".sock")[0].rpartition(".")
        names.append(f"{name} (pid {pid})")
    raise NoSystem(f"several systems are running: {', '.join(names)}; choose one with --system NAME")


def connect(path: Path, timeout: float) -> socket.socket:
    """A connection to the endpoint at path, or NoSystem naming why there is none."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        s.close()
        raise NoSystem(f"{path}: no system answers there (stopped?)")
    except PermissionError:
        s.close()
        raise NoSystem(f"{path}: permission denied (the endpoint is its owner's only)")
    return s


# The longest request line the endpoint reads, its newline included (REQUEST_MAX - 1 in
# src/introspect/introspect.c): a longer one is refused whole, nothing published or called.
REQUEST_MAX = 8191
# The endpoint's limits of an echo (its COUNT and TIMEOUT_MS) and of a call (TIMEOUT_MS): checked
# here, so that a value past them is named as the option it came from, not as the protocol's usage.
ECHO_COUNT_MAX = 10_000_000
ECHO_SECONDS_MAX = 86400.0
CALL_SECONDS_MAX = 3600.0


def seconds_ms(option: str, value: float, most: float) -> int:
    """value seconds in the endpoint's milliseconds (at least 1), or NoSystem naming the option
    and its range."""
    if not 0.001 <= value <= most:  # (nan is not in it either)
        raise NoSystem(f"{option} {value:g}: give seconds from 0.001 to {most:g}")
    return max(1, int(value * 1000))


def check_count(option: str, n: int, until: str) -> None:
    """NoSystem naming the option unless n messages (0: no limit) is a count an echo takes."""
    if not 0 <= n <= ECHO_COUNT_MAX:
        raise NoSystem(f"{option} {n}: give 1 to {ECHO_COUNT_MAX} messages (0: {until})")


def fits(line: str, hx: str, what: str) -> None:
    """NoSystem naming the message's size and the most one request carries, unless the request
    line (holding the message as the hex hx) is one the endpoint reads."""
    over = len(line.encode()) + 1 - REQUEST_MAX
    if over > 0:
        most = max(0, (len(hx) - over) // 2)
        raise NoSystem(f"the message is {len(hx) // 2} bytes: {what} carries at most {most} "
                       f"(the endpoint reads request lines of up to {REQUEST_MAX} bytes)")


def _send(s: socket.socket, data: bytes) -> bool:
    """Send data; False when the endpoint closed the connection before taking all of it."""
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def _answer_lines(s: socket.socket, path: Path, sent: bool, timeout: float) -> Iterator[bytes]:
    """The lines the endpoint answers until it closes. An endpoint that refused the request (a
    line it does not take) answered why before closing with the rest unread: that answer is read,
    and the send's broken pipe, which `run` took for a closed stdout (nothing said, status 0), or
    the reset after it, is no error of its own."""
    buf = b""
    answered = False
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            raise NoSystem(f"{path}: no answer within {timeout:.0f} s")
        except ConnectionResetError:
            if sent:
                raise
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            one, buf = buf.split(b"\n", 1)
            if one.strip():
                answered = True
                yield one
    if buf.strip():
        answered = True
        yield buf
    if not sent and not answered:
        raise NoSystem(f"{path}: the endpoint closed the connection before taking the whole request")


def request(path: Path, line: str, timeout: float = 5.0) -> Iterator[dict]:
    """Send one request line; yield the JSON objects of the answer as they come."""
    with connect(path, timeout) as s:
        sent = _send(s, line.encode() + b"\n")
        for one in _answer_lines(s, path, sent, timeout):
            yield json.loads(one)


def stream(path: Path, first: str, chunks: Iterable, timeout: float) -> dict:
    """Send a request followed by more lines (a play stream; chunks of str or bytes, taken as
    they are sent, in batches of 64 KiB); return the one JSON answer. A line the endpoint refuses
    ends its play with its error as the answer."""
    with connect(path, timeout) as s:
        sent = _send(s, (first + "\n").encode())
        out = bytearray()
        for c in chunks if sent else ():  # the endpoint reads on as it plays
            out += c.encode() if isinstance(c, str) else c
            if len(out) >= 1 << 16:
                sent = _send(s, bytes(out))
                out.clear()
                if not sent:
                    break
        if sent and out:
            sent = _send(s, bytes(out))
        for line in _answer_lines(s, path, sent, timeout):
            return json.loads(line)
    raise NoSystem(f"{path}: no answer to '{first}'")


class SampleErrors:
    """Samples an echo sent as an error line: a message the endpoint could not serialize (its
    line has the topic and header, an "error" and no bytes). One such message is left out, said
    once per topic as it comes and counted at the end; the echo goes on. (An error line without a
    topic is the endpoint's own, which ends the echo.)"""

    def __init__(self, tool: str):
        self.tool = tool
        self.counts: Dict[str, int] = {}

    @staticmethod
    def of(s: dict) -> bool:
        return "error" in s and "topic" in s

    def add(self, s: dict) -> None:
        t = s["topic"]
        if t not in self.counts:
            print(f"{self.tool}: /{t}: message seq {s.get('seq', '?')} left out: the endpoint could not "
                  f"serialize it ({s['error']}); going on", file=sys.stderr, flush=True)
        self.counts[t] = self.counts.get(t, 0) + 1

    def report(self) -> None:
        for t, n in self.counts.items():
            if n > 1:  # (the first was said as it came)
                print(f"{self.tool}: /{t}: {n} messages left out in all: the endpoint could not "
                      f"serialize them", file=sys.stderr)


def one(path: Path, line: str, timeout: float = 5.0) -> dict:
    for obj in request(path, line, timeout):
        if "error" in obj:
            raise NoSystem(obj["error"])
        return obj
    raise NoSystem(f"{path}: empty answer to '{line}'")


def graphs(system: Optional[str]) -> List[Tuple[Path, dict]]:
    """The graph of each running system. An endpoint that refuses the connection (left by a
    process that died, its pid in use again) is skipped while another answers."""
    found, refused = [], []
    for p in endpoints(system):
        try:
            found.append((p, one(p, "graph")))
        except NoSystem as e:
            if "no system answers there" not in str(e):
                raise
            refused.append(e)
    if not found and refused:
        raise refused[0]
    return found


def _only(found: List[Tuple[Path, dict, dict]], what: str) -> Tuple[Path, dict]:
    """The one (endpoint, entry) of found, or NoSystem naming the systems that have it: a tool
    never acts on whichever system it happened to list first."""
    if len(found) == 1:
        return found[0][0], found[0][2]
    if not found:
        raise NoSystem(f"no {what} in the running systems")
    names = ", ".join(f"{g['name']} (pid {g['pid']})" for _, g, _ in found)
    raise NoSystem(f"{what} is in several running systems: {names}; choose one with --system NAME")


def _find_topic(system: Optional[str], name: str) -> Tuple[Path, dict]:
    found = [(path, g, t) for path, g in graphs(system) for t in g["topics"] if t["name"] == name]
    if not found:
        raise NoSystem(f"no topic named '{name}' in the running systems")
    return _only(found, f"topic '/{name}'")


# ---- node ----

def _print_names(names) -> int:
    for n in sorted(names):
        print(f"/{n}")
    return 0


def node_list(args: argparse.Namespace) -> int:
    return _print_names(n["name"] for _, g in graphs(args.system) for n in g["nodes"])


def node_info(args: argparse.Namespace) -> int:
    name = args.node.lstrip("/")
    shown = 0
    for _, g in graphs(args.system):  # a node of that name in each system that has one
        for n in g["nodes"]:
            if n["name"] != name:
                continue
            execs = g["executors"]
            print("-" * 80)
            print(f"Node [/{name}]  (system {g['name']}, pid {g['pid']})")
            print("Publications:")
            for t in sorted(n["publishes"]) or []:
                print(f" * /{t} [{_topic_type(g, t)}]")
            if not n["publishes"]:
                print(" None")
            print("\nSubscriptions:")
            subs = [c for c in n["callbacks"] if c["kind"] == "subscription"]
            for c in subs:
                print(f" * /{c['topic']} [{_topic_type(g, c['topic'])}]  (callback {c['name']})")
            if not subs:
                print(" None")
            print("\nServices:")
            srvs = [c for c in n["callbacks"] if c["kind"] == "service"]
            for c in srvs:
                print(f" * /{c['service']}")
            if not srvs:
                print(" None")
            print("\nCallbacks:")
            for c in n["callbacks"]:
                ex = execs[c["executor"]]["kind"] if 0 <= c["executor"] < len(execs) else "none"
                extra = f", period {c['period_ns'] / 1e6:g} ms" if "period_ns" in c else ""
                dl = f", deadline {c['deadline_ns'] / 1e6:g} ms" if c["deadline_ns"] > 0 else ""
                n_miss = c["deadline_misses"]
                misses = (f", {n_miss} deadline miss{'' if n_miss == 1 else 'es'}"
                          if c["deadline_ns"] > 0 else "")
                print(f" * {c['name']}: {c['kind']}, priority {c['priority']}{dl}{extra}, "
                      f"executor {ex}, {c['runs']} runs{misses}")
            shown += 1
    if shown:
        return 0
    print(f"takt node info: unknown node [/{name}]", file=sys.stderr)
    return 1


def _topic_type(g: dict, topic: str) -> str:
    for t in g["topics"]:
        if t["name"] == topic:
            return t["type"]
    return "?"


# ---- topic ----

def topic_list(args: argparse.Namespace) -> int:
    gs = graphs(args.system)
    rows = sorted(((t["name"], g["name"], t) for _, g in gs for t in g["topics"]), key=lambda r: r[:2])
    for i, (name, system, t) in enumerate(rows):
        if args.verbose:
            where = f"  (system {system})" if len(gs) > 1 else ""
            print(f" * /{name} [{t['type']}] {len(t['publishers'])} publishers, "
                  f"{len(t['subscribers'])} subscribers{where}")
        elif i == 0 or rows[i - 1][0] != name:  # once, as rostopic lists a graph's topics
            print(f"/{name}")
    return 0


def topic_info(args: argparse.Namespace) -> int:
    _, t = _find_topic(args.system, args.topic.lstrip("/"))
    print(f"Type: {t['type']}  ({t['size']} bytes in memory, {t['slots']} slots)\n")
    print("Publishers: ")
    for p in t["publishers"] or []:
        print(f" * /{p}")
    if not t["publishers"]:
        print(" None")
    print("\nSubscribers: ")
    for s in t["subscribers"] or []:
        print(f" * /{s}")
    if not t["subscribers"]:
        print(" None")
    return 0


def _decoder(t: dict):
    """A function from a sample to printable lines: the fields of a generated type (ROS 1 or CDR
    serialization, told apart by the type's hash: an md5 sum or a DDS type name), else the
    header and the bytes."""
    def raw(s):
        return [f"data: [{', '.join(str(b) for b in bytes.fromhex(s.get('bytes', s.get('serialized', ''))))}]"]

    h = t.get("hash", "")
    if t.get("serialized") and "/" in t["type"]:
        try:
            reg = msgcodec.registry()
            name = t["type"].replace("/msg/", "/")
            spec = reg.load_msg(name)
        except Exception as e:  # no definition here: show the bytes
            print(f"takt topic echo: cannot decode {t['type']} ({e}); showing bytes", file=sys.stderr)
            return raw
        decode = msgcodec.decode_cdr if "::" in h else msgcodec.decode

        def fields(s):
            try:
                return msgcodec.to_yaml(decode(reg, spec, bytes.fromhex(s["serialized"])))
            except ValueError as e:
                return [f"# cannot decode as {t['type']}: {e}"] + raw(s)
        return fields
    return raw


def topic_echo(args: argparse.Namespace) -> int:
    check_count("-n", args.n, "until Ctrl-C or --timeout")
    ms = seconds_ms("--timeout", args.timeout, ECHO_SECONDS_MAX)
    path, t = _find_topic(args.system, args.topic.lstrip("/"))
    decode = _decoder(t)
    count = args.n if args.n else 1000000
    got = 0
    left_out = SampleErrors("takt topic echo")
    for s in request(path, f"echo {t['name']} {count} {ms}", timeout=args.timeout + 5):
        if SampleErrors.of(s):
            left_out.add(s)
            continue
        if "error" in s:
            print(f"takt topic echo: {s['error']}", file=sys.stderr)
            return 1
        if "end" in s:
            if s.get("dropped"):
                print(f"takt topic echo: {s['dropped']} message(s) not shown: this tool fell behind",
                      file=sys.stderr)
            break
        if args.header:
            print(f"header:\n  seq: {s['seq']}\n  t_info_ns: {s['t_info_ns']}\n  t_data_ns: {s['t_data_ns']}")
        for line in decode(s):
            print(line)
        print("---", flush=True)
        got += 1
    left_out.report()
    return 0 if got > 0 or not args.n else 1


def rate_stats(t_data_ns: List[int]) -> Dict[str, float]:
    """rostopic hz's figures over publication instants: average rate, min/max/std of periods."""
    periods = [(b - a) / 1e9 for a, b in zip(t_data_ns, t_data_ns[1:])]
    if not periods:
        return {}
    mean = statistics.fmean(periods)
    return {"rate": 1.0 / mean if mean > 0 else float("inf"), "min": min(periods), "max": max(periods),
            "std": statistics.pstdev(periods), "window": len(periods) + 1}


def topic_hz(args: argparse.Namespace) -> int:
    ms = seconds_ms("--duration", args.duration, ECHO_SECONDS_MAX)
    path, t = _find_topic(args.system, args.topic.lstrip("/"))
    stamps: List[int] = []
    end = time.monotonic() + args.duration
    last_print = time.monotonic()
    for s in request(path, f"echo {t['name']} {ECHO_COUNT_MAX} {ms} headers",
                     timeout=args.duration + 5):
        if "error" in s:
            print(f"takt topic hz: {s['error']}", file=sys.stderr)
            return 1
        if "end" in s:
            break
        stamps.append(s["t_data_ns"])
        stamps = stamps[-args.window:]
        if time.monotonic() - last_print >= 1.0 and len(stamps) > 1:
            _print_rate(stamps)
            last_print = time.monotonic()
        if time.monotonic() > end:
            break
    if len(stamps) < 2:
        print("no new messages")
        return 1
    _print_rate(stamps)
    return 0


def _print_rate(stamps: List[int]) -> None:
    st = rate_stats(stamps)
    print(f"average rate: {st['rate']:.3f}\n\tmin: {st['min']:.3f}s max: {st['max']:.3f}s "
          f"std dev: {st['std']:.5f}s window: {st['window']}", flush=True)


def _fields(spec, data: str) -> dict:
    """The fields given as YAML/JSON (rostopic's form: "{data: 1}"); anything wrong with them said
    in one line (NoSystem)."""
    import yaml  # PyYAML: rostopic pub takes YAML, so does this
    try:
        value = yaml.safe_load(data) if data else {}
    except yaml.YAMLError as e:
        raise NoSystem(f"cannot read the fields of {spec.full_name} as YAML: {str(e).splitlines()[0]}")
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise NoSystem(f"give the fields of {spec.full_name} as YAML, e.g. \"{{data: 1}}\"")
    return value


def _encode_fields(reg, spec, data: str) -> str:
    """The fields (_fields) serialized as spec (ROS 1), in hex; anything wrong said in one line."""
    value = _fields(spec, data)
    try:
        return msgcodec.encode(reg, spec, value).hex()
    except (ValueError, TypeError, OverflowError, struct.error) as e:
        raise NoSystem(f"{spec.full_name}: {e}")


def _message_hex(type_name: str, serialized: bool, size: int, data: str) -> str:
    """The message to publish or send, as the endpoint takes it: YAML/JSON fields of a generated
    type serialized here, or hex of exactly the type's size for a byte-blob type."""
    if serialized and "/" in type_name:
        reg = msgcodec.registry()
        try:
            spec = reg.load_msg(type_name)
        except msgcodec.MsgError as e:
            raise NoSystem(str(e))
        return _encode_fields(reg, spec, data)
    raw = data.replace(" ", "")
    if raw.startswith("0x"):
        raw = raw[2:]
    try:
        b = bytes.fromhex(raw)
    except ValueError:
        raise NoSystem(f"{type_name} is a {size}-byte blob: give its bytes in hex")
    if len(b) < size:
        b = b + bytes(size - len(b))  # the rest zero, as the generated types default
    if len(b) != size:
        raise NoSystem(f"{type_name} takes {size} bytes, got {len(b)}")
    return b.hex()


def topic_pub(args: argparse.Namespace) -> int:
    path, t = _find_topic(args.system, args.topic.lstrip("/"))
    hx = _message_hex(t["type"], t.get("serialized", False), t["size"], args.data)
    line = f"pub {t['name']} {hx}"
    fits(line, hx, f"a pub request on /{t['name']}")
    n = args.n if args.n else (1 if args.rate <= 0 else 0)  # 0: until Ctrl-C
    sent = 0
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    next_at = time.monotonic()
    try:
        while n == 0 or sent < n:
            one(path, line)
            sent += 1
            if period > 0:
                next_at += period
                time.sleep(max(0.0, next_at - time.monotonic()))
    except KeyboardInterrupt:
        pass
    print(f"published {sent} message{'s' if sent != 1 else ''} on /{t['name']}")
    return 0


# ---- service ----

def service_list(args: argparse.Namespace) -> int:
    return _print_names(s["name"] for _, g in graphs(args.system) for s in g["services"])


def _service_spec(reg, type_name: str):
    """The message spec of one half of a service ('pkg/NameRequest' or 'pkg/NameResponse'): the
    halves live in the service's .srv file, not in .msg files."""
    for half in ("Request", "Response"):
        if type_name.endswith(half) and type_name not in reg.msgs:
            try:
                msgcodec.load_srv(reg, type_name[:-len(half)])  # registers both halves
            except msgcodec.MsgError:
                pass  # a message of that name, perhaps: load_msg says what is missing
    return reg.load_msg(type_name)


def service_call(args: argparse.Namespace) -> int:
    try:
        return _service_call(args)
    except msgcodec.MsgError as e:
        raise NoSystem(str(e))


def _service_call(args: argparse.Namespace) -> int:
    name = args.service.lstrip("/")
    ms = seconds_ms("--timeout", args.timeout, CALL_SECONDS_MAX)
    found = [(path, g, s) for path, g in graphs(args.system) for s in g["services"] if s["name"] == name]
    if not found:
        print(f"takt service call: no service named '/{name}'", file=sys.stderr)
        return 1
    path, s = _only(found, f"service '/{name}'")
    req_t, resp_t = s["request_type"], s["response_type"]
    typed = "/" in req_t and not req_t.startswith("takt/")
    # a service imported from ROS 2 takes and gives CDR (its type's hash a DDS type name)
    cdr_req, cdr_resp = "::" in s.get("request_hash", ""), "::" in s.get("response_hash", "")
    if typed:
        reg = msgcodec.registry()
        spec = _service_spec(reg, req_t)
        if cdr_req:
            try:
                hx = msgcodec.encode_cdr(reg, spec, _fields(spec, args.data)).hex()
            except (ValueError, TypeError, OverflowError, struct.error) as e:
                raise NoSystem(f"{spec.full_name}: {e}")
        else:
            hx = _encode_fields(reg, spec, args.data)
    else:
        hx = _message_hex(req_t, False, _blob_size(req_t), args.data)
    line = f"call {name} {hx or '-'} {ms}"
    fits(line, hx, f"a call of /{name}")
    ans = one(path, line, timeout=args.timeout + 5)
    if "serialized" in ans and typed:
        reg = msgcodec.registry()
        spec = _service_spec(reg, resp_t)
        decode = msgcodec.decode_cdr if cdr_resp else msgcodec.decode
        try:
            fields = decode(reg, spec, bytes.fromhex(ans["serialized"]))
        except ValueError as e:  # the system's type is not the definition read here
            raise NoSystem(f"the response does not decode as {resp_t} ({e}): the system's definition "
                           f"of the type differs from this host's ({spec.path})")
        for line in msgcodec.to_yaml(fields):
            print(line)
    else:
        b = bytes.fromhex(ans.get("bytes", ans.get("serialized", "")))
        print(f"data: [{', '.join(str(x) for x in b)}]")
    return 0


def _blob_size(type_name: str) -> int:
    digits = "".join(ch for ch in type_name.rsplit("/", 1)[-1] if ch.isdigit())
    return int(digits) if digits else 0


# ---- chain ----

def chain_list(args: argparse.Namespace) -> int:
    for _, g in graphs(args.system):
        for c in g["chains"]:
            dl = f"deadline {c['deadline_ns'] / 1e6:g} ms" if c["deadline_ns"] > 0 else "no deadline"
            members = [m if m is not None else "(destroyed)" for m in c["callbacks"]]
            print(f"{c['name']} ({dl}): {' -> '.join(members)}")
    return 0


def chain_stats(args: argparse.Namespace) -> int:
    paths = endpoints(args.system)  # none: said before any table is started
    print(f"{'chain':<16} {'count':>8} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'deadline':>9} {'misses':>7}")
    for p in paths:
        st = one(p, "stats")
        for c in st["chains"]:
            dl = f"{c['deadline_ns'] / 1e6:g}" if c["deadline_ns"] > 0 else "-"
            print(f"{c['name']:<16} {c['count']:>8} {c['p50_ns'] / 1e6:>9.3f} {c['p99_ns'] / 1e6:>9.3f} "
                  f"{c['max_ns'] / 1e6:>9.3f} {dl:>9} {c['deadline_misses']:>7}")
    return 0


VERBS = {
    "node": {"list": node_list, "info": node_info},
    "topic": {"list": topic_list, "info": topic_info, "echo": topic_echo, "hz": topic_hz, "pub": topic_pub},
    "service": {"list": service_list, "call": service_call},
    "chain": {"list": chain_list, "stats": chain_stats},
}


def add_parsers(sub) -> None:
    def common(p):
        p.add_argument("--system", help="only the running system of this name")

    p = sub.add_parser("node", help="nodes of running takt systems (list, info)")
    v = p.add_subparsers(dest="verb", required=True)
    common(v.add_parser("list"))
    q = v.add_parser("info")
    q.add_argument("node")
    common(q)

    p = sub.add_parser("topic", help="topics of running takt systems (list, info, echo, hz, pub)")
    v = p.add_subparsers(dest="verb", required=True)
    q = v.add_parser("list")
    q.add_argument("-v", "--verbose", action="store_true")
    common(q)
    q = v.add_parser("info")
    q.add_argument("topic")
    common(q)
    q = v.add_parser("echo")
    q.add_argument("topic")
    q.add_argument("-n", type=int, default=0, help="messages to show (default: until Ctrl-C or --timeout)")
    q.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait")
    q.add_argument("--header", action="store_true", help="show takt's header (seq, t_info, t_data)")
    common(q)
    q = v.add_parser("hz")
    q.add_argument("topic")
    q.add_argument("--duration", type=float, default=10.0, help="seconds to measure (default 10)")
    q.add_argument("-w", "--window", type=int, default=10000, help="messages the statistics cover")
    common(q)
    q = v.add_parser("pub")
    q.add_argument("topic")
    q.add_argument("data", nargs="?", default="", help="fields as YAML (generated types) or hex bytes")
    q.add_argument("-r", "--rate", type=float, default=0.0, help="publish at this rate (Hz) until Ctrl-C")
    q.add_argument("-n", type=int, default=0, help="messages to publish")
    common(q)

    p = sub.add_parser("service", help="services of running takt systems (list, call)")
    v = p.add_subparsers(dest="verb", required=True)
    common(v.add_parser("list"))
    q = v.add_parser("call")
    q.add_argument("service")
    q.add_argument("data", nargs="?", default="", help="request fields as YAML, or hex bytes")
    q.add_argument("--timeout", type=float, default=5.0)
    common(q)

    p = sub.add_parser("chain", help="chains of running takt systems (list, stats)")
    v = p.add_subparsers(dest="verb", required=True)
    common(v.add_parser("list"))
    common(v.add_parser("stats"))


def run(args: argparse.Namespace) -> int:
    try:
        return VERBS[args.command][args.verb](args)
    except NoSystem as e:
        print(f"takt {args.command} {args.verb}: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0

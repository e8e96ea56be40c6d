"""ROS 1 serialization in Python from parsed .msg specifications (takt.msggen.spec), for the
tools that show or make messages (`takt topic echo|pub`, `takt service call`): little-endian
primitives, `time`/`duration` as two 32-bit fields, strings and variable arrays with a uint32
length, fixed arrays without one, nested messages inline."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from takt.msggen.spec import PRIMITIVES, MsgError, MsgSpec, Registry, parse_srv_file

SEARCH_ROOTS = ["/usr/share"]


def registry(extra: Optional[List[str]] = None) -> Registry:
    """Every package with a msg/ or srv/ folder under /usr/share, $TAKT_MSG_PATH (':'-separated
    roots holding packages) and extra."""
    roots = list(extra or []) + [p for p in os.environ.get("TAKT_MSG_PATH", "").split(":") if p] + SEARCH_ROOTS
    search: Dict[str, List[Path]] = {}
    for root in roots:
        r = Path(root)
        if not r.is_dir():
            continue
        for pkg in sorted(r.iterdir()):
            if (pkg / "msg").is_dir() or (pkg / "srv").is_dir():
                search.setdefault(pkg.name, []).append(pkg / "msg")
    return Registry(search)


def load_srv(reg: Registry, full_name: str):
    pkg, name = full_name.split("/")
    for d in reg.search.get(pkg, []):
        f = Path(d).parent / "srv" / f"{name}.srv"
        if f.is_file():
            srv = parse_srv_file(f, pkg)
            reg.add_srv(srv)
            return srv
    raise MsgError(full_name, 0, f"unknown service type '{full_name}'")


class Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ValueError(f"truncated message: wanted {n} bytes at offset {self.at} of {len(self.data)}")
        b = self.data[self.at:self.at + n]
        self.at += n
        return b

    def unpack(self, fmt: str):
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))


def _read_one(reg: Registry, base: str, r: Reader):
    if base in PRIMITIVES:
        return r.unpack(PRIMITIVES[base][2])[0]
    if base in ("time", "duration"):
        secs, nsecs = r.unpack("iI" if base == "duration" else "II")
        return {"secs": secs, "nsecs": nsecs}
    if base == "string":
        (n,) = r.unpack("I")
        return r.take(n).decode("utf-8", errors="replace")
    return _read_msg(reg, reg.load_msg(base), r)


# A ROS 1 sequence of a type of no bytes (std_msgs/Empty[]) is only a count: a hostile count would
# have the decoder build billions of elements from four bytes. Above this many it is refused.
MAX_EMPTY_ELEMENTS = 65536


def _ros1_takes_bytes(reg: Registry, base: str) -> bool:
    """Whether an element of base takes any bytes in ROS 1's encoding (not a message of no fields,
    or of only empty messages)."""
    if base in PRIMITIVES or base in ("time", "duration", "string"):
        return True
    return any(f.array == "var" or (int(f.length or 0) if f.array == "fixed" else 1) > 0
               and _ros1_takes_bytes(reg, f.base) for f in reg.load_msg(base).fields)


def _read_fields(reg: Registry, spec: MsgSpec, r: Reader, one, cdr: bool = False) -> Dict[str, object]:
    """The fields of spec read from r, each element by one(reg, base, r): the layout of arrays
    (a uint32 count unless fixed) is the same in ROS 1 and in CDR; CDR carries spec.cdr_fields."""
    out: Dict[str, object] = {}
    for f in spec.cdr_fields if cdr else spec.fields:
        if f.array is None:
            out[f.name] = one(reg, f.base, r)
            continue
        n = f.length if f.array == "fixed" else r.unpack("I")[0]
        if not cdr and f.array != "fixed" and n > MAX_EMPTY_ELEMENTS and not _ros1_takes_bytes(reg, f.base):
            # an element of no bytes (a message with no fields): the count alone would make the list
            raise ValueError(f"{spec.full_name}.{f.name}: {n} elements of {f.base}, which takes no bytes "
                             f"(more than {MAX_EMPTY_ELEMENTS})")
        if f.base in ("uint8", "char"):  # bytes: no alignment within them in either encoding
            out[f.name] = list(r.take(n))
        else:
            out[f.name] = [one(reg, f.base, r) for _ in range(n)]
    return out


def _read_msg(reg: Registry, spec: MsgSpec, r: Reader) -> Dict[str, object]:
    return _read_fields(reg, spec, r, _read_one)


def decode(reg: Registry, spec: MsgSpec, data: bytes) -> Dict[str, object]:
    """The fields of one serialized message; ValueError if the bytes do not fit the type."""
    r = Reader(data)
    msg = _read_msg(reg, spec, r)
    if r.at != len(data):
        raise ValueError(f"{len(data) - r.at} bytes left over after a {spec.full_name}")
    return msg


class CdrReader(Reader):
    """XCDR1 as ROS 2 writes it: a 4-byte encapsulation header, then each primitive aligned to its
    size (at most 8) from the first byte after the header; strings with their NUL counted."""

    def __init__(self, data: bytes):
        super().__init__(data)
        if len(data) < 4:
            raise ValueError("no CDR encapsulation header")
        if data[1] not in (0x01, 0x03):
            raise ValueError(f"CDR encapsulation {data[0]:02x}{data[1]:02x} is not little-endian")
        self.at = 4

    def align(self, n: int) -> None:
        pad = (-(self.at - 4)) % n
        self.take(pad)

    def unpack(self, fmt: str):
        size = struct.calcsize("<" + fmt[-1])
        self.align(min(size, 8))
        return super().unpack(fmt)


def _cdr_one(reg: Registry, base: str, r: CdrReader):
    if base in PRIMITIVES:
        return r.unpack(PRIMITIVES[base][2])[0]
    if base in ("time", "duration"):
        sec, nsec = r.unpack("i")[0], r.unpack("I")[0]
        return {"sec": sec, "nanosec": nsec}
    if base == "string":
        (n,) = r.unpack("I")
        raw = r.take(n)
        return raw[:-1].decode("utf-8", errors="replace") if raw.endswith(b"\0") else raw.decode("utf-8", errors="replace")
    return _cdr_msg(reg, reg.load_msg(base), r)


def _cdr_msg(reg: Registry, spec: MsgSpec, r: CdrReader) -> Dict[str, object]:
    if not spec.fields:  # an empty message carries one uint8, as ROS 2's generator adds a member
        r.take(1)
        return {}
    return _read_fields(reg, spec, r, _cdr_one, cdr=True)


def decode_cdr(reg: Registry, spec: MsgSpec, data: bytes) -> Dict[str, object]:
    """The fields of one CDR-serialized message (ROS 2); ValueError if the bytes do not fit."""
    r = CdrReader(data)
    msg = _cdr_msg(reg, spec, r)
    if len(data) - r.at >= 4:  # up to 3 bytes of final padding are allowed
        raise ValueError(f"{len(data) - r.at} bytes left over after a {spec.full_name}")
    return msg


def _write_one(reg: Registry, base: str, v, out: bytearray) -> None:
    if base in PRIMITIVES:
        out += struct.pack("<" + PRIMITIVES[base][2], v)
    elif base in ("time", "duration"):
        v = v or {}
        out += struct.pack("<iI" if base == "duration" else "<II", int(v.get("secs", 0)), int(v.get("nsecs", 0)))
    elif base == "string":
        b = str(v).encode()
        out += struct.pack("<I", len(b)) + b
    else:
        _write_msg(reg, reg.load_msg(base), v or {}, out)


def _default(base: str):
    if base in PRIMITIVES:
        return False if base == "bool" else (0.0 if base.startswith("float") else 0)
    if base == "string":
        return ""
    return {}


_TIME_KEYS = {"secs", "nsecs", "sec", "nanosec"}


def _time_value(spec: MsgSpec, f, v) -> Dict[str, int]:
    """A time or duration field's value as rostopic takes it: {secs: S, nsecs: N} (ROS 2's {sec,
    nanosec} too), a number of seconds, or `now` for a time (this host's wall clock, as rostopic's
    rospy.get_rostime() outside simulation); as {secs, nsecs}. ValueError naming the field else."""
    where = f"{spec.full_name}.{f.name}"
    if v is None:
        return {}
    if isinstance(v, dict):
        unknown = set(map(str, v)) - _TIME_KEYS
        if unknown:
            raise ValueError(f"{where}: a {f.base} has no field {', '.join(sorted(unknown))} (secs, nsecs)")
        return {"secs": v.get("secs", v.get("sec", 0)), "nsecs": v.get("nsecs", v.get("nanosec", 0))}
    if v == "now" and f.base == "time":
        ns = time.time_ns()
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        # whole nanoseconds, the seconds rounded down: -1.5 s is secs -2, nsecs 500000000 (as
        # rospy normalises a Duration), so that nsecs is always within [0, 1e9)
        ns = v * 1_000_000_000 if isinstance(v, int) else round(v * 1e9)
    else:
        now = "now, " if f.base == "time" else ""
        raise ValueError(f"{where}: a {f.base} is {now}a number of seconds or {{secs: S, nsecs: N}}, "
                         f"not {v!r}")
    return {"secs": ns // 1_000_000_000, "nsecs": ns % 1_000_000_000}


def _write_fields(spec: MsgSpec, fields, value: Dict[str, object], one, count) -> None:
    """value's fields in order, each element by one(base, v), a sequence's length by count(n): the
    layout of arrays is the same in ROS 1 and in CDR. A time or duration is given as rostopic takes
    it (_time_value): one has it as {secs, nsecs}."""
    unknown = set(value) - {f.name for f in fields}
    if unknown:
        raise ValueError(f"{spec.full_name} has no field {', '.join(sorted(unknown))}")
    for f in fields:
        def put(v, f=f):
            one(f.base, _time_value(spec, f, v) if f.base in ("time", "duration") else v)

        v = value.get(f.name)
        if f.array is None:
            put(_default(f.base) if v is None else v)
            continue
        items = list(v or [])
        if f.array == "fixed":
            if v is None:
                items = [_default(f.base)] * int(f.length or 0)
            if len(items) != f.length:
                raise ValueError(f"{spec.full_name}.{f.name} takes {f.length} items, got {len(items)}")
        else:
            count(len(items))
        for it in items:
            put(it)


def _write_msg(reg: Registry, spec: MsgSpec, value: Dict[str, object], out: bytearray) -> None:
    _write_fields(spec, spec.fields, value, lambda base, v: _write_one(reg, base, v, out),
                  lambda n: out.extend(struct.pack("<I", n)))


def encode(reg: Registry, spec: MsgSpec, value: Dict[str, object]) -> bytes:
    """Serialize a message given as a dict of its fields (missing fields: zero / empty)."""
    out = bytearray()
    _write_msg(reg, spec, value, out)
    return bytes(out)


class CdrWriter:
    """XCDR1 little-endian as ROS 2 writes it (CdrReader's layout): the encapsulation header, then
    each primitive aligned to its size (at most 8) from the first byte after it."""

    def __init__(self) -> None:
        self.out = bytearray(b"\x00\x01\x00\x00")

    def pack(self, fmt: str, v) -> None:
        size = struct.calcsize("<" + fmt)
        self.out += bytes((-(len(self.out) - 4)) % min(size, 8))
        self.out += struct.pack("<" + fmt, v)


def _cdr_write_one(reg: Registry, base: str, v, w: CdrWriter) -> None:
    if base in PRIMITIVES:
        w.pack(PRIMITIVES[base][2], v)
    elif base in ("time", "duration"):  # builtin_interfaces' {sec, nanosec}
        v = v or {}
        w.pack("i", int(v.get("sec", v.get("secs", 0))))
        w.pack("I", int(v.get("nanosec", v.get("nsecs", 0))))
    elif base == "string":
        b = str(v).encode() + b"\0"
        w.pack("I", len(b))
        w.out += b
    else:
        _cdr_write_msg(reg, reg.load_msg(base), v or {}, w)


def _cdr_write_msg(reg: Registry, spec: MsgSpec, value: Dict[str, object], w: CdrWriter) -> None:
    if not spec.cdr_fields:  # an empty message carries one uint8, as ROS 2's generator adds a member
        if value:
            raise ValueError(f"{spec.full_name} has no field {', '.join(sorted(value))}")
        w.out += b"\0"
        return
    _write_fields(spec, spec.cdr_fields, value, lambda base, v: _cdr_write_one(reg, base, v, w),
                  lambda n: w.pack("I", n))


def encode_cdr(reg: Registry, spec: MsgSpec, value: Dict[str, object]) -> bytes:
    """Serialize a message given as a dict of its fields as CDR (ROS 2; missing fields: zero)."""
    w = CdrWriter()
    _cdr_write_msg(reg, spec, value, w)
    return bytes(w.out)


def to_yaml(value, indent: int = 0) -> List[str]:
    """rostopic echo's layout: `field: value`, nested messages indented, lists inline for
    numbers and as `-` items for messages."""
    pad = "  " * indent
    lines: List[str] = []
    for k, v in value.items():
        if isinstance(v, dict):
            lines.append(f"{pad}{k}:")
            lines += to_yaml(v, indent + 1)
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f"{pad}{k}:")
            for item in v:
                sub = to_yaml(item, indent + 2)
                sub[0] = f"{pad}  -{sub[0][len(pad) + 3:]}" if sub else f"{pad}  - {{}}"
                lines += sub
        elif isinstance(v, str):
            lines.append(f"{pad}{k}: {v!r}" if v == "" or v.strip() != v else f"{pad}{k}: \"{v}\"")
        elif isinstance(v, bool):
            lines.append(f"{pad}{k}: {str(v)}")
        elif isinstance(v, float):
            lines.append(f"{pad}{k}: {v!r}")
        else:
            lines.append(f"{pad}{k}: {v}")
    return lines


def split_type(name: str) -> Tuple[str, str]:
    pkg, _, short = name.partition("/")
    return pkg, short

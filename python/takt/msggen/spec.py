"""Parsing ROS .msg and .srv files into specifications, with `file:line: what is wrong` errors.

The grammar follows ROS 1's (genmsg): one field `TYPE NAME` or constant `TYPE NAME=VALUE` per
line, `#` comments, builtin types, `time`/`duration`, `Header` (std_msgs/Header), nested types
`Type` (same package) or `pkg/Type`, fixed `T[N]` and variable `T[]` arrays. ROS 2's bounded
forms `string<=N` and `T[<=N]` are accepted too (they give the capacity of the field)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

PRIMITIVES = {
    # name: (C type, size in bytes, struct format)
    "bool": ("bool", 1, "?"),
    "int8": ("int8_t", 1, "b"),
    "uint8": ("uint8_t", 1, "B"),
    "byte": ("int8_t", 1, "b"),   # ROS 1: deprecated alias of int8 (ROS 2: octet, read as uint8)
    "char": ("uint8_t", 1, "B"),  # ROS 1: deprecated alias of uint8
    "int16": ("int16_t", 2, "h"),
    "uint16": ("uint16_t", 2, "H"),
    "int32": ("int32_t", 4, "i"),
    "uint32": ("uint32_t", 4, "I"),
    "int64": ("int64_t", 8, "q"),
    "uint64": ("uint64_t", 8, "Q"),
    "float32": ("float", 4, "f"),
    "float64": ("double", 8, "d"),
}
TIME_TYPES = ("time", "duration")
BUILTINS = set(PRIMITIVES) | set(TIME_TYPES) | {"string"}
CONSTANT_TYPES = set(PRIMITIVES) | {"string"}
HEADER = "std_msgs/Header"

_NAME = r"[a-zA-Z][a-zA-Z0-9_]*"
_TYPE_RE = re.compile(rf"^(?:({_NAME})/)?({_NAME})(?:<=(\d+))?(?:\[(<=)?([^\]]*)\])?$")
_FIELD_NAME_RE = re.compile(rf"^{_NAME}$")
_INT_RANGES = {
    "int8": (-2**7, 2**7 - 1), "uint8": (0, 2**8 - 1), "byte": (-2**7, 2**7 - 1), "char": (0, 2**8 - 1),
    "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1), "int32": (-2**31, 2**31 - 1),
    "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1),
}


class MsgError(Exception):
    """A problem in a .msg/.srv file: str() is `file:line: what is wrong`."""

    def __init__(self, path: str, line: int, what: str):
        super().__init__(f"{path}:{line}: {what}")
        self.path, self.line, self.what = path, line, what


@dataclass
class Field:
    name: str
    base: str              # builtin name, or "pkg/Type" for a nested message
    array: Optional[str]   # None, "fixed", "var"
    length: Optional[int]  # fixed length, or the bound of a bounded array
    string_bound: Optional[int]
    type_text: str         # as genmsg normalises it (package added, Header resolved) for md5
    line: int

    @property
    def is_builtin(self) -> bool:
        return self.base in BUILTINS


@dataclass
class Constant:
    type: str
    name: str
    value: object
    val_text: str
    line: int


@dataclass
class MsgSpec:
    package: str
    short_name: str
    fields: List[Field]
    constants: List[Constant]
    text: str
    path: str
    kind: str = "msg"  # "msg", or "srv" for a request/response half

    @property
    def full_name(self) -> str:
        return f"{self.package}/{self.short_name}"

    def deps(self) -> List[str]:
        return [f.base for f in self.fields if not f.is_builtin]

    @property
    def cdr_fields(self) -> List[Field]:
        """The fields the type carries in CDR. A ROS 1 type travels in ROS 2's layout, as
        ros1_bridge maps it: ROS 1's std_msgs/Header loses `seq` (ROS 2's Header has none); `time`
        and `duration` already have the bytes of builtin_interfaces/Time and Duration."""
        if self.full_name == HEADER:
            return [f for f in self.fields if f.name != "seq"]
        return self.fields


@dataclass
class SrvSpec:
    package: str
    short_name: str
    request: MsgSpec
    response: MsgSpec
    text: str
    path: str

    @property
    def full_name(self) -> str:
        return f"{self.package}/{self.short_name}"


def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0].strip()


def _ros2_string(v: str, path: str, lineno: int) -> str:
    """A ROS 2 string constant's value as rosidl_adapter reads it: in '...' or "..." the quotes
    come off and an escaped quote of the same kind inside is the quote; unquoted text stays."""
    for q in ('"', "'"):
        if len(v) >= 2 and v[0] == q and v[-1] == q:
            inner = v[1:-1]
            if re.search(r"(?<!\\)" + q, inner):
                raise MsgError(path, lineno, f"bad constant: the quote inside {v} is not escaped (\\{q})")
            return inner.replace("\\" + q, q)
    return v


def _convert_constant(ctype: str, val: str, path: str, lineno: int, ros2: bool = False) -> object:
    if ctype == "string":
        return _ros2_string(val.strip(), path, lineno) if ros2 else val.strip()
    v = val.strip()
    if ctype in ("float32", "float64"):
        try:
            return float(v)
        except ValueError:
            raise MsgError(path, lineno, f"bad constant: '{v}' is not a {ctype}") from None
    if ctype == "bool":
        if ros2 or v in ("true", "false"):  # rosidl: true, false, 1, 0 in any case
            if v.lower() in ("true", "1", "false", "0"):
                return v.lower() in ("true", "1")
            raise MsgError(path, lineno, f"bad constant: '{v}' is not a bool (true, false, 1, 0)")
        try:  # genmsg: a Python literal's truth (True, 0, 2)
            return bool(ast.literal_eval(v))
        except Exception:  # literal_eval raises what the text makes it raise
            raise MsgError(path, lineno, f"bad constant: '{v}' is not a bool (true, false, 1, 0)") from None
    try:  # genmsg: int(), decimal only (07 is 7; 0x10 is refused); rosidl: also 0x10, 0o7, 0b1
        n = int(v)
    except ValueError:
        try:
            if not ros2:
                raise
            n = int(v, 0)
        except ValueError:
            raise MsgError(path, lineno, f"bad constant: '{v}' is not a{'n' if ros2 else ' decimal'} "
                                         "integer") from None
    lo, hi = _INT_RANGES[ctype]
    if not lo <= n <= hi:
        raise MsgError(path, lineno, f"bad constant: {n} is out of range for {ctype} [{lo}, {hi}]")
    return n


def _parse_type(text: str, package: str, path: str, lineno: int, ros2: bool = False):
    m = _TYPE_RE.match(text)
    if m is None:
        if "[" in text:
            raise MsgError(path, lineno, f"bad array syntax in '{text}' (T[N], T[] or T[<=N])")
        raise MsgError(path, lineno, f"'{text}' is not a valid type name")
    pkg, name, sbound, bounded, arr = m.groups()
    array, length = None, None
    if "[" in text:
        if arr == "":
            if bounded:
                raise MsgError(path, lineno, f"bad array syntax in '{text}': '<=' needs a bound")
            array = "var"
        elif arr.isdigit():
            array, length = ("var" if bounded else "fixed"), int(arr)
            if length == 0 and not bounded:
                raise MsgError(path, lineno, f"bad array syntax in '{text}': a fixed array needs a size > 0")
        else:
            raise MsgError(path, lineno, f"bad array syntax in '{text}': size '{arr}' is not a number")
    string_bound = int(sbound) if sbound else None
    if string_bound is not None and (pkg or name != "string"):
        raise MsgError(path, lineno, f"'<=' bounds only strings, not '{text}'")
    if pkg is None and name == "byte" and ros2:
        base = "uint8"  # rosidl: byte is an octet, 0..255 (ROS 1's byte is an int8)
    elif pkg is None and name in BUILTINS:
        base = name
    elif pkg is None and name == "Header" and not ros2:
        base = HEADER
    elif ros2:  # ROS 2 names types pkg/msg/Type; files write pkg/Type (the package's own: Type)
        base = f"{pkg}/msg/{name}" if pkg else f"{package}/{name}"
    else:
        base = f"{pkg or package}/{name}"
    # genmsg's normalised type text: package added to nested types, Header resolved
    suffix = text[len((pkg + "/") if pkg else "") + len(name):]
    type_text = (base if base not in BUILTINS else name) + suffix
    return base, array, length, string_bound, type_text


def parse_msg_text(text: str, package: str, short_name: str, path: str, first_line: int = 1,
                   kind: str = "msg", ros2: bool = False) -> MsgSpec:
    """ros2: the ROS 2 grammar (package given as pkg/msg; a field may be followed by a default
    value, which takt does not keep: fields start zeroed)."""
    fields: List[Field] = []
    constants: List[Constant] = []
    seen: Dict[str, int] = {}
    for i, orig in enumerate(text.split("\n")):
        lineno = first_line + i
        clean = _strip_comment(orig)
        if not clean:
            continue
        if "=" in clean.replace("<=", ""):  # a constant (a bounded type's '<=' is not one)
            parts = clean.split(None, 1)
            ctype = parts[0]
            if ctype not in CONSTANT_TYPES:
                raise MsgError(path, lineno, f"bad constant: type '{ctype}' cannot be a constant "
                                             "(only builtin numbers, bool and string)")
            if ctype == "byte" and ros2:
                ctype = "uint8"  # rosidl: an octet
            if ctype == "string" and ros2:  # rosidl: `#` ends the line here too; quotes come off
                name, _, val = clean[len(ctype):].partition("=")
                name = name.strip()
            elif ctype == "string":  # ROS 1: everything right of '=' is the value, comments included
                idx = orig.find("=")
                name = orig[orig.find(" ") + 1:idx].strip()
                val = orig[idx + 1:]
            else:
                rest = " ".join(parts[1:]) if len(parts) > 1 else ""
                nv = [x.strip() for x in rest.split("=")]
                if len(nv) != 2 or not nv[0]:
                    raise MsgError(path, lineno, f"bad constant: expected 'TYPE NAME=VALUE', got '{clean}'")
                name, val = nv
            if not _FIELD_NAME_RE.match(name):
                raise MsgError(path, lineno, f"bad constant: '{name}' is not a valid name")
            value = _convert_constant(ctype, val, path, lineno, ros2)
            constants.append(Constant(ctype, name, value, val.strip(), lineno))
            continue
        parts = clean.split()
        if ros2 and len(parts) > 2:
            parts = parts[:2]  # TYPE NAME DEFAULT
        if len(parts) != 2:
            raise MsgError(path, lineno, f"expected 'TYPE NAME', got '{clean}'")
        ftype, fname = parts
        if not _FIELD_NAME_RE.match(fname):
            raise MsgError(path, lineno, f"'{fname}' is not a valid field name")
        if fname in seen:
            raise MsgError(path, lineno, f"field '{fname}' already defined on line {seen[fname]}")
        seen[fname] = lineno
        base, array, length, sbound, type_text = _parse_type(ftype, package, path, lineno, ros2)
        fields.append(Field(fname, base, array, length, sbound, type_text, lineno))
    return MsgSpec(package, short_name, fields, constants, text, path, kind)


def parse_msg_file(path: Path, package: str, ros2: bool = False) -> MsgSpec:
    text = path.read_text()
    return parse_msg_text(text, package, path.stem, str(path), ros2=ros2)


def parse_srv_file(path: Path, package: str) -> SrvSpec:
    text = path.read_text()
    lines = text.split("\n")
    split = next((i for i, l in enumerate(lines) if l.startswith("---")), None)
    if split is None:
        raise MsgError(str(path), len(lines), "a service needs a '---' line between request and response")
    req_text = "".join(l + "\n" for l in lines[:split])
    resp_text = "".join(l + "\n" for l in lines[split + 1:])
    req = parse_msg_text(req_text, package, path.stem + "Request", str(path), 1, "srv")
    resp = parse_msg_text(resp_text, package, path.stem + "Response", str(path), split + 2, "srv")
    return SrvSpec(package, path.stem, req, resp, text, str(path))


class Registry:
    """Every known message, by full name; resolves nested types across packages."""

    def __init__(self, search: Dict[str, List[Path]], ros2: bool = False):
        self.search = search  # package (ROS 2: pkg/msg) -> directories holding its .msg files
        self.ros2 = ros2
        self.msgs: Dict[str, MsgSpec] = {}
        self.srvs: Dict[str, SrvSpec] = {}

    def load_msg(self, full_name: str, path: Optional[str] = None, line: int = 0) -> MsgSpec:
        if full_name in self.msgs:
            return self.msgs[full_name]
        pkg, _, name = full_name.rpartition("/")
        for d in self.search.get(pkg, []):
            f = Path(d) / f"{name}.msg"
            if f.is_file():
                spec = parse_msg_file(f, pkg, self.ros2)
                self.msgs[full_name] = spec
                self.resolve(spec)
                return spec
        dirs = self.search.get(pkg, [])
        why = (f"not found in {', '.join(str(d) for d in dirs)}" if dirs else
               f"no search path has package '{pkg}': add its root with --search-root "
               f"(Debian's ROS messages: --search-root /usr/share)")
        if path is not None:
            raise MsgError(path, line, f"unknown type '{full_name}' ({why})")
        raise MsgError(full_name, 0, f"unknown type '{full_name}' ({why})")

    def resolve(self, spec: MsgSpec, stack: Tuple[str, ...] = ()) -> None:
        for f in spec.fields:
            if f.is_builtin:
                continue
            if f.base in stack + (spec.full_name,):
                raise MsgError(spec.path, f.line, f"type '{f.base}' contains itself")
            sub = self.load_msg(f.base, spec.path, f.line)
            self.resolve(sub, stack + (spec.full_name,))

    def add_srv(self, srv: SrvSpec) -> None:
        self.srvs[srv.full_name] = srv
        for half in (srv.request, srv.response):
            self.msgs[half.full_name] = half
            self.resolve(half)

    def add_msg(self, spec: MsgSpec) -> None:
        self.msgs[spec.full_name] = spec
        self.resolve(spec)

    def all_depends(self, full_name: str) -> List[str]:
        """genmsg's order: each dependency followed by its own, depth first."""
        out: List[str] = []
        for d in self.msgs[full_name].deps():
            out.append(d)
            out.extend(self.all_depends(d))
        return out

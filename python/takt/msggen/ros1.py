"""ROS 1 identity of a message: md5sum, full definition text, as genmsg computes them."""

from __future__ import annotations

import hashlib
from typing import Dict

from .spec import MsgSpec, Registry, SrvSpec


def md5_text(reg: Registry, spec: MsgSpec, cache: Dict[str, str]) -> str:
    lines = [f"{c.type} {c.name}={c.val_text}" for c in spec.constants]
    for f in spec.fields:
        if f.is_builtin:
            lines.append(f"{f.type_text} {f.name}")
        else:
            lines.append(f"{md5(reg, reg.msgs[f.base], cache)} {f.name}")
    return "\n".join(lines).strip()


def md5(reg: Registry, spec: MsgSpec, cache: Dict[str, str]) -> str:
    if spec.full_name not in cache:
        cache[spec.full_name] = hashlib.md5(md5_text(reg, spec, cache).encode()).hexdigest()
    return cache[spec.full_name]


def srv_md5(reg: Registry, srv: SrvSpec, cache: Dict[str, str]) -> str:
    h = hashlib.md5()
    h.update(md5_text(reg, srv.request, cache).encode())
    h.update(md5_text(reg, srv.response, cache).encode())
    return h.hexdigest()


def full_text(reg: Registry, spec: MsgSpec) -> str:
    """The message_definition a TCPROS connection header carries."""
    sep = "=" * 80 + "\n"
    out = [spec.text, "\n"]
    seen = []
    for d in reg.all_depends(spec.full_name):
        if d in seen:
            continue
        seen.append(d)
        out += [sep, f"MSG: {d}\n", reg.msgs[d].text, "\n"]
    return "".join(out)[:-1]


_ROS2_BUILTIN = {"time": "builtin_interfaces/Time", "duration": "builtin_interfaces/Duration"}
_ROS2_BUILTIN_TEXT = {"builtin_interfaces/Time": "int32 sec\nuint32 nanosec",
                      "builtin_interfaces/Duration": "int32 sec\nuint32 nanosec"}


def _ros2_lines(spec: MsgSpec) -> str:
    lines = [f"{c.type} {c.name}={c.val_text}" for c in spec.constants]
    for f in spec.cdr_fields:
        base = _ROS2_BUILTIN.get(f.base, f.base)
        # ROS 2 field names are lower case (rosidl refuses others): a ROS 1 field is the ROS 2
        # field of its name in lower case, as ros1_bridge pairs them (sensor_msgs/CameraInfo's
        # D, K, R, P are d, k, r, p in ROS 2)
        lines.append(f"{base}{f.type_text[len(f.base):]} {f.name.lower()}")
    return "\n".join(lines)


def ros2_full_text(reg: Registry, spec: MsgSpec) -> str:
    """The ROS 2 (`ros2msg`) definition of a ROS 1 type's CDR encoding, its dependencies after it
    as ROS 2 tools write them: the fields spec.cdr_fields (Header without seq), `time` and
    `duration` as builtin_interfaces/Time and Duration (whose definitions are appended)."""
    sep = "=" * 80 + "\n"
    out = [_ros2_lines(spec), "\n"]
    seen: list = []
    builtins: list = []
    for name in [spec.full_name] + reg.all_depends(spec.full_name):
        for f in reg.msgs[name].cdr_fields:
            b = _ROS2_BUILTIN.get(f.base)
            if b and b not in builtins:
                builtins.append(b)
        if name == spec.full_name or name in seen:
            continue
        seen.append(name)
        out += [sep, f"MSG: {name}\n", _ros2_lines(reg.msgs[name]), "\n"]
    for b in builtins:
        out += [sep, f"MSG: {b}\n", _ROS2_BUILTIN_TEXT[b], "\n"]
    return "".join(out)[:-1]


def dds_type_name(spec: MsgSpec) -> str:
    """The DDS type name ROS 2 gives the type: pkg::msg::dds_::Type_; a service Srv's halves
    (SrvRequest, SrvResponse) pkg::srv::dds_::Srv_Request_ and Srv_Response_, as rosidl names them
    and the DDS backend types a service's topics."""
    pkg = spec.package.split("/")[0]  # a ROS 2 type's package is pkg/msg
    name = spec.short_name
    if spec.kind == "srv":
        for half in ("Request", "Response"):
            if name.endswith(half):
                name = f"{name[:-len(half)]}_{half}"
    return f"{pkg}::{spec.kind}::dds_::{name}_"

"""CDR bytes of generated messages equal pycdr2's for the equivalent IDL types, both ways:
pycdr2 -> takt -> bytes, and takt -> pycdr2 -> bytes, for randomized instances of every
std_msgs, geometry_msgs and sensor_msgs type (nested types, fixed and variable arrays, strings),
in ROS 2's layout (a ROS 1 Header without seq)."""

import random
import struct
import subprocess
from dataclasses import make_dataclass
from pathlib import Path
from typing import Dict

import pytest

pycdr2 = pytest.importorskip("pycdr2", reason="pycdr2 is installed by make (tools/deps.sh)")
from pycdr2 import IdlStruct  # noqa: E402
from pycdr2 import types as T  # noqa: E402

from takt.msggen.spec import PRIMITIVES, Registry  # noqa: E402

from conftest import BUILD, REPO  # noqa: E402

PKGS = ["std_msgs", "geometry_msgs", "sensor_msgs"]
TOOL = BUILD / "msgs" / "takt-msgtool"
COUNT = 25

SCALARS = {"bool": bool, "int8": T.int8, "byte": T.int8, "uint8": T.uint8, "char": T.uint8,
           "int16": T.int16, "uint16": T.uint16, "int32": T.int32, "uint32": T.uint32,
           "int64": T.int64, "uint64": T.uint64, "float32": T.float32, "float64": T.float64, "string": str}


class Types:
    def __init__(self, reg: Registry):
        self.reg = reg
        self.cache: Dict[str, type] = {}
        self.time = make_dataclass("Time", [("sec", T.uint32), ("nanosec", T.uint32)], bases=(IdlStruct,),
                                   namespace={}, frozen=False)
        self.duration = make_dataclass("Duration", [("sec", T.int32), ("nanosec", T.int32)], bases=(IdlStruct,))

    def scalar(self, base):
        if base in SCALARS:
            return SCALARS[base]
        if base == "time":
            return self.time
        if base == "duration":
            return self.duration
        return self.get(base)

    def get(self, full):
        if full in self.cache:
            return self.cache[full]
        spec = self.reg.msgs[full]
        fields = []
        for f in spec.cdr_fields:  # ROS 2 layout: ROS 1 Header without seq
            t = self.scalar(f.base)
            if f.array == "fixed":
                t = T.array[t, f.length]
            elif f.array == "var":
                t = T.sequence[t]
            fields.append((f.name, t))
        if not fields:
            fields = [("structure_needs_at_least_one_member", T.uint8)]
        cls = make_dataclass(full.replace("/", "_"), fields, bases=(IdlStruct,))
        cls.__idl_typename__ = full.replace("/", "::")
        self.cache[full] = cls
        return cls


def rand(types, base, rng):
    if base == "bool":
        return rng.random() < 0.5
    if base in ("int8", "byte", "uint8", "char", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        bits = PRIMITIVES[base][1] * 8
        signed = base in ("int8", "byte", "int16", "int32", "int64")
        return rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else rng.randint(0, 2 ** bits - 1)
    if base == "float32":
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e5, 1e5)))[0]
    if base == "float64":
        return rng.uniform(-1e9, 1e9)
    if base == "string":
        return "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(0, 12)))
    if base == "time":
        return types.time(rng.randint(0, 2**32 - 1), rng.randint(0, 999999999))
    if base == "duration":
        return types.duration(rng.randint(-2**31, 2**31 - 1), rng.randint(0, 999999999))
    spec = types.reg.msgs[base]
    values = {}
    for f in spec.cdr_fields:
        if f.array is None:
            values[f.name] = rand(types, f.base, rng)
            continue
        n = f.length if f.array == "fixed" else rng.randint(0, 32 if f.base in ("uint8", "char") else 5)
        items = [rand(types, f.base, rng) for _ in range(n)]
        values[f.name] = bytes(items) if f.base in ("uint8", "char") else items
    if not spec.fields:
        values["structure_needs_at_least_one_member"] = 0
    return types.get(base)(**values)


def frames(data):
    out, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def all_types():
    reg = Registry({p: [Path(f"/usr/share/{p}/msg")] for p in PKGS})
    names = []
    for p in PKGS:
        for f in sorted(Path(f"/usr/share/{p}/msg").glob("*.msg")):
            names.append(f"{p}/{f.stem}")
            reg.load_msg(names[-1])
    return reg, names


def test_cdr_bytes_match_pycdr2_both_ways():
    assert TOOL.exists(), f"{TOOL} is not built"
    reg, names = all_types()
    types = Types(reg)
    rng = random.Random(4242)
    checked = 0
    failures = []
    for full in names:
        cls = types.get(full)
        sent = [rand(types, full, rng).serialize() for _ in range(COUNT)]
        data = b"".join(struct.pack("<I", len(x)) + x for x in sent)
        out = subprocess.run([str(TOOL), "roundtrip", "cdr", full], input=data, capture_output=True,
                             check=True).stdout
        pos = 0
        for i, x in enumerate(sent):
            st, n = struct.unpack_from("<iI", out, pos)
            back = out[pos + 8:pos + 8 + n]
            pos += 8 + n
            if st != 0 or back != x:
                failures.append(f"{full} pycdr2->takt #{i}: status {st}, {x.hex()} vs {back.hex()}")
            checked += 1
        gen = subprocess.run([str(TOOL), "random", "cdr", full, str(COUNT), str(rng.randint(1, 2**62))],
                             capture_output=True, check=True).stdout
        for i, x in enumerate(frames(gen)):
            again = cls.deserialize(x).serialize()
            if again != x:
                failures.append(f"{full} takt->pycdr2 #{i}: {x.hex()} vs {again.hex()}")
            checked += 1
    assert not failures, "\n".join(failures[:10])
    assert len(names) >= 85
    assert checked == 2 * COUNT * len(names)

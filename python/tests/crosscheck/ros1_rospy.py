"""Cross-check takt's ROS 1 encoding with rospy (genpy), run under Debian's /usr/bin/python3.

usage: ros1_rospy.py TAKT_MSGTOOL COUNT SEED PKG...
For every message type of the packages: COUNT random rospy instances are serialized by rospy,
deserialized and re-serialized by takt (bytes must be identical); COUNT random takt instances
are deserialized and re-serialized by rospy (bytes must be identical). Prints a JSON report."""

import concurrent.futures
import importlib
import io
import json
import os
import random
import struct
import subprocess
import sys

import genpy

INT_RANGES = {"int8": (-128, 127), "byte": (-128, 127), "uint8": (0, 255), "char": (0, 255),
              "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1), "int32": (-2**31, 2**31 - 1),
              "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1)}


def msg_class(full):
    pkg, name = full.split("/")
    return getattr(importlib.import_module(pkg + ".msg"), name)


def rand_scalar(base, rng):
    if base == "bool":
        return rng.random() < 0.5
    if base in INT_RANGES:
        lo, hi = INT_RANGES[base]
        return rng.randint(lo, hi)
    if base == "float32":
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e5, 1e5)))[0]
    if base == "float64":
        return rng.uniform(-1e9, 1e9)
    if base == "string":
        return "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(0, 12)))
    if base == "time":
        return genpy.Time(rng.randint(0, 2**32 - 1), rng.randint(0, 999999999))
    if base == "duration":
        return genpy.Duration(rng.randint(-2**31, 2**31 - 1), rng.randint(0, 999999999))
    return rand_msg(msg_class(base), rng)


def rand_value(t, rng):
    if "[" in t:
        base, size = t[:t.index("[")], t[t.index("[") + 1:-1]
        n = int(size) if size else rng.randint(0, 32 if base in ("uint8", "char") else 5)
        if base in ("uint8", "char"):
            return bytes(rng.randint(0, 255) for _ in range(n))
        return [rand_scalar(base, rng) for _ in range(n)]
    return rand_scalar(t, rng)


def rand_msg(cls, rng):
    m = cls()
    for slot, t in zip(cls.__slots__, cls._slot_types):
        setattr(m, slot, rand_value(t, rng))
    return m


def frames(data):
    out, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def check(tool, listing, full, count, seed):
    """One type both ways; its own random stream (seeded by the type), so types can run at once."""
    rep = {"types": 0, "rospy_to_takt": 0, "takt_to_rospy": 0, "md5": 0, "failures": []}
    try:
        cls = msg_class(full)
    except (ImportError, AttributeError):
        return rep  # a service half: no rospy class of that name
    rng = random.Random(f"{seed}/{full}")
    rep["types"] = 1
    tmd5 = next(l.split()[1] for l in listing.splitlines() if l.split()[0] == full)
    if tmd5 != cls._md5sum:
        rep["failures"].append(f"{full}: md5 {tmd5} != rospy {cls._md5sum}")
    else:
        rep["md5"] += 1
    # rospy -> takt -> bytes
    sent = []
    for _ in range(count):
        b = io.BytesIO()
        rand_msg(cls, rng).serialize(b)
        sent.append(b.getvalue())
    data = b"".join(struct.pack("<I", len(x)) + x for x in sent)
    out = subprocess.run([tool, "roundtrip", "ros1", full], input=data, capture_output=True, check=True).stdout
    pos = 0
    for i, x in enumerate(sent):
        st, n = struct.unpack_from("<iI", out, pos)
        back = out[pos + 8:pos + 8 + n]
        pos += 8 + n
        if st != 0 or back != x:
            rep["failures"].append(f"{full}: rospy->takt instance {i}: status {st}, "
                                   f"{len(x)} bytes in, {len(back)} out")
        else:
            rep["rospy_to_takt"] += 1
    # takt -> rospy -> bytes
    gen = subprocess.run([tool, "random", "ros1", full, str(count), str(rng.randint(1, 2**62))],
                         capture_output=True, check=True).stdout
    for i, x in enumerate(frames(gen)):
        m = cls()
        try:
            m.deserialize(x)
            b = io.BytesIO()
            m.serialize(b)
            ok = b.getvalue() == x
        except Exception as e:  # noqa: BLE001 - any rospy failure is a failure here
            rep["failures"].append(f"{full}: takt->rospy instance {i}: {e}")
            continue
        if ok:
            rep["takt_to_rospy"] += 1
        else:
            rep["failures"].append(f"{full}: takt->rospy instance {i}: bytes differ")
    return rep


def main():
    tool, count, seed, pkgs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    listing = subprocess.run([tool, "list"], capture_output=True, text=True, check=True).stdout
    types = [l.split()[0] for l in listing.splitlines() if l.split("/")[0] in pkgs]
    report = {"types": 0, "rospy_to_takt": 0, "takt_to_rospy": 0, "md5": 0, "failures": []}
    # the tool's runs (a sanitized build starts slowly) overlap: one type per CPU at a time
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for rep in pool.map(lambda full: check(tool, listing, full, count, seed), types):
            for k, v in rep.items():
                report[k] += v
    print(json.dumps(report))


if __name__ == "__main__":
    main()

"""takt.msgcodec (what `takt topic echo|pub` and `takt service call` decode and encode with) against
the generated C codecs, for types whose layout is easy to get wrong: empty messages nested alone,
in sequences and in fixed arrays (CDR carries one byte for each, ROS 1 none)."""

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from takt import msgcodec
from takt.msggen.spec import Registry

from conftest import BUILD, REPO

TEST_MSGS = REPO / "tests" / "msgs" / "takt_test_msgs" / "msg"

MAIN = r"""
#include <stdio.h>
#include "takt_test_msgs/HasEmpty.h"
static void hex(const uint8_t *b, int32_t n) {
  for (int32_t i = 0; i < n; i++) printf("%02x", b[i]);
  printf("\n");
}
int main(void) {
  static takt_test_msgs__HasEmpty m;
  static uint8_t buf[4096];
  takt_test_msgs__HasEmpty__init(&m);
  m.a = 7;
  m.es.size = 3;
  m.b = 2.5;
  m.s.size = 2;
  m.s.data[0] = 'h';
  m.s.data[1] = 'i';
  int32_t n = takt_test_msgs__HasEmpty__ros1_serialize(&m, buf, sizeof buf);
  if (n < 0) return 1;
  hex(buf, n);
  n = takt_test_msgs__HasEmpty__cdr_serialize(&m, buf, sizeof buf);
  if (n < 0) return 1;
  hex(buf, n);
  return 0;
}
"""


def c_encoded(tmp_path):
    out = tmp_path / "gen"
    r = subprocess.run([sys.executable, "-m", "takt", "msggen", "--out", str(out), "--search",
                        f"takt_test_msgs={TEST_MSGS}", str(TEST_MSGS / "HasEmpty.msg")], capture_output=True,
                       text=True, env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    (tmp_path / "main.c").write_text(MAIN)
    exe = tmp_path / "a.out"
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", str(out / "include"), "-I", str(REPO / "include"),
                         "-I", str(BUILD / "include"), str(tmp_path / "main.c"), *map(str, (out / "src").rglob("*.c")),
                         "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    ros1, cdr = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    return bytes.fromhex(ros1), bytes.fromhex(cdr)


def test_nested_empty_messages_decode_as_the_c_codec_writes_them(tmp_path):
    ros1, cdr = c_encoded(tmp_path)
    reg = Registry({"takt_test_msgs": [TEST_MSGS]})
    spec = reg.load_msg("takt_test_msgs/HasEmpty")
    want = {"a": 7, "e": {}, "es": [{}, {}, {}], "b": 2.5, "s": "hi", "pair": [{}, {}]}
    assert msgcodec.decode(reg, spec, ros1) == want
    assert msgcodec.decode_cdr(reg, spec, cdr) == want
    assert msgcodec.encode(reg, spec, want) == ros1
    # and written as CDR as the C codec writes it (what `takt service call` sends a ROS 2 service)
    assert msgcodec.encode_cdr(reg, spec, want) == cdr


def test_cdr_encoding_matches_ros2s_bytes():
    # the bytes rclpy's serialize_message gives for these (rclpy 3.12 venv, Fast DDS), padding zero
    reg = msgcodec.registry()
    assert msgcodec.encode_cdr(reg, reg.load_msg("std_msgs/String"), {"data": "hello"}).hex() == \
        "000100000600000068656c6c6f00"
    point = {"header": {"stamp": {"sec": 3, "nanosec": 7}, "frame_id": "map"}, "point": {"x": 1.5, "y": 2, "z": -1}}
    b = msgcodec.encode_cdr(reg, reg.load_msg("geometry_msgs/PointStamped"), point)
    assert b[:40].hex() == "000100000300000007000000040000006d617000000000000000f83f000000000000004000000000"
    assert msgcodec.decode_cdr(reg, reg.load_msg("geometry_msgs/PointStamped"), b)["point"] == \
        {"x": 1.5, "y": 2.0, "z": -1.0}


def test_a_hostile_count_of_empty_elements_is_refused_not_built():
    # ROS 1: `Nothing[] es` is only its count on the wire; 2^32-1 of them in 4 bytes built a list of
    # four billion dicts (minutes, then memory). A count past the limit is refused by name.
    reg = Registry({"takt_test_msgs": [TEST_MSGS]})
    spec = reg.load_msg("takt_test_msgs/HasEmpty")
    head, tail = bytes([7]), struct.pack("<dI", 2.5, 0)
    msg = msgcodec.decode(reg, spec, head + struct.pack("<I", msgcodec.MAX_EMPTY_ELEMENTS) + tail)
    assert len(msg["es"]) == msgcodec.MAX_EMPTY_ELEMENTS
    with pytest.raises(ValueError, match=r"HasEmpty\.es: 4294967295 elements of takt_test_msgs/Nothing"):
        msgcodec.decode(reg, spec, head + struct.pack("<I", 0xFFFFFFFF) + tail)


def test_a_time_is_given_as_rostopic_takes_it():
    # `{stamp: now}` (rostopic's idiom) and `{stamp: 5}` raised AttributeError in the encoders:
    # a traceback from `takt topic pub` and `takt service call`
    import time
    from takt.commands import graph
    reg = msgcodec.registry()
    header = reg.load_msg("std_msgs/Header")

    def stamp(value, cdr=False):
        if cdr:
            b = msgcodec.encode_cdr(reg, header, {"stamp": value})
            return msgcodec.decode_cdr(reg, header, b)["stamp"]
        return msgcodec.decode(reg, header, msgcodec.encode(reg, header, {"stamp": value}))["stamp"]

    before = int(time.time())
    now = stamp("now")
    assert before <= now["secs"] <= time.time() and 0 <= now["nsecs"] < 10**9
    assert before <= stamp("now", cdr=True)["sec"] <= time.time()
    assert stamp(5) == {"secs": 5, "nsecs": 0}
    assert stamp(1.25) == {"secs": 1, "nsecs": 250_000_000}
    assert stamp({"secs": 3, "nsecs": 7}) == {"secs": 3, "nsecs": 7}
    assert stamp({"sec": 3, "nanosec": 7}, cdr=True) == {"sec": 3, "nanosec": 7}
    # a duration: a number of seconds, rospy's normal form for a negative one
    dur = reg.load_msg("std_msgs/Duration")
    assert msgcodec.decode(reg, dur, msgcodec.encode(reg, dur, {"data": -1.5}))["data"] == \
        {"secs": -2, "nsecs": 500_000_000}
    # anything else: one line naming the field and what it takes
    for value, what in (("later", r"std_msgs/Header\.stamp: a time is now, a number of seconds or "
                                  r"\{secs: S, nsecs: N\}, not 'later'"),
                        ([1, 2], r"std_msgs/Header\.stamp: a time is now"),
                        ({"secs": 1, "x": 2}, r"std_msgs/Header\.stamp: a time has no field x")):
        with pytest.raises(graph.NoSystem, match=what):
            graph._encode_fields(reg, header, f"{{stamp: {value}}}" if not isinstance(value, dict)
                                 else "{stamp: {secs: 1, x: 2}}")
    with pytest.raises(ValueError, match=r"std_msgs/Duration\.data: a duration is a number of seconds"):
        msgcodec.encode(reg, dur, {"data": "now"})
    with pytest.raises(ValueError, match=r"a time is now"):
        msgcodec.encode_cdr(reg, header, {"stamp": "later"})

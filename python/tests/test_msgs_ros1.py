"""ROS 1 compatibility of generated messages, checked against Debian's genmsg and rospy (which
live in /usr/bin/python3, so the checks run there)."""

import json
import subprocess
from pathlib import Path

from takt.msggen.spec import parse_msg_file

from conftest import BUILD, REPO

SYSTEM_PY = "/usr/bin/python3"
TOOL = BUILD / "msgs" / "takt-msgtool"
HERE = Path(__file__).parent / "crosscheck"


def run_json(args):
    proc = subprocess.run([SYSTEM_PY] + [str(a) for a in args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_md5sums_and_definitions_equal_genmsg():
    r = run_json([HERE / "md5_genmsg.py", REPO / "python", "std_msgs", "std_srvs", "geometry_msgs", "sensor_msgs"])
    assert r["failures"] == []
    assert r["messages"] >= 85  # every message of the four packages
    assert r["services"] >= 4   # std_srvs/Empty, SetBool, Trigger, sensor_msgs/SetCameraInfo


def test_constants_genmsg_takes_are_taken_with_its_md5sum(tmp_path):
    """Constants as genmsg parses them: integers in decimal (int(): `07`, `+5`), a bool by
    literal_eval's truth (`2` is true); the md5sum hashes the text as written."""
    d = tmp_path / "c_msgs" / "msg"
    d.mkdir(parents=True)
    (d / "Odd.msg").write_text("uint8 U=07\nint32 P=+5\nint16 N= -0012\nbool B=2\nbool Z=0\nbool T=True\n"
                               "char C=010\nuint8 value\n")
    (d / "Uses.msg").write_text("Odd odd\nstring s\n")
    r = run_json([HERE / "md5_genmsg.py", REPO / "python", "--root", tmp_path, "c_msgs"])
    assert r["failures"] == [] and r["messages"] == 2
    spec = parse_msg_file(d / "Odd.msg", "c_msgs")
    assert [c.value for c in spec.constants] == [7, 5, -12, True, False, True, 10]


def test_bytes_identical_to_rospy_both_ways():
    assert TOOL.exists(), f"{TOOL} is not built"
    r = run_json([HERE / "ros1_rospy.py", TOOL, 30, 7, "std_msgs", "geometry_msgs", "sensor_msgs"])
    assert r["failures"] == [], r["failures"][:10]
    assert r["types"] >= 85
    assert r["md5"] == r["types"]
    assert r["rospy_to_takt"] == 30 * r["types"]
    assert r["takt_to_rospy"] == 30 * r["types"]

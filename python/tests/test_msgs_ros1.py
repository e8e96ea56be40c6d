"""ROS 1 compatibility of generated messages, checked against Debian's genmsg and rospy (which
live in /usr/bin/python3, so the checks run there)."""

import json
import subprocess
from pathlib import Path

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


def test_bytes_identical_to_rospy_both_ways():
    assert TOOL.exists(), f"{TOOL} is not built"
    r = run_json([HERE / "ros1_rospy.py", TOOL, 30, 7, "std_msgs", "geometry_msgs", "sensor_msgs"])
    assert r["failures"] == [], r["failures"][:10]
    assert r["types"] >= 85
    assert r["md5"] == r["types"]
    assert r["rospy_to_takt"] == 30 * r["types"]
    assert r["takt_to_rospy"] == 30 * r["types"]

"""Debian's rosparam against `takt master`, the embedded ROS 1 master as a program: set, get, list,
dump and delete, scalars, lists and dictionaries (a dictionary stored as a namespace), a
robot_description of 300 KB set from a file and read back whole, and a value the parameter store
cannot hold refused with rosparam's own error, not a hang, losing nothing set before."""
import os
import subprocess
import sys
import tempfile

from conftest import BUILD, free_port, stop_system, wait_for

ROSPARAM = "/usr/bin/rosparam"


def test_rosparam_against_takt_master():
    port = free_port()
    # the documented command, `takt master --param-bytes` (the takt command refused the option)
    master = subprocess.Popen([sys.executable, "-m", "takt", "master", "--port", str(port),
                               "--param-bytes", "1M"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, TAKT_BUILD_DIR=str(BUILD)))
    env = dict(os.environ, ROS_MASTER_URI=f"http://127.0.0.1:{port}/")

    def rosparam(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([ROSPARAM, *args], env=env, capture_output=True, text=True, timeout=30)

    try:
        wait_for(lambda: rosparam("list").returncode == 0, 15, "takt master answering rosparam")
        assert rosparam("set", "/rate", "50").returncode == 0
        assert rosparam("set", "/robot/name", "tk1").returncode == 0
        assert rosparam("set", "/robot/gains", "[1.5, 2, 3]").returncode == 0
        assert rosparam("set", "/arm", "{joints: 6, limits: {max: 2.5}}").returncode == 0
        assert rosparam("get", "/rate").stdout.strip() == "50"
        assert rosparam("get", "/robot/name").stdout.strip() == "tk1"
        assert rosparam("get", "/robot/gains").stdout.split() == ["-", "1.5", "-", "2", "-", "3"]
        assert rosparam("get", "/arm/limits/max").stdout.strip() == "2.5"  # a namespace now
        listed = rosparam("list").stdout.split()
        for key in ("/rate", "/robot/name", "/robot/gains", "/arm/joints", "/arm/limits/max"):
            assert key in listed, listed
        dump = rosparam("dump", "/dev/stdout", "/arm").stdout
        assert "joints: 6" in dump and "max: 2.5" in dump, dump
        assert rosparam("delete", "/robot").returncode == 0
        listed = rosparam("list").stdout.split()
        assert "/robot/name" not in listed and "/rate" in listed, listed
        r = rosparam("get", "/robot/name")
        assert r.returncode != 0 and "/robot/name" in r.stdout + r.stderr
        # a URDF of 300 KB, as a robot's launch file sets it (larger than a connection's own
        # 64 KiB buffer: set and read through the master's large buffers)
        links = "".join(f'  <link name="link_{i}"><inertial><mass value="{i}.5"/></inertial></link>\n'
                        for i in range(4200))
        urdf = f'<?xml version="1.0"?>\n<robot name="tk1">\n{links}</robot>\n'
        assert 300_000 < len(urdf) < 400_000
        with tempfile.NamedTemporaryFile("w", suffix=".urdf") as f:
            f.write(urdf)
            f.flush()
            r = rosparam("set", "-t", f.name, "/robot_description")
            assert r.returncode == 0, r.stdout + r.stderr
        # read back whole by Debian's rosgraph (the master client rospy and rosparam use)
        read = subprocess.run(
            ["/usr/bin/python3", "-c",
             "import sys, rosgraph; sys.stdout.write(rosgraph.Master('/reader').getParam('/robot_description'))"],
            env=env, capture_output=True, text=True, timeout=30)
        assert read.returncode == 0, read.stderr
        assert read.stdout == urdf
        # a value the store (1 MiB, 443 KB of it taken by the URDF) cannot hold: refused in one line
        # naming the limit
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("x" * 800_000)
            f.flush()
            r = rosparam("set", "-t", f.name, "/big")
        assert r.returncode != 0
        assert "the master's parameter store is full" in r.stdout + r.stderr, r.stdout + r.stderr
        assert rosparam("get", "/rate").stdout.strip() == "50"  # nothing accepted was lost
        read = subprocess.run(
            ["/usr/bin/python3", "-c",
             "import rosgraph; print(len(rosgraph.Master('/reader').getParam('/robot_description')))"],
            env=env, capture_output=True, text=True, timeout=30)
        assert read.stdout.strip() == str(len(urdf)), read.stdout + read.stderr
    finally:
        stop_system(master)  # SIGINT: it ends in order
    assert master.returncode == 0, master.stderr.read()

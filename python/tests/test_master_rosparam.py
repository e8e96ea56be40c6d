"""Debian's rosparam against `takt master`, the embedded ROS 1 master as a program: set, get, list,
dump and delete, scalars, lists and dictionaries (a dictionary stored as a namespace), and the
parameter size limit refused with rosparam's own error, not a hang."""
import os
import subprocess

from conftest import BUILD, free_port, stop_system, wait_for

ROSPARAM = "/usr/bin/rosparam"


def test_rosparam_against_takt_master():
    port = free_port()
    master = subprocess.Popen([str(BUILD / "tools" / "takt-master"), "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
        # a value beyond the master's parameter size: refused in one line naming the limit
        r = rosparam("set", "/big", "x" * 2000)
        assert r.returncode != 0
        assert "larger than the master's parameter size" in r.stdout + r.stderr, r.stdout + r.stderr
        assert rosparam("get", "/rate").stdout.strip() == "50"  # nothing accepted was lost
    finally:
        stop_system(master)  # SIGINT: it ends in order
    assert master.returncode == 0, master.stderr.read()

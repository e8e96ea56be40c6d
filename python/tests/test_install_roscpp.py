"""The roscpp-compatible API from an installed takt: `g++ node.cpp $(pkg-config --cflags --libs
takt-roscpp)` builds examples/roscpp unchanged, and a CMake project builds them with
find_package(takt), takt::roscpp and takt_generate_messages(... ROSCPP) for the custom .srv.
(test_roscpp_examples, a ctest, runs them against a rosmaster.)"""

import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, REPO
from test_install import run, user_env

pytestmark = pytest.mark.release_pass  # pyproject.toml

EXAMPLES = REPO / "examples" / "roscpp"


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    assert (BUILD / "CMakeCache.txt").is_file(), f"{BUILD} is not a configured build"
    if not (BUILD / "pkgconfig" / "takt-roscpp.pc").is_file():
        pytest.skip("takt_roscpp is not built here (needs the ROS message packages: tools/deps.sh)")
    p = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", BUILD, "--prefix", p])
    return p


def test_installed_files(prefix):
    for rel in ["include/takt/roscpp/ros/ros.h", "include/takt/roscpp/std_msgs/String.h",
                "include/takt/roscpp/std_srvs/SetBool.h", "lib/libtakt_roscpp.a", "lib/pkgconfig/takt-roscpp.pc"]:
        assert (prefix / rel).is_file(), rel
    assert "add_library(takt::roscpp " in (prefix / "lib/cmake/takt/taktTargets.cmake").read_text()


def test_pkg_config_builds_the_talker_unchanged(prefix, tmp_path):
    env = user_env(prefix)
    flags = run(["pkg-config", "--cflags", "--libs", "takt-roscpp"], env=env).stdout.split()
    assert f"-I{prefix}/include/takt/roscpp" in [f"-I{Path(f[2:]).resolve()}" for f in flags if f.startswith("-I")]
    for prog in ("talker", "listener"):
        # (-std=c++11 first, as a ROS 1 package's flags often are: the .pc's C++17 comes after)
        run(["g++", "-std=c++11", EXAMPLES / f"{prog}.cpp", "-o", tmp_path / prog] + flags, env=env)
        assert (tmp_path / prog).is_file()
    # the custom service through the installed `takt msggen --roscpp`
    run(["takt", "msggen", "--roscpp", "--search", f"takt_tutorials={EXAMPLES / 'takt_tutorials' / 'msg'}",
         "takt_tutorials", "--out", tmp_path / "gen"], env=env)
    run(["g++", EXAMPLES / "add_two_ints_client.cpp", f"-I{tmp_path / 'gen' / 'include'}", "-o",
         tmp_path / "client"] + flags, env=env)


def test_cmake_project(prefix, tmp_path):
    env = user_env(prefix)
    proj = tmp_path / "proj"
    proj.mkdir()
    # add_compile_options(-std=c++11): a ROS 1 package's usual line (takt's headers need C++17,
    # which takt::roscpp puts after it; it failed at the first header before)
    (proj / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.16)
project(ported CXX)
add_compile_options(-std=c++11)
find_package(takt CONFIG REQUIRED)
takt_generate_messages(tut_msgs ROSCPP FILES {EXAMPLES}/takt_tutorials/srv/AddTwoInts.srv)
add_executable(server {EXAMPLES}/add_two_ints_server.cpp)
target_link_libraries(server PRIVATE tut_msgs)
add_executable(listener {EXAMPLES}/listener.cpp)
target_link_libraries(listener PRIVATE takt::roscpp)
""")
    run(["cmake", "-G", "Ninja", "-S", proj, "-B", proj / "build", f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    run(["cmake", "--build", proj / "build"], env=env)
    assert (proj / "build" / "server").is_file() and (proj / "build" / "listener").is_file()

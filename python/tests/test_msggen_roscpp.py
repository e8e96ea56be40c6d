"""`takt msggen --roscpp` against Debian's roscpp headers (gencpp's output in /usr/include): for
every type both have, the same md5sum, datatype and fields in the same order with the same C++
types (ros::takt_wire::fixed_array is boost::array where boost is, as here; the allocator templates
aside); services' md5sums too."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.release_pass  # pyproject.toml

PACKAGES = ["std_msgs", "geometry_msgs", "sensor_msgs", "std_srvs", "rosgraph_msgs"]
# generated too where Debian has them (src/roscpp/CMakeLists.txt; the deps script installs them)
PACKAGES += [p for p in ("actionlib_msgs", "nav_msgs", "trajectory_msgs", "visualization_msgs", "diagnostic_msgs")
             if Path(f"/usr/share/{p}/msg").is_dir()]
DEB = Path("/usr/include")


def generate(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "takt.msggen", "--roscpp", "--search-root", "/usr/share",
                           "--out", str(out), *extra], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})


def deb_value(text: str, trait: str) -> str:
    m = re.search(trait + r"<\s*::[\w:]+_?<ContainerAllocator>\s*>\s*\{\s*static const char\* value\(\)\s*\{\s*"
                  r"return \"([^\"]*)\";", text)
    if m is None:  # services: MD5Sum< ::pkg::Srv >
        m = re.search(trait + r"<\s*::[\w:]+\s*>\s*\{\s*static const char\* value\(\)\s*\{\s*return \"([^\"]*)\";", text)
    return m.group(1) if m else ""


def deb_fields(text: str):
    out = []
    for t, name in re.findall(r"typedef (.+?)  ?_(\w+)_type;", text):
        t = re.sub(r"\s+", " ", t).strip()
        t = t.replace("_<ContainerAllocator>", "").replace(" , ", ", ")
        t = re.sub(r"std::basic_string<char, std::char_traits<char>, typename std::allocator_traits<ContainerAllocator>::"
                   r"template rebind_alloc<char>>", "std::string", t)
        t = re.sub(r", typename std::allocator_traits<ContainerAllocator>::template rebind_alloc<[^>]*(?:<[^>]*>)?[^>]*>", "", t)
        t = re.sub(r"std::basic_string<char, std::char_traits<char>, typename ContainerAllocator::template "
                   r"rebind<char>::other ?>", "std::string", t)
        t = re.sub(r", typename ContainerAllocator::template rebind<.*>::other ?>$", ">", t)
        t = t.replace("::ros::Time", "ros::Time").replace("::ros::Duration", "ros::Duration")
        t = t.replace("std::vector< ", "std::vector<").replace(" >", ">").replace("  ", " ").strip()
        out.append((name, t))
    return out


def takt_fields(text: str):
    body = text[text.index("struct "):text.index("typedef ::ros::MessagePtr")]
    out = []
    for t, name in re.findall(r"^  (?!static|typedef)(.+) (\w+)\{\};$", body, re.M):
        t = t.replace("::ros::Time", "ros::Time").replace("::ros::Duration", "ros::Duration")
        t = t.replace("::ros::takt_wire::fixed_array", "boost::array")  # where boost is (takt_wire.h)
        t = re.sub(r"\s+", " ", t).strip()
        out.append((name, t))
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    if not (DEB / "std_msgs" / "Header.h").exists():
        pytest.skip("Debian's message headers are not installed (tools/deps.sh)")
    out = tmp_path_factory.mktemp("roscpp")
    r = generate(out, *PACKAGES)
    assert r.returncode == 0, r.stderr
    return out / "include"


def test_every_type_matches_debian(generated):
    compared = 0
    for h in sorted(generated.glob("*/*.h")):
        deb = DEB / h.parent.name / h.name
        if not deb.exists():
            continue
        ours, theirs = h.read_text(), deb.read_text()
        md5 = re.search(r'__takt_md5sum\(\) \{ return "(\w+)"', ours).group(1)
        dtype = re.search(r'__takt_datatype\(\) \{ return "([\w/]+)"', ours).group(1)
        assert md5 == deb_value(theirs, "MD5Sum"), h
        assert dtype == deb_value(theirs, "DataType"), h
        if "struct " in ours and "Request request;" not in ours:
            fields = takt_fields(ours)
            want = deb_fields(theirs)
            names = [n for n, _ in want]
            assert [n for n, _ in fields] == names, h
            for (n, ours_t), (_, deb_t) in zip(fields, want):
                norm = deb_t
                assert ours_t == norm or ours_t.replace(" ", "") == norm.replace(" ", ""), f"{h}: {n}: {ours_t} vs {deb_t}"
        compared += 1
    assert compared > 100
    if "nav_msgs" in PACKAGES and (DEB / "nav_msgs" / "Odometry.h").exists():
        assert (generated / "nav_msgs" / "Odometry.h").exists()


def test_roscpp_and_ros2_exclude_each_other(tmp_path):
    r = generate(tmp_path, "--ros2", "std_msgs")
    assert r.returncode == 1 and "exclude each other" in r.stderr


def test_list_names_headers_only(tmp_path):
    r = generate(tmp_path, "--list", "std_srvs")
    files = r.stdout.split()
    assert r.returncode == 0
    assert str(tmp_path / "include" / "std_srvs" / "SetBool.h") in files
    assert str(tmp_path / "include" / "std_srvs" / "SetBoolRequest.h") in files
    assert all(f.endswith(".h") for f in files) and not any((tmp_path / "include").glob("*"))


def clash_pkg(tmp_path: Path, files: dict) -> None:
    """The package clash_msgs of files (name: definition) under tmp_path/src, generated with
    --roscpp into tmp_path/gen."""
    pkg = tmp_path / "src" / "clash_msgs" / "msg"
    pkg.mkdir(parents=True)
    for name, text in files.items():
        (pkg / name).write_text(text)
    r = subprocess.run([sys.executable, "-m", "takt.msggen", "--roscpp", "--search-root", str(tmp_path / "src"),
                        "--search-root", "/usr/share", "--out", str(tmp_path / "gen"), "clash_msgs"],
                       capture_output=True, text=True, env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr


def test_fields_named_like_the_generated_functions_own_names(tmp_path):
    """Fields named n, o, i, os and indent are the fields in the generated functions: the length
    counted `n` as its own local (4 bytes, not the string's 104) and serialize wrote past the buffer
    it had sized with it; o, i, os and indent did not compile."""
    clash_pkg(tmp_path, {"Clash.msg": "string n\nint32 o\nuint8 i\nstring os\nstring indent\n"})
    prog = tmp_path / "clash.cpp"
    prog.write_text("""#include <clash_msgs/Clash.h>
#include <cstdio>
int main() {
  clash_msgs::Clash m, back;
  m.n = std::string(100, 'x');
  m.o = 7;
  m.i = 3;
  m.os = "ab";
  m.indent = "c";
  std::vector<uint8_t> buf;
  ros::takt_wire::serialize(m, buf);
  bool ok = ros::takt_wire::deserialize(back, buf.data(), static_cast<uint32_t>(buf.size()));
  std::printf("%zu %d %d\\n", buf.size(), ok ? 1 : 0, back == m ? 1 : 0);
  return 0;
}
""")
    exe = tmp_path / "clash"
    c = subprocess.run(["g++", "-std=c++17", "-fsanitize=address", "-g", "-I", str(REPO / "include"),
                        "-I", str(tmp_path / "gen" / "include"), str(prog), "-o", str(exe)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(4 + 100 + 4 + 1 + 4 + 2 + 4 + 1), "1", "1"]


def test_a_member_named_like_its_message_compiles(tmp_path):
    """`uint8 Mode=1` in Mode.msg, a field Level in Level.msg (gencpp takes both): the struct of
    that name could not have such a member, and its Ptr typedef named the field."""
    clash_pkg(tmp_path, {"Mode.msg": "uint8 Mode=1\nuint8 value\n", "Level.msg": "int32 Level\n"})
    prog = tmp_path / "clash.cpp"
    prog.write_text("""#include <clash_msgs/Mode.h>
#include <clash_msgs/Level.h>
int main() {
  clash_msgs::Mode m;
  m.value = clash_msgs::Mode::Mode;
  clash_msgs::ModePtr p(new clash_msgs::Mode(m));
  clash_msgs::Level::Ptr l(new clash_msgs::Level);
  l->Level = 3;
  std::vector<uint8_t> buf;
  ros::takt_wire::serialize(*l, buf);
  return p->value + l->Level == 4 && buf.size() == 4 ? 0 : 1;
}
""")
    c = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", str(REPO / "include"),
                        "-I", str(tmp_path / "gen" / "include"), str(prog)], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr

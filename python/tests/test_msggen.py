"""takt msggen on bad and unusual input: every problem is `file:line: what is wrong`, exit 1."""

import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, REPO


def msggen(*args, cwd):
    return subprocess.run([sys.executable, "-m", "takt", "msggen", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})


def make_pkg(tmp_path, files):
    d = tmp_path / "demo_msgs" / "msg"
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / name).write_text(text)
    return d


BAD = [
    ({"A.msg": "int32 x\nFoo y\n"}, "A.msg:2:", "unknown type 'demo_msgs/Foo'"),
    ({"A.msg": "# comment\nint32 X=abc\n"}, "A.msg:2:", "bad constant: 'abc' is not a decimal integer"),
    ({"A.msg": "uint8 X=0x10\n"}, "A.msg:1:", "bad constant: '0x10' is not a decimal integer"),  # as genmsg
    ({"A.msg": "bool X=yes\n"}, "A.msg:1:", "bad constant: 'yes' is not a bool"),
    ({"A.msg": "uint8 X=300\n"}, "A.msg:1:", "out of range for uint8"),
    ({"A.msg": "float64[abc] v\n"}, "A.msg:1:", "bad array syntax"),
    ({"A.msg": "float64[3 v\n"}, "A.msg:1:", "bad array syntax"),
    ({"A.msg": "Header[]x y\n"}, "A.msg:1:", "bad array syntax"),
    ({"A.msg": "int32 x y\n"}, "A.msg:1:", "expected 'TYPE NAME'"),
    ({"A.msg": "int32 1x\n"}, "A.msg:1:", "not a valid field name"),
    ({"A.msg": "int32 x\nint32 x\n"}, "A.msg:2:", "already defined on line 1"),
    ({"A.msg": "time T=1\n"}, "A.msg:1:", "cannot be a constant"),
    ({"A.msg": "B b\n", "B.msg": "A a\n"}, ".msg:1:", "contains itself"),
    ({"A.msg": "int32<=4 x\n"}, "A.msg:1:", "'<=' bounds only strings"),
    ({"A.msg": "int32 and\n# and_ would be the C name of and\nint32 and_\n"}, "A.msg:3:",
     "field 'and_' clashes with field 'and' (line 1): both would be 'and_' in the generated code"),
    ({"A.msg": "uint8 X=1\nuint8 X=2\n"}, "A.msg:2:", "constant 'X' clashes with constant 'X' (line 1)"),
    ({"A.msg": "uint8 NAME=1\nuint8 NAME_=2\n"}, "A.msg:2:",
     "constant 'NAME_' clashes with constant 'NAME' (line 1): both would be 'NAME_'"),
    ({"A.msg": "uint8 level\nuint8 level=2\n"}, "A.msg:2:", "constant 'level' clashes with field 'level' (line 1)"),
]


@pytest.mark.parametrize("files,where,what", BAD)
def test_malformed_definitions(tmp_path, files, where, what):
    make_pkg(tmp_path, files)
    proc = msggen("--out", tmp_path / "out", "--search", f"demo_msgs={tmp_path}/demo_msgs/msg", "demo_msgs",
                  cwd=tmp_path)
    assert proc.returncode == 1
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert where in line and what in line, line


def test_every_feature_generates_and_compiles(tmp_path):
    make_pkg(tmp_path, {
        "Everything.msg": (
            "# a comment line\n"
            "int32 ANSWER=42   # trailing comment\n"
            "string GREETING=hello # not a comment: strings take the rest of the line\n"
            "float64 PI=3.14159\n"
            "bool ON=true\n"
            "Header header\n"
            "time t\nduration d\n"
            "uint8[16] fixed\nfloat32[] var\nstring<=8 short_name\nint16[<=3] few\n"
            "string[] names\nPart[2] parts\nstd_msgs/ColorRGBA color\nchar c\nbyte b\n"),
        "Part.msg": "string label\nfloat64[] values\n",
    })
    out = tmp_path / "out"
    proc = msggen("--out", out, "--search-root", "/usr/share", "--search", f"demo_msgs={tmp_path}/demo_msgs/msg",
                  "--bound", "demo_msgs/Part.values=10", "demo_msgs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    header = (out / "include" / "demo_msgs" / "Everything.h").read_text()
    assert '#define demo_msgs__Everything__GREETING "hello # not a comment: strings take the rest of the line"' in header
    assert "#define demo_msgs__Everything__ANSWER ((int32_t)42LL)" in header
    assert "char data[9];" in header   # string<=8
    assert "int16_t data[3];" in header  # int16[<=3]
    part = (out / "include" / "demo_msgs" / "Part.h").read_text()
    assert "double data[10];" in part  # --bound
    src = tmp_path / "main.c"
    src.write_text('#include "demo_msgs/Everything.h"\n#include <stdio.h>\n'
                   "int main(void) { static demo_msgs__Everything m; static uint8_t buf[65536];\n"
                   "  uint64_t rng = 1; demo_msgs__Everything__randomize(&m, &rng);\n"
                   "  int32_t n = demo_msgs__Everything__ros1_serialize(&m, buf, sizeof buf);\n"
                   "  static demo_msgs__Everything back;\n"
                   "  if (n < 0 || demo_msgs__Everything__ros1_deserialize(&back, buf, (uint32_t)n)) return 1;\n"
                   "  if (demo_msgs__Everything__ros1_deserialize(&back, buf, (uint32_t)n - 1) != TAKT_EMALFORMED) return 2;\n"
                   "  int32_t c = demo_msgs__Everything__cdr_serialize(&m, buf, sizeof buf);\n"
                   "  if (c < 0 || demo_msgs__Everything__cdr_deserialize(&back, buf, (uint32_t)c)) return 3;\n"
                   '  printf("%s %d %d\\n", demo_msgs__Everything__MD5, n, c); return 0; }\n')
    srcs = [str(p) for p in (out / "src").rglob("*.c")]
    exe = tmp_path / "a.out"
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", str(out / "include"), "-I",
                         str(REPO / "include"), "-I", str(BUILD / "include"), str(src), *srcs,
                         "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(run.stdout.split()[0]) == 32


def test_a_service_comes_from_the_first_directory_that_has_it(tmp_path):
    # a package in two search roots (an overlay): its messages came from the first, its services
    # from the last: the service's md5 did not match the layout generated for its request
    for root, t in (("a", "int32"), ("b", "int64")):
        (tmp_path / root / "p" / "msg").mkdir(parents=True)
        (tmp_path / root / "p" / "msg" / "M.msg").write_text(f"{t} x\n")
        (tmp_path / root / "p" / "srv").mkdir(parents=True)
        (tmp_path / root / "p" / "srv" / "S.srv").write_text(f"{t} a\n---\n")
    def service_headers(*roots):
        out = tmp_path / ("out" + "".join(roots))
        args = [a for r in roots for a in ("--search-root", tmp_path / r)]
        proc = msggen("--out", out, *args, "p", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return {f.name: f.read_text() for f in out.rglob("*.h") if f.stem.startswith("S")}

    alone, overlaid = service_headers("a"), service_headers("a", "b")
    assert alone and overlaid == alone, "the overlay's service differs from the first root's alone"


def test_service_needs_a_separator(tmp_path):
    d = tmp_path / "demo_msgs" / "srv"
    d.mkdir(parents=True)
    (d / "Bad.srv").write_text("int32 a\nint32 b\n")
    proc = msggen("--out", tmp_path / "out", str(d / "Bad.srv"), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Bad.srv:3: a service needs a '---' line" in proc.stderr


def test_ros2_definitions_generate_ros2_types(tmp_path):
    """--ros2: pkg/msg/Type names, defaults accepted and dropped, nested types resolved across
    packages by ROS 2's pkg/Type spelling, the DDS name without the msg/ part twice."""
    root = tmp_path / "share"
    (root / "builtin_interfaces" / "msg").mkdir(parents=True)
    (root / "builtin_interfaces" / "msg" / "Time.msg").write_text("int32 sec\nuint32 nanosec\n")
    (root / "demo_msgs" / "msg").mkdir(parents=True)
    (root / "demo_msgs" / "msg" / "Stamped.msg").write_text(
        "# a ROS 2 message\nbuiltin_interfaces/Time stamp\nstring frame_id \"map\"\nuint8 level 3\n"
        "uint8 HIGH=2\n")
    out = tmp_path / "out"
    r = msggen("--ros2", "--out", out, "--search-root", root, "demo_msgs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (out / "include" / "demo_msgs" / "msg" / "Stamped.h").read_text()
    assert "typedef struct demo_msgs__msg__Stamped {" in h
    assert "builtin_interfaces__msg__Time stamp;" in h
    assert '#include "builtin_interfaces/msg/Time.h"' in h
    assert '#define demo_msgs__msg__Stamped__NAME "demo_msgs/msg/Stamped"' in h
    assert '#define demo_msgs__msg__Stamped__DDS_NAME "demo_msgs::msg::dds_::Stamped_"' in h
    assert "namespace demo_msgs::msg {" in h
    t = (out / "include" / "builtin_interfaces" / "msg" / "Time.h").read_text()
    assert "int32_t sec;" in t and "uint32_t nanosec;" in t
    assert (out / "include" / "takt_ros2_msgs_registry.h").exists()
    # the same file read as ROS 1 refuses the default value
    r1 = msggen("--out", tmp_path / "out1", "--search-root", root, "demo_msgs", cwd=tmp_path)
    assert r1.returncode == 1 and "expected 'TYPE NAME'" in r1.stderr


def test_ros2_services_are_refused_for_now(tmp_path):
    d = tmp_path / "demo_srvs" / "srv"
    d.mkdir(parents=True)
    (d / "Go.srv").write_text("bool go\n---\nbool ok\n")
    r = msggen("--ros2", "--out", tmp_path / "out", d / "Go.srv", cwd=tmp_path)
    assert r.returncode == 1 and "ROS 2 services are not generated yet" in r.stderr


def test_question_marks_are_escaped_against_trigraphs(tmp_path):
    """`??!` in a C11 (or pre-C++17) literal is a trigraph: definitions and string constants keep
    their question marks only escaped, in the C headers and the roscpp ones."""
    make_pkg(tmp_path, {"Tri.msg": "# range (in meters??)\nstring NOTE=why??!\nfloat32 range\n"})
    search = f"demo_msgs={tmp_path}/demo_msgs/msg"
    for extra in ([], ["--roscpp"]):
        out = tmp_path / ("out" + "".join(extra))
        r = msggen("--out", out, "--search", search, *extra, "demo_msgs", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        for f in out.rglob("*.[ch]"):
            assert "??" not in f.read_text(), f
    src = tmp_path / "main.c"
    src.write_text('#include <string.h>\n#include "demo_msgs/Tri.h"\n'
                   'int main(void) { return strcmp(demo_msgs__Tri__NOTE, "why?" "?!") != 0 ||\n'
                   '  strcmp(demo_msgs__Tri__DEFINITION, "# range (in meters?" "?)\\nstring NOTE=why?" "?!\\n"\n'
                   '         "float32 range\\n") != 0; }\n')
    out = tmp_path / "out"
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", str(out / "include"), "-I", str(REPO / "include"),
                         "-I", str(BUILD / "include"), str(src), *map(str, (out / "src").rglob("*.c")),
                         "-o", str(tmp_path / "a.out")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    assert subprocess.run([str(tmp_path / "a.out")]).returncode == 0


def test_names_the_c_library_and_gnu_modes_define_as_macros_get_an_underscore(tmp_path):
    # `uint8 EINVAL=1` was a syntax error in the C++ header (C++'s <string> brings <cerrno> in), a
    # field `linux` one in the struct under gnu++17 (what the project's CMake compiles)
    make_pkg(tmp_path, {"Errs.msg": "uint8 EINVAL=1\nuint8 EWOULDBLOCK=2\nuint8 LITTLE_ENDIAN=0\n"
                                    "uint8 EXIT_SUCCESS=0\nint32 linux\nint32 BUFSIZ\n"})
    out = tmp_path / "out"
    r = msggen("--out", out, "--search", f"demo_msgs={tmp_path}/demo_msgs/msg", "demo_msgs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    src = tmp_path / "main.cpp"
    src.write_text('#include <cerrno>\n#include <cstdlib>\n#include <string>\n#include "demo_msgs/Errs.h"\n'
                   "int main() { demo_msgs__Errs m{}; m.linux_ = 1; m.BUFSIZ_ = 2; return m.linux_ + m.BUFSIZ_ == 3 ? 0 : 1; }\n")
    cc = subprocess.run(["g++", "-std=gnu++17", "-fsyntax-only", "-Wall", "-Werror", "-I", str(out / "include"),
                         "-I", str(REPO / "include"), "-I", str(BUILD / "include"), str(src)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr


def test_a_member_named_like_its_message_compiles_in_cpp(tmp_path):
    # `uint8 Mode=1` in Mode.msg, or a field Level in Level.msg (gencpp takes both): the C++
    # struct of that name could not have such a member ("has the same name as the class")
    make_pkg(tmp_path, {"Mode.msg": "uint8 Mode=1\nuint8 value\n", "Level.msg": "int32 Level\n"})
    out = tmp_path / "out"
    r = msggen("--out", out, "--search", f"demo_msgs={tmp_path}/demo_msgs/msg", "demo_msgs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    src = tmp_path / "main.cpp"
    src.write_text('#include "demo_msgs/Mode.h"\n#include "demo_msgs/Level.h"\n'
                   "int main() { demo_msgs::Mode m; m.value = demo_msgs::Mode::Mode; demo_msgs::Level l;\n"
                   "  l.Level = 3; return m.value + l.Level == 4 ? 0 : 1; }\n")
    cc = subprocess.run(["g++", "-std=gnu++17", "-fsyntax-only", "-Wall", "-Werror", "-I", str(out / "include"),
                         "-I", str(REPO / "include"), "-I", str(BUILD / "include"), str(src)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr


def test_ros2_string_constants_are_unquoted_as_rosidl_does(tmp_path):
    """ROS 2's parser (rosidl_adapter) ends every line at `#` and takes the quotes off a string
    constant ('...' or "...", an escaped quote inside is the quote); the values here are
    rosidl_adapter's."""
    d = tmp_path / "share" / "p" / "msg"
    d.mkdir(parents=True)
    (d / "M.msg").write_text('string S="hello"  # a comment\nstring Q=\'say "hi"\'\nstring E="a \\"b\\""\n'
                             "string U=plain text\nstring P=' padded '\nint32 value\n")
    out = tmp_path / "out"
    r = msggen("--ros2", "--out", out, "--search-root", tmp_path / "share", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (out / "include" / "p" / "msg" / "M.h").read_text()
    assert '#define p__msg__M__S "hello"\n' in h
    assert '#define p__msg__M__Q "say \\"hi\\""\n' in h
    assert '#define p__msg__M__E "a \\"b\\""\n' in h
    assert '#define p__msg__M__U "plain text"\n' in h
    assert '#define p__msg__M__P " padded "\n' in h
    (d / "M.msg").write_text('string S="a"b"\n')
    r = msggen("--ros2", "--out", out, "--search-root", tmp_path / "share", "p", cwd=tmp_path)
    assert r.returncode == 1 and "M.msg:1: bad constant: the quote inside" in r.stderr, r.stderr


def test_ros2_integer_and_bool_constants_as_rosidl_reads_them(tmp_path):
    """rosidl_adapter: an integer in decimal, else with a 0x/0o/0b prefix; a bool true/false/1/0 in
    any case (ROS 1 takes decimal only, and a bool by Python's truth, as genmsg)."""
    d = tmp_path / "share" / "p" / "msg"
    d.mkdir(parents=True)
    (d / "M.msg").write_text("int32 H=0x10\nuint8 D=07\nbool B=TRUE\nbool F=0\nint32 value\n")
    out = tmp_path / "out"
    r = msggen("--ros2", "--out", out, "--search-root", tmp_path / "share", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (out / "include" / "p" / "msg" / "M.h").read_text()
    for line in ["p__msg__M__H ((int32_t)16LL)", "p__msg__M__D ((uint8_t)7ULL)", "p__msg__M__B ((bool)1)",
                 "p__msg__M__F ((bool)0)"]:
        assert f"#define {line}\n" in h, line
    (d / "M.msg").write_text("bool B=2\n")
    r = msggen("--ros2", "--out", out, "--search-root", tmp_path / "share", "p", cwd=tmp_path)
    assert r.returncode == 1 and "M.msg:1: bad constant: '2' is not a bool" in r.stderr, r.stderr


def test_ros2_byte_is_an_octet(tmp_path):
    """rosidl reads `byte` as an octet (uint8, 0..255); ROS 1's genmsg as an int8."""
    d = tmp_path / "share" / "p" / "msg"
    d.mkdir(parents=True)
    (d / "M.msg").write_text("byte B=200\nbyte b\nbyte[] bs\n")
    out = tmp_path / "out"
    r = msggen("--ros2", "--out", out, "--search-root", tmp_path / "share", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (out / "include" / "p" / "msg" / "M.h").read_text()
    assert "#define p__msg__M__B ((uint8_t)200ULL)\n" in h
    assert "  uint8_t b;" in h and " int8_t b;" not in h
    r1 = msggen("--out", tmp_path / "out1", "--search", f"p={d}", "p", cwd=tmp_path)
    assert r1.returncode == 1 and "200 is out of range for byte [-128, 127]" in r1.stderr, r1.stderr


def test_registry_option_names_the_registry(tmp_path):
    """--registry NAME: the registry's files and symbols take the name, so two generated libraries
    (here demo_msgs as demo_reg, other_msgs as takt_msgs, the default) are linked into one program
    and their registry headers included in one translation unit, each finding its own types."""
    make_pkg(tmp_path, {"A.msg": "int32 a\n"})
    other = tmp_path / "other_msgs"
    (other / "msg").mkdir(parents=True)
    (other / "msg" / "B.msg").write_text("float64 b\n")
    (other / "srv").mkdir()
    (other / "srv" / "Ask.srv").write_text("int32 q\n---\nint32 r\n")
    out1, out2 = tmp_path / "out1", tmp_path / "out2"
    args1 = ["--out", out1, "--search", f"demo_msgs={tmp_path}/demo_msgs/msg", "--registry", "demo_reg", "demo_msgs"]
    listed = msggen(*args1, "--list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = {p.rpartition("/")[2] for p in listed.stdout.split()}
    assert {"demo_reg_registry.h", "demo_reg_registry.c"} <= names and "takt_msgs_registry.h" not in names
    r = msggen(*args1, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out1.rglob("*_registry.*")) == ["demo_reg_registry.c", "demo_reg_registry.h"]
    h = (out1 / "include" / "demo_reg_registry.h").read_text()
    assert "#ifndef TAKT_REGISTRY_demo_reg_H" in h and "const takt_msg_entry_t *demo_reg_find(const char *name);" in h
    r = msggen("--out", out2, "--search-root", tmp_path, "other_msgs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (out2 / "include" / "takt_msgs_registry.h").is_file()  # the default is unchanged
    src = tmp_path / "main.c"
    src.write_text('#include "demo_reg_registry.h"\n#include "takt_msgs_registry.h"\n'
                   "int main(void) {\n"
                   '  if (demo_reg_count != 1 || demo_reg_find("demo_msgs/A") == NULL) return 1;\n'
                   '  if (demo_reg_find("other_msgs/B") != NULL || demo_reg_srvs_count != 0) return 2;\n'
                   '  if (takt_msgs_find("other_msgs/B") == NULL || takt_msgs_find("demo_msgs/A") != NULL) return 3;\n'
                   '  const takt_srv_entry_t *s = takt_msgs_srvs_find("other_msgs/Ask");\n'
                   '  return s == NULL || s->request != takt_msgs_find("other_msgs/AskRequest") ? 4 : 0;\n'
                   "}\n")
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(out1 / "include"), "-I",
                         str(out2 / "include"), "-I", str(REPO / "include"), "-I", str(BUILD / "include"), str(src),
                         *map(str, (out1 / "src").rglob("*.c")), *map(str, (out2 / "src").rglob("*.c")),
                         "-o", str(tmp_path / "a.out")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(tmp_path / "a.out")], capture_output=True, text=True)
    assert run.returncode == 0, f"exit {run.returncode}"


@pytest.mark.parametrize("name,what", [
    ("my-msgs", "is not a usable C identifier"), ("1msgs", "is not a usable C identifier"),
    ("_msgs", "is not a usable C identifier"), ("my__msgs", "is not a usable C identifier"),
    ("", "is not a usable C identifier"), ("int", "is a C or C++ keyword"),
    ("my_srvs", "ends in '_srvs'"), ("my_count", "ends in '_count'"), ("my_find", "ends in '_find'"),
])
def test_bad_registry_name_is_refused(tmp_path, name, what):
    make_pkg(tmp_path, {"A.msg": "int32 a\n"})
    for extra in ([], ["--list"]):
        r = msggen("--out", tmp_path / "out", "--search", f"demo_msgs={tmp_path}/demo_msgs/msg",
                   "--registry", name, *extra, "demo_msgs", cwd=tmp_path)
        assert r.returncode == 1, r.stderr
        assert r.stderr.strip() == r.stderr.strip().splitlines()[0], r.stderr  # one line
        assert f"--registry '{name}' {what}" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()
    r = msggen("--out", tmp_path / "out", "--search", f"demo_msgs={tmp_path}/demo_msgs/msg", "--roscpp",
               "--registry", "my_msgs", "demo_msgs", cwd=tmp_path)
    assert r.returncode == 1 and "--registry and --roscpp exclude each other" in r.stderr, r.stderr


def test_cmake_names_the_registry_after_the_target(tmp_path):
    """takt_generate_messages(TARGET ...) passes --registry TARGET, or REGISTRY's name; a target
    whose name is no C identifier is refused at configure time, naming REGISTRY."""
    make_pkg(tmp_path, {"A.msg": "int32 a\n"})

    def configure(args):
        (tmp_path / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.20)\nproject(p C)\n"
            f"add_library(stand_in INTERFACE)\nadd_library(takt::takt ALIAS stand_in)\n"
            f"target_include_directories(stand_in INTERFACE {REPO}/include {BUILD}/include)\n"
            f"include({REPO}/cmake/TaktMessages.cmake)\n"
            f"takt_generate_messages({args} PACKAGES demo_msgs SEARCH_ROOT {tmp_path})\n")
        shutil.rmtree(tmp_path / "b", ignore_errors=True)
        return subprocess.run(["cmake", "-G", "Ninja", "-S", str(tmp_path), "-B", str(tmp_path / "b")],
                              capture_output=True, text=True)

    for args, registry in [("demo_msgs", "demo_msgs"), ("my-msgs REGISTRY my_msgs", "my_msgs")]:
        r = configure(args)
        assert r.returncode == 0, r.stderr
        b = subprocess.run(["cmake", "--build", str(tmp_path / "b")], capture_output=True, text=True)
        assert b.returncode == 0, b.stdout + b.stderr
        gen = tmp_path / "b" / args.split()[0]
        assert sorted(p.name for p in gen.rglob("*_registry.*")) == [f"{registry}_registry.c",
                                                                     f"{registry}_registry.h"]
    r = configure("my-msgs")
    err = " ".join(r.stderr.split())  # CMake wraps the message
    assert r.returncode != 0
    assert "takt_generate_messages(my-msgs): the registry name 'my-msgs' is not a C identifier" in err, err
    assert "unless REGISTRY <name> gives another" in err, err


@pytest.mark.parametrize("where,name,text,folder", [
    ("", "Foo.msg", "int32 x\n", "msg"),
    ("loose/", "Foo.msg", "int32 x\n", "msg"),
    ("demo_msgs/srv/", "Foo.msg", "int32 x\n", "msg"),
    ("loose/", "Go.srv", "bool go\n---\nbool ok\n", "srv"),
    ("demo_msgs/msg/", "Go.srv", "bool go\n---\nbool ok\n", "srv"),
])
def test_a_file_outside_a_package_folder_is_refused(tmp_path, where, name, text, folder):
    # `takt msggen Foo.msg` outside PACKAGE/msg/ generated code without a package: `#include
    # "/Foo.h"`, C names `__Foo`, the DDS name `::msg::dds_::Foo_`
    d = tmp_path / where
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)
    out = tmp_path / "out"
    r = msggen("--out", out, f"{where}{name}", cwd=tmp_path)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (f"{where}{name}:0: a .{folder} file must be in PACKAGE/{folder}/ (the package is that "
            f"folder's name), not in {d}/") in r.stderr, r.stderr
    assert not out.exists()


def test_a_file_given_from_within_its_package_folder(tmp_path):
    pkg = make_pkg(tmp_path, {"Bar.msg": "int32 x\n"})
    out = tmp_path / "out"
    r = msggen("--out", out, "Bar.msg", cwd=pkg)
    assert r.returncode == 0, r.stderr
    assert '#define demo_msgs__Bar__DDS_NAME "demo_msgs::msg::dds_::Bar_"' in \
        (out / "include" / "demo_msgs" / "Bar.h").read_text()

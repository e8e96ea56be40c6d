"""`takt msggen`: load .msg/.srv files (by package or by path) and write the generated C/C++."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from . import ros1
from .gen_c import KEYWORDS, Bounds, CGen, check_names, cname
from .gen_cpp import cpp_block
from . import gen_roscpp
from .spec import MsgError, MsgSpec, Registry, SrvSpec, parse_msg_file, parse_srv_file

DEFAULT_BOUNDS = Path(__file__).with_name("bounds.txt")
# A registry's name begins its symbols (NAME, NAME_count, NAME_find, NAME_srvs...), which have
# external linkage: a C identifier that starts with a letter (a leading `_` is reserved at file
# scope), without `__` (reserved in C++, and the generated types' separator, pkg__Type).
REGISTRY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# What a registry's symbols add to its name: a name ending in one would clash with another's.
SYMBOL_SUFFIXES = ("_count", "_find", "_srvs")


def check_registry_name(name: str) -> None:
    """ValueError (one line) unless name can name a registry."""
    if not REGISTRY_NAME.fullmatch(name) or "__" in name:
        raise ValueError(f"--registry '{name}' is not a usable C identifier (a letter, then letters, digits "
                         f"and single '_'): it names the registry's files and symbols "
                         f"(NAME_registry.h, NAME_find)")
    if name in KEYWORDS:
        raise ValueError(f"--registry '{name}' is a C or C++ keyword")
    for suffix in SYMBOL_SUFFIXES:
        if name.endswith(suffix):
            raise ValueError(f"--registry '{name}' ends in '{suffix}': it would clash with the symbols of a "
                             f"registry named '{name[:-len(suffix)]}' ({name[:-len(suffix)]}{suffix})")


def _search_paths(items: List[str], roots: List[str], ros2: bool = False) -> Dict[str, List[Path]]:
    """Package -> its msg directories; ROS 2 keys are pkg/msg (the types are pkg/msg/Type)."""
    key = (lambda pkg: f"{pkg}/msg") if ros2 else (lambda pkg: pkg)
    search: Dict[str, List[Path]] = {}
    for root in roots:
        r = Path(root)
        if r.is_dir():
            for pkg in sorted(p for p in r.iterdir() if (p / "msg").is_dir() or (p / "srv").is_dir()):
                search.setdefault(key(pkg.name), []).append(pkg / "msg")
    for item in items:
        pkg, _, d = item.partition("=")
        if not pkg or not d:
            raise ValueError(f"--search expects PKG=DIR, got '{item}'")
        search.setdefault(key(pkg), []).insert(0, Path(d))
    return search


def load(targets: List[str], search: Dict[str, List[Path]],
         ros2: bool = False) -> Tuple[Registry, List[MsgSpec], List[SrvSpec]]:
    reg = Registry(search, ros2)
    msgs: List[MsgSpec] = []
    srvs: List[SrvSpec] = []
    for t in targets:
        p = Path(t)
        if p.suffix in (".msg", ".srv"):
            if not p.is_file():
                raise MsgError(t, 0, "no such file")
            # <pkg>/msg/Type.msg, <pkg>/srv/Type.srv: the package is the folder's name, and names
            # the generated code (its include path, C names, DDS name); elsewhere there is none
            folder = Path(os.path.abspath(p)).parent  # (not resolved: a link's own place counts)
            want = p.suffix[1:]
            if folder.name != want or not folder.parent.name:
                raise MsgError(t, 0, f"a {p.suffix} file must be in PACKAGE/{want}/ (the package is "
                                     f"that folder's name), not in {folder}/")
            pkg = folder.parent.name
            if ros2 and p.suffix == ".srv":
                raise MsgError(t, 0, "ROS 2 services are not generated yet (only messages)")
            if ros2:
                pkg += "/msg"
            if p.suffix == ".msg":
                spec = parse_msg_file(p, pkg, ros2)
                reg.add_msg(spec)
                msgs.append(spec)
            else:
                srv = parse_srv_file(p, pkg)
                reg.add_srv(srv)
                srvs.append(srv)
            continue
        key = f"{t}/msg" if ros2 else t
        dirs = search.get(key)
        if not dirs:
            raise MsgError(t, 0, f"package '{t}' not found (give --search {t}=DIR or --search-root)")
        taken = set()  # a name found in an earlier (higher-priority) directory is that one
        for d in dirs:
            for f in sorted(Path(d).glob("*.msg")):
                if ("msg", f.stem) not in taken:
                    taken.add(("msg", f.stem))
                    msgs.append(reg.load_msg(f"{key}/{f.stem}"))
            sd = Path(d).parent / "srv"
            for f in sorted(sd.glob("*.srv")) if sd.is_dir() and not ros2 else []:
                if ("srv", f.stem) in taken:  # (a later directory's overrode it: md5 and layout differed)
                    continue
                taken.add(("srv", f.stem))
                srv = parse_srv_file(f, t)
                reg.add_srv(srv)
                srvs.append(srv)
    return reg, msgs, srvs


def all_specs(reg: Registry, msgs: List[MsgSpec], srvs: List[SrvSpec]) -> List[MsgSpec]:
    """Every message to generate: the targets, their service halves, and every dependency."""
    out: Dict[str, MsgSpec] = {}
    todo = list(msgs) + [h for s in srvs for h in (s.request, s.response)]
    while todo:
        s = todo.pop(0)
        if s.full_name in out:
            continue
        out[s.full_name] = s
        todo += [reg.msgs[d] for d in s.deps()]
    return [out[k] for k in sorted(out)]


def outputs(out: Path, specs: List[MsgSpec], srvs: List[SrvSpec], reg_name: str = "takt_msgs") -> List[Path]:
    files = []
    for s in specs:
        files += [out / "include" / s.package / f"{s.short_name}.h", out / "src" / s.package / f"{s.short_name}.c"]
    files += [out / "include" / s.package / f"{s.short_name}.h" for s in srvs]
    files += [out / "include" / f"{reg_name}_registry.h", out / "src" / f"{reg_name}_registry.c"]
    return files


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # keep timestamps of unchanged files
        path.write_text(text)


def srv_header(reg: Registry, srv: SrvSpec, cache: Dict[str, str]) -> str:
    n = cname(srv.full_name)
    guard = f"TAKT_SRV_{n.upper()}_H"
    md5 = ros1.srv_md5(reg, srv, cache)
    return "\n".join([
        f"/* {srv.full_name}: generated by `takt msggen` from {Path(srv.path).name}. Do not edit. */",
        f"#ifndef {guard}", f"#define {guard}", "",
        f'#include "{srv.package}/{srv.request.short_name}.h"',
        f'#include "{srv.package}/{srv.response.short_name}.h"', "",
        f'#define {n}__NAME "{srv.full_name}"', f'#define {n}__MD5 "{md5}"',
        f'#define {n}__DDS_REQUEST_NAME "{ros1.dds_type_name(srv.request)}"',
        f'#define {n}__DDS_RESPONSE_NAME "{ros1.dds_type_name(srv.response)}"', "",
        "#ifdef __cplusplus",
        f"namespace {srv.package} {{",
        f"struct {srv.short_name} {{",
        f"  typedef {srv.request.short_name} Request;",
        f"  typedef {srv.response.short_name} Response;",
        "  Request request;", "  Response response;",
        f"  static const char *__takt_md5sum() {{ return {n}__MD5; }}",
        f"  static const char *__takt_datatype() {{ return {n}__NAME; }}",
        "};", f"}}  // namespace {srv.package}", "#endif", "", "#endif", ""])


def registry(specs: List[MsgSpec], name: str = "takt_msgs", srvs: Sequence[SrvSpec] = ()) -> Tuple[str, str]:
    h = "\n".join([
        "/* Every generated message type, for tools and tests. Generated by `takt msggen`. */",
        f"#ifndef TAKT_REGISTRY_{name}_H", f"#define TAKT_REGISTRY_{name}_H", "", '#include "takt/core.h"', "",
        "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
        "#ifndef TAKT_MSG_ENTRY_DEFINED", "#define TAKT_MSG_ENTRY_DEFINED",
        "typedef struct takt_msg_entry {",
        "  const char *name, *md5, *dds_name, *definition;",
        "  uint32_t size;",
        "  int32_t (*ros1_serialize)(const void *m, uint8_t *buf, uint32_t cap);",
        "  takt_err_t (*ros1_deserialize)(void *m, const uint8_t *buf, uint32_t len);",
        "  int32_t (*cdr_serialize)(const void *m, uint8_t *buf, uint32_t cap);",
        "  takt_err_t (*cdr_deserialize)(void *m, const uint8_t *buf, uint32_t len);",
        "  void (*randomize)(void *m, uint64_t *rng);",
        "} takt_msg_entry_t;", "#endif", "",
        f"extern const takt_msg_entry_t {name}[];", f"extern const uint32_t {name}_count;",
        "/** The entry of a type by its name (\"pkg/Type\"), or NULL. */",
        f"const takt_msg_entry_t *{name}_find(const char *name);", "",
        "/* Services: the name, the service's md5sum (request and response text hashed together)",
        " * and the entries of its halves. */",
        "#ifndef TAKT_SRV_ENTRY_DEFINED", "#define TAKT_SRV_ENTRY_DEFINED",
        "typedef struct takt_srv_entry {", "  const char *name, *md5;",
        "  const takt_msg_entry_t *request, *response;", "} takt_srv_entry_t;", "#endif",
        f"extern const takt_srv_entry_t {name}_srvs[];", f"extern const uint32_t {name}_srvs_count;",
        "/** The entry of a service type by its name (\"pkg/Type\"), or NULL. */",
        f"const takt_srv_entry_t *{name}_srvs_find(const char *name);", "",
        "#ifdef __cplusplus", "}", "#endif", "#endif", ""])
    c = ["/* Generated by `takt msggen`. Do not edit. */", "#include <string.h>", "",
         f'#include "{name}_registry.h"']
    c += [f'#include "{s.package}/{s.short_name}.h"' for s in specs]
    c += [f'#include "{v.package}/{v.short_name}.h"' for v in srvs]
    c.append("")
    for s in specs:
        n = cname(s)
        c += [f"static int32_t r_{n}_rs(const void *m, uint8_t *b, uint32_t c) {{ return {n}__ros1_serialize(m, b, c); }}",
              f"static takt_err_t r_{n}_rd(void *m, const uint8_t *b, uint32_t l) {{ return {n}__ros1_deserialize(m, b, l); }}",
              f"static int32_t r_{n}_cs(const void *m, uint8_t *b, uint32_t c) {{ return {n}__cdr_serialize(m, b, c); }}",
              f"static takt_err_t r_{n}_cd(void *m, const uint8_t *b, uint32_t l) {{ return {n}__cdr_deserialize(m, b, l); }}",
              f"static void r_{n}_rnd(void *m, uint64_t *rng) {{ {n}__randomize(m, rng); }}"]
    c += ["", f"const takt_msg_entry_t {name}[] = {{"]
    for s in specs:
        n = cname(s)
        c.append(f"    {{{n}__NAME, {n}__MD5, {n}__DDS_NAME, {n}__DEFINITION, (uint32_t)sizeof({n}), "
                 f"r_{n}_rs, r_{n}_rd, r_{n}_cs, r_{n}_cd, r_{n}_rnd}},")
    c += ["};", f"const uint32_t {name}_count = {len(specs)};", "",
          f"const takt_msg_entry_t *{name}_find(const char *name) {{",
          f"  for (uint32_t i = 0; i < {name}_count; i++)",
          f"    if (strcmp({name}[i].name, name) == 0) return &{name}[i];",
          "  return NULL;", "}", ""]
    index = {s.full_name: i for i, s in enumerate(specs)}
    c += [f"const takt_srv_entry_t {name}_srvs[] = {{"]
    for v in srvs:
        n = cname(v.full_name)
        c.append(f"    {{{n}__NAME, {n}__MD5, &{name}[{index[v.request.full_name]}], "
                 f"&{name}[{index[v.response.full_name]}]}},")
    if not srvs:
        c.append("    {NULL, NULL, NULL, NULL},")
    c += ["};", f"const uint32_t {name}_srvs_count = {len(srvs)};", "",
          f"const takt_srv_entry_t *{name}_srvs_find(const char *name) {{",
          f"  for (uint32_t i = 0; i < {name}_srvs_count; i++)",
          f"    if (strcmp({name}_srvs[i].name, name) == 0) return &{name}_srvs[i];",
          "  return NULL;", "}", ""]
    return h, "\n".join(c)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="takt msggen", description="generate C/C++ message types from ROS .msg/.srv files")
    ap.add_argument("targets", nargs="+", help="package names (all their .msg/.srv) or .msg/.srv files")
    ap.add_argument("--out", type=Path, required=True, help="output directory (include/ and src/ below it)")
    ap.add_argument("--search", action="append", default=[], metavar="PKG=DIR", help="where PKG's .msg files are")
    ap.add_argument("--search-root", action="append", default=[], metavar="DIR",
                    help="a directory of packages (DIR/PKG/msg, DIR/PKG/srv), e.g. /usr/share")
    ap.add_argument("--bounds", type=Path, action="append", default=[], help="a capacities file (see bounds.txt)")
    ap.add_argument("--bound", action="append", default=[], metavar="PKG/TYPE.FIELD=N", help="one capacity")
    ap.add_argument("--list", action="store_true", help="print the files it would write, write nothing")
    ap.add_argument("--ros2", action="store_true",
                    help="ROS 2 definitions (e.g. the share/ folder of the PyPI ROS 2 message wheels): "
                         "types pkg/msg/Type, C names pkg__msg__Type, headers <pkg/msg/Type.h>, "
                         "registry takt_ros2_msgs")
    ap.add_argument("--registry", metavar="NAME",
                    help="name of the registry of the generated types: files NAME_registry.h and "
                         "NAME_registry.c, symbols NAME, NAME_count, NAME_find, NAME_srvs... "
                         "(default takt_msgs, with --ros2 takt_ros2_msgs); two libraries linked into "
                         "one program need two names")
    ap.add_argument("--roscpp", action="store_true",
                    help="headers in roscpp's layout (std::string, std::vector; include/<pkg>/<Type>.h) "
                         "for the roscpp-compatible API (include/ros/), instead of the C types")
    args = ap.parse_args(argv)
    if args.roscpp and args.ros2:
        print("--roscpp and --ros2 exclude each other (roscpp's layout is ROS 1's)", file=sys.stderr)
        return 1
    if args.roscpp and args.registry is not None:
        print("--registry and --roscpp exclude each other (roscpp's headers have no registry)", file=sys.stderr)
        return 1
    reg_name = args.registry if args.registry is not None else "takt_ros2_msgs" if args.ros2 else "takt_msgs"
    try:
        check_registry_name(reg_name)
        search = _search_paths(args.search, args.search_root, args.ros2)
        bounds = Bounds()
        for b in [DEFAULT_BOUNDS] + args.bounds:
            bounds.load(b)
        for b in args.bound:
            bounds.add(b)
        reg, msgs, srvs = load(args.targets, search, args.ros2)
        specs = all_specs(reg, msgs, srvs)
        if not args.roscpp:  # the names of the C and C++ types (roscpp's keep the .msg's names)
            for s in specs:
                check_names(s)
    except (MsgError, ValueError, OSError) as e:
        print(f"{e}", file=sys.stderr)
        return 1
    if args.roscpp:
        files = gen_roscpp.generate(reg, specs, srvs)
        if args.list:
            print("\n".join(str(args.out / "include" / f) for f in sorted(files)))
            return 0
        for rel, text in files.items():
            _write(args.out / "include" / rel, text)
        return 0
    if args.list:
        print("\n".join(str(p) for p in outputs(args.out, specs, srvs, reg_name)))
        return 0
    gen = CGen(reg, bounds)
    for s in specs:
        _write(args.out / "include" / s.package / f"{s.short_name}.h", gen.header(s, cpp_block(gen, s)))
        _write(args.out / "src" / s.package / f"{s.short_name}.c", gen.source(s))
    for srv in srvs:
        _write(args.out / "include" / srv.package / f"{srv.short_name}.h", srv_header(reg, srv, gen.md5_cache))
    h, c = registry(specs, reg_name, srvs)
    _write(args.out / "include" / f"{reg_name}_registry.h", h)
    _write(args.out / "src" / f"{reg_name}_registry.c", c)
    return 0

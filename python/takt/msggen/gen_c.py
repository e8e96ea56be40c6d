"""C code generation: a struct per message with fixed-capacity storage for variable-size fields,
ROS 1 and CDR (XCDR1, little endian, with encapsulation) encoders and decoders, a type support
descriptor for the core, the ROS 1 identity (md5sum, full definition) and the ROS 2 DDS name."""

from __future__ import annotations

import errno
import math
import struct
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import ros1
from .spec import PRIMITIVES, Constant, Field, MsgError, MsgSpec, Registry

DEFAULT_STRING = 255
FLT_MAX = 3.4028234663852886e38
DEFAULT_ARRAY = 64
# Names a field or constant cannot keep in the generated C and C++ (they get a trailing `_`): the
# keywords of C11, C23 and C++20 (alternative tokens such as `and` and `not` included), the macros
# <stdbool.h> defines (bool, true, false), and object-like macros the generated headers' own
# includes define (NULL; EOF and errno come with C++'s <string>).
KEYWORDS = {
    # C11
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while",
    # C23 (and C11's macros of the same names: bool, true, false, alignas, alignof, static_assert,
    # thread_local)
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local",
    "true", "typeof", "typeof_unqual",
    # C++20 besides the above
    "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t", "class",
    "compl", "concept", "consteval", "constinit", "const_cast", "co_await", "co_return", "co_yield",
    "decltype", "delete", "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace",
    "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq", "private", "protected", "public",
    "reinterpret_cast", "requires", "static_cast", "template", "this", "throw", "try", "typeid",
    "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
    # macros
    "NULL", "EOF", "errno",
}
# Object-like macros of the C library headers C++'s <string> brings in (<cerrno>, <cstdio>,
# <cstdlib>): a constant `uint8 EINVAL=1` was a syntax error in the C++ header; and the names
# GNU modes predefine (the project's CMake compiles gnu++17): a field `linux` broke the struct.
KEYWORDS |= {n for n in dir(errno) if n.startswith("E") and n.isupper()} | {  # (aliases included)
    "EWOULDBLOCK", "EDEADLK", "EOPNOTSUPP", "ENOTSUP",
    "BUFSIZ", "EXIT_FAILURE", "EXIT_SUCCESS", "FILENAME_MAX", "FOPEN_MAX", "L_tmpnam", "MB_CUR_MAX",
    "RAND_MAX", "SEEK_CUR", "SEEK_END", "SEEK_SET", "SEEK_DATA", "SEEK_HOLE", "TMP_MAX", "stdin",
    "stdout", "stderr", "BIG_ENDIAN", "LITTLE_ENDIAN", "PDP_ENDIAN", "BYTE_ORDER", "WEOF",
    "WCHAR_MAX", "WCHAR_MIN", "SIZE_MAX", "FD_SETSIZE", "WNOHANG", "WUNTRACED", "LC_ALL",
    "LC_COLLATE", "LC_CTYPE", "LC_MONETARY", "LC_NUMERIC", "LC_TIME", "LC_MESSAGES",
    "linux", "unix", "i386",
}


def cname(spec_or_full: object) -> str:
    full = spec_or_full if isinstance(spec_or_full, str) else spec_or_full.full_name
    return "__".join(full.split("/"))  # pkg/Type -> pkg__Type; ROS 2 pkg/msg/Type -> pkg__msg__Type


def _bounds_name(spec: MsgSpec) -> str:
    """Capacities are given per pkg/Type; a ROS 2 type pkg/msg/Type takes its ROS 1 twin's."""
    pkg, _, name = spec.full_name.rpartition("/")
    return f"{pkg.split('/')[0]}/{name}"


def fname(f: Field) -> str:
    """A field's name in the C struct and the C++ wrapper."""
    return f.name + "_" if f.name in KEYWORDS else f.name


# What the generator names pkg__Type__<name> besides the constants (the functions of the .c file
# included): a constant named so gets a trailing `_` in C and C++, as a keyword does, and so does one
# with `__` in its name (pkg__Type__<field>__seq_t is the type of a sequence).
GENERATED = {
    "NAME", "MD5", "DDS_NAME", "DEFINITION", "type", "type_cdr", "init", "randomize",
    "ros1_size", "ros1_serialize", "ros1_deserialize", "ros1_write", "ros1_read",
    "cdr_size", "cdr_serialize", "cdr_deserialize", "cdr_write", "cdr_read",
    "ts_ser", "ts_de", "ts_ser_cdr", "ts_de_cdr",
}


def const_name(c: Constant) -> str:
    """A constant's name: the macro pkg__Type__<name> in C, the member Type::<name> in C++."""
    return c.name + "_" if c.name in KEYWORDS or c.name in GENERATED or "__" in c.name else c.name


def check_names(spec: MsgSpec) -> None:
    """MsgError (`file:line:`) for two fields or constants that would have one name in the generated
    code: a constant given twice, `and` and `and_` (and is and_), a constant and a field of the
    same name (both members of the C++ type)."""
    seen: Dict[str, Tuple[str, str, int]] = {}
    items = [("field", f.name, fname(f), f.line) for f in spec.fields]
    items += [("constant", c.name, const_name(c), c.line) for c in spec.constants]
    for kind, name, gen, line in sorted(items, key=lambda i: i[3]):
        if gen in seen:
            okind, oname, oline = seen[gen]
            raise MsgError(spec.path, line, f"{kind} '{name}' clashes with {okind} '{oname}' (line {oline}): "
                                            f"both would be '{gen}' in the generated code")
        seen[gen] = (kind, name, line)


def float_literal(ctype: str, v: float) -> str:
    """A float or double constant that C and C++ (constexpr) accept: infinities and NaN through the
    builtins of GCC and clang (<math.h>'s INFINITY would bring its macros into every message
    header), and a float32 beyond float's range as the float it rounds to (converting such a double
    to float is undefined; genmsg takes `float32 X=1e40`)."""
    f = "f" if ctype == "float" else ""
    if f and math.isfinite(v) and abs(v) > FLT_MAX:
        try:
            v = struct.unpack("<f", struct.pack("<f", v))[0]
        except OverflowError:
            v = math.copysign(math.inf, v)
    if math.isnan(v):
        return f'(__builtin_nan{f}(""))'
    if math.isinf(v):
        return f"({'-' if v < 0 else ''}__builtin_inf{f}())"
    return f"(({ctype}){v!r})"


def c_literal(text: str) -> str:
    """A C string literal of text (UTF-8). `?` is escaped: under -std=c11 `??!` and the like are
    trigraphs, which would change a definition or a string constant."""
    out = []
    for ch in text.encode("utf-8"):
        c = chr(ch)
        if c in ("\\", '"', "?"):
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif 32 <= ch < 127:
            out.append(c)
        else:
            out.append(f"\\{ch:03o}")
    return '"' + "".join(out) + '"'


class Bounds:
    """Capacities of variable-size fields: `pkg/Type.field = N` and `pkg/Type.field/string = N`."""

    def __init__(self) -> None:
        self.caps: Dict[str, int] = {}

    def load(self, path: Path) -> None:
        for i, line in enumerate(path.read_text().splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            self.add(line, f"{path}:{i}")

    def add(self, item: str, where: str = "--bound") -> None:
        key, _, val = item.partition("=")
        key, val = key.strip(), val.strip()
        if not key or not val.isdigit() or int(val) <= 0 or "." not in key:
            raise ValueError(f"{where}: expected 'pkg/Type.field = N' with N > 0, got '{item}'")
        self.caps[key] = int(val)

    def string_cap(self, spec: MsgSpec, f: Field, in_array: bool) -> int:
        if f.string_bound is not None:
            return f.string_bound
        key = f"{_bounds_name(spec)}.{f.name}" + ("/string" if in_array else "")
        return self.caps.get(key, DEFAULT_STRING)

    def array_cap(self, spec: MsgSpec, f: Field) -> int:
        if f.length is not None:  # bounded T[<=N]
            return f.length
        return self.caps.get(f"{_bounds_name(spec)}.{f.name}", DEFAULT_ARRAY)


class CGen:
    def __init__(self, reg: Registry, bounds: Bounds):
        self.reg = reg
        self.bounds = bounds
        self.md5_cache: Dict[str, str] = {}

    # ---- types ----
    def elem_ctype(self, spec: MsgSpec, f: Field) -> str:
        if f.base in PRIMITIVES:
            return PRIMITIVES[f.base][0]
        if f.base == "time":
            return "takt_ros_time_t"
        if f.base == "duration":
            return "takt_ros_duration_t"
        if f.base == "string":
            return f"{cname(spec)}__{f.name}__string_t"
        return cname(f.base)

    def typedefs(self, spec: MsgSpec) -> List[str]:
        out = []
        for f in spec.fields:
            if f.base == "string":
                cap = self.bounds.string_cap(spec, f, f.array is not None)
                out.append(f"/** {f.name}: at most {cap} characters (plus a terminating NUL). */\n"
                           f"typedef struct {{\n  uint32_t size;\n  char data[{cap + 1}];\n}} "
                           f"{cname(spec)}__{f.name}__string_t;")
            if f.array == "var":
                cap = self.bounds.array_cap(spec, f)
                out.append(f"/** {f.name}: at most {cap} elements. */\n"
                           f"typedef struct {{\n  uint32_t size;\n  {self.elem_ctype(spec, f)} data[{cap}];\n}} "
                           f"{cname(spec)}__{f.name}__seq_t;")
        return out

    def member(self, spec: MsgSpec, f: Field) -> str:
        if f.array == "var":
            return f"  {cname(spec)}__{f.name}__seq_t {fname(f)};"
        if f.array == "fixed":
            return f"  {self.elem_ctype(spec, f)} {fname(f)}[{f.length}];"
        return f"  {self.elem_ctype(spec, f)} {fname(f)};"

    # ---- encoders ----
    def min_size(self, base: str, enc: str) -> int:
        """Smallest encoding of one element (for bounding counts read from the wire)."""
        if base in PRIMITIVES:
            return PRIMITIVES[base][1]
        if base in ("time", "duration"):
            return 8
        if base == "string":
            return 4
        total = 0
        spec = self.reg.msgs[base]
        for f in spec.fields if enc == "ros1" else spec.cdr_fields:
            n = f.length if f.array == "fixed" else 1
            if f.array == "var":
                total += 4
            else:
                total += n * self.min_size(f.base, enc)
        return total if enc == "ros1" else max(total, 1)

    def write_elem(self, spec: MsgSpec, f: Field, expr: str, enc: str, ind: str) -> List[str]:
        b = f.base
        if b in PRIMITIVES:
            size = PRIMITIVES[b][1]
            al = [f"{ind}takt_w_align(w, {size});"] if enc == "cdr" and size > 1 else []
            if b == "bool":
                return al + [f"{ind}takt_w_bool(w, &{expr});"]
            return al + [f"{ind}takt_w_put(w, &{expr}, {size});"]
        if b in ("time", "duration"):
            al = [f"{ind}takt_w_align(w, 4);"] if enc == "cdr" else []
            return al + [f"{ind}takt_w_put(w, &{expr}, 8);"]
        if b == "string":
            cap = self.bounds.string_cap(spec, f, f.array is not None)
            fits = f"{ind}if (!takt_w_fits(w, {expr}.size, {cap}u)) return;"
            if enc == "cdr":
                return [fits, f"{ind}takt_w_align(w, 4);", f"{ind}takt_w_u32(w, {expr}.size + 1);",
                        f"{ind}takt_w_put(w, {expr}.data, {expr}.size);", f"{ind}takt_w_u8(w, 0);"]
            return [fits, f"{ind}takt_w_u32(w, {expr}.size);", f"{ind}takt_w_put(w, {expr}.data, {expr}.size);"]
        return [f"{ind}{cname(b)}__{enc}_write(&{expr}, w);"]

    def bulk(self, f: Field) -> bool:
        """Arrays whose wire form is their memory (primitives but bool, time, duration)."""
        return (f.base in PRIMITIVES and f.base != "bool") or f.base in ("time", "duration")

    def write_field(self, spec: MsgSpec, f: Field, enc: str) -> List[str]:
        m = f"m->{fname(f)}"
        ind = "  "
        if f.array is None:
            return self.write_elem(spec, f, m, enc, ind)
        lines = []
        if f.array == "var":
            # the size as the caller set it: never trusted beyond the capacity (the struct's end)
            lines.append(f"{ind}if (!takt_w_fits(w, {m}.size, {self.bounds.array_cap(spec, f)}u)) return;")
            if enc == "cdr":
                lines.append(f"{ind}takt_w_align(w, 4);")
            lines.append(f"{ind}takt_w_u32(w, {m}.size);")
            count, data = f"{m}.size", f"{m}.data"
        else:
            count, data = f"{f.length}u", m
        if self.bulk(f):
            esize = PRIMITIVES[f.base][1] if f.base in PRIMITIVES else 8
            ealign = esize if f.base in PRIMITIVES else 4
            if enc == "cdr" and ealign > 1:
                lines.append(f"{ind}if ({count} > 0) takt_w_align(w, {ealign});")
            lines.append(f"{ind}takt_w_put_n(w, {data}, {count}, {esize});")
            return lines
        lines.append(f"{ind}for (uint32_t i = 0; i < {count}; i++) {{")
        lines += self.write_elem(spec, f, f"{data}[i]", enc, ind + "  ")
        lines.append(f"{ind}}}")
        return lines

    def read_elem(self, spec: MsgSpec, f: Field, expr: str, enc: str, ind: str) -> List[str]:
        b = f.base
        if b in PRIMITIVES:
            size = PRIMITIVES[b][1]
            al = [f"{ind}takt_r_align(r, {size});"] if enc == "cdr" and size > 1 else []
            if b == "bool":
                return al + [f"{ind}{expr} = takt_r_u8(r) != 0;"]
            return al + [f"{ind}takt_r_get(r, &{expr}, {size});"]
        if b in ("time", "duration"):
            al = [f"{ind}takt_r_align(r, 4);"] if enc == "cdr" else []
            return al + [f"{ind}takt_r_get(r, &{expr}, 8);"]
        if b == "string":
            cap = self.bounds.string_cap(spec, f, f.array is not None)
            if enc == "cdr":
                return [f"{ind}takt_r_align(r, 4);",
                        f"{ind}{{ uint32_t n = takt_r_u32(r);",
                        f"{ind}  if (!r->err && n == 0) r->err = TAKT_EMALFORMED;",
                        f"{ind}  n = takt_r_count(r, n > 0 ? n - 1 : 0, {cap}, 1);",
                        f"{ind}  takt_r_get(r, {expr}.data, n);",
                        f"{ind}  if (!r->err && takt_r_u8(r) != 0 && !r->err) r->err = TAKT_EMALFORMED;",
                        f"{ind}  {expr}.size = r->err ? 0 : n; {expr}.data[{expr}.size] = 0; }}"]
            return [f"{ind}{{ uint32_t n = takt_r_count(r, takt_r_u32(r), {cap}, 1);",
                    f"{ind}  takt_r_get(r, {expr}.data, n);",
                    f"{ind}  {expr}.size = r->err ? 0 : n; {expr}.data[{expr}.size] = 0; }}"]
        return [f"{ind}{cname(b)}__{enc}_read(&{expr}, r);"]

    def read_field(self, spec: MsgSpec, f: Field, enc: str) -> List[str]:
        m = f"m->{fname(f)}"
        ind = "  "
        if f.array is None:
            return self.read_elem(spec, f, m, enc, ind)
        lines = []
        if f.array == "var":
            cap = self.bounds.array_cap(spec, f)
            if enc == "cdr":
                lines.append(f"{ind}takt_r_align(r, 4);")
            lines.append(f"{ind}{m}.size = takt_r_count(r, takt_r_u32(r), {cap}, "
                         f"{self.min_size(f.base, enc)});")
            count, data = f"{m}.size", f"{m}.data"
        else:
            count, data = str(f.length), m
        if self.bulk(f):
            esize = PRIMITIVES[f.base][1] if f.base in PRIMITIVES else 8
            ealign = esize if f.base in PRIMITIVES else 4
            if enc == "cdr" and ealign > 1:
                lines.append(f"{ind}if ({count} > 0) takt_r_align(r, {ealign});")
            lines.append(f"{ind}takt_r_get(r, {data}, (uint32_t)({count} * {esize}u));")
            return lines
        lines.append(f"{ind}for (uint32_t i = 0; i < {count} && !r->err; i++) {{")
        lines += self.read_elem(spec, f, f"{data}[i]", enc, ind + "  ")
        lines.append(f"{ind}}}")
        return lines

    def rand_elem(self, spec: MsgSpec, f: Field, expr: str, ind: str) -> List[str]:
        b = f.base
        if b == "bool":
            return [f"{ind}{expr} = (takt_rand_u64(rng) & 1) != 0;"]
        if b in ("float32", "float64"):
            t = PRIMITIVES[b][0]
            return [f"{ind}{expr} = ({t})((double)(int64_t)(takt_rand_u64(rng) % 2000001) / 64.0 - 15625.0);"]
        if b in PRIMITIVES:
            return [f"{ind}{expr} = ({PRIMITIVES[b][0]})takt_rand_u64(rng);"]
        if b == "time":
            return [f"{ind}{expr}.sec = (uint32_t)takt_rand_u64(rng);",
                    f"{ind}{expr}.nsec = (uint32_t)(takt_rand_u64(rng) % 1000000000u);"]
        if b == "duration":
            return [f"{ind}{expr}.sec = (int32_t)takt_rand_u64(rng);",
                    f"{ind}{expr}.nsec = (int32_t)(takt_rand_u64(rng) % 1000000000u);"]
        if b == "string":
            cap = self.bounds.string_cap(spec, f, f.array is not None)
            lim = min(cap, 12)
            return [f"{ind}{expr}.size = (uint32_t)(takt_rand_u64(rng) % {lim + 1}u);",
                    f"{ind}for (uint32_t k = 0; k < {expr}.size; k++) "
                    f"{expr}.data[k] = (char)(32 + takt_rand_u64(rng) % 95);",
                    f"{ind}{expr}.data[{expr}.size] = 0;"]
        return [f"{ind}{cname(b)}__randomize(&{expr}, rng);"]

    def rand_field(self, spec: MsgSpec, f: Field) -> List[str]:
        m = f"m->{fname(f)}"
        ind = "  "
        if f.array is None:
            return self.rand_elem(spec, f, m, ind)
        lines = []
        if f.array == "var":
            cap = self.bounds.array_cap(spec, f)
            lim = min(cap, 32 if f.base in ("uint8", "int8", "char", "byte") else 5)
            lines.append(f"{ind}{m}.size = (uint32_t)(takt_rand_u64(rng) % {lim + 1}u);")
            count, data = f"{m}.size", f"{m}.data"
        else:
            count, data = str(f.length), m
        lines.append(f"{ind}for (uint32_t i = 0; i < {count}; i++) {{")
        lines += self.rand_elem(spec, f, f"{data}[i]", ind + "  ")
        lines.append(f"{ind}}}")
        return lines

    # ---- files ----
    def constant(self, spec: MsgSpec, c: Constant) -> str:
        n = f"{cname(spec)}__{const_name(c)}"
        if c.type == "string":
            return f"#define {n} {c_literal(str(c.value))}"
        if c.type == "bool":
            return f"#define {n} ((bool){1 if c.value else 0})"
        t = PRIMITIVES[c.type][0]
        if c.type in ("float32", "float64"):
            return f"#define {n} {float_literal(t, float(c.value))}"
        if c.value == -2**63:  # 9223372036854775808LL is out of range before the minus applies
            return f"#define {n} (({t})(-9223372036854775807LL - 1))"
        suffix = "ULL" if t.startswith("uint") else "LL"
        return f"#define {n} (({t}){c.value}{suffix})"

    def header(self, spec: MsgSpec, cpp: str) -> str:
        n = cname(spec)
        guard = f"TAKT_MSG_{n.upper()}_H"
        deps = sorted(set(spec.deps()))
        md5 = ros1.md5(self.reg, spec, self.md5_cache)
        lines = [f"/* {spec.full_name}: generated by `takt msggen` from {Path(spec.path).name}. Do not edit. */",
                 f"#ifndef {guard}", f"#define {guard}", "", "#include <stdbool.h>", "#include <stdint.h>", "",
                 '#include "takt/core.h"', '#include "takt/wire.h"']
        lines += [f'#include "{d}.h"' for d in deps]
        lines += ["", "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
        lines += [self.constant(spec, c) for c in spec.constants]
        lines += [""] + self.typedefs(spec) + [""]
        lines.append(f"typedef struct {n} {{")
        if spec.fields:
            lines += [self.member(spec, f) for f in spec.fields]
        else:
            lines.append("  uint8_t structure_needs_at_least_one_member; /* as ROS 2 does */")
        lines += [f"}} {n};", ""]
        lines += [f'#define {n}__NAME "{spec.full_name}"', f'#define {n}__MD5 "{md5}"',
                  f'#define {n}__DDS_NAME "{ros1.dds_type_name(spec)}"',
                  f"/** The full ROS 1 definition (TCPROS message_definition). */",
                  f"extern const char {n}__DEFINITION[];",
                  f"/** Type support for the core: ROS 1 encoding. */",
                  f"extern const takt_type_support_t {n}__type;",
                  f"/** Type support with the CDR encoding (ROS 2 over DDS). */",
                  f"extern const takt_type_support_t {n}__type_cdr;", "",
                  f"void {n}__init({n} *m);",
                  f"/** ROS 1: bytes needed; bytes written. Or a negative takt_err_t: TAKT_ESIZE when cap is too",
                  f" * small, or a string or array's size is more than its capacity. */",
                  f"int32_t {n}__ros1_size(const {n} *m);",
                  f"int32_t {n}__ros1_serialize(const {n} *m, uint8_t *buf, uint32_t cap);",
                  f"/** ROS 1: TAKT_OK, TAKT_EMALFORMED (truncated or trailing bytes) or TAKT_ESIZE (a string or",
                  f" * array longer than its capacity). Never reads or writes out of bounds. */",
                  f"takt_err_t {n}__ros1_deserialize({n} *m, const uint8_t *buf, uint32_t len);",
                  f"/** CDR (XCDR1 little endian) with its 4-byte encapsulation header; same contracts. */",
                  f"int32_t {n}__cdr_size(const {n} *m);",
                  f"int32_t {n}__cdr_serialize(const {n} *m, uint8_t *buf, uint32_t cap);",
                  f"takt_err_t {n}__cdr_deserialize({n} *m, const uint8_t *buf, uint32_t len);",
                  f"/* cursor forms, used when the type is nested */",
                  f"void {n}__ros1_write(const {n} *m, takt_wcur_t *w);",
                  f"void {n}__ros1_read({n} *m, takt_rcur_t *r);",
                  f"void {n}__cdr_write(const {n} *m, takt_wcur_t *w);",
                  f"void {n}__cdr_read({n} *m, takt_rcur_t *r);",
                  f"/** Fill with random values (tests; small sizes). */",
                  f"void {n}__randomize({n} *m, uint64_t *rng);", "",
                  "#ifdef __cplusplus", "}", "#endif", ""]
        if cpp:
            lines += ["#ifdef __cplusplus", cpp, "#endif", ""]
        lines += [f"#endif", ""]
        return "\n".join(lines)

    def source(self, spec: MsgSpec) -> str:
        n = cname(spec)
        full = ros1.full_text(self.reg, spec)
        md5 = ros1.md5(self.reg, spec, self.md5_cache)
        L = [f"/* {spec.full_name}: generated by `takt msggen`. Do not edit. */",
             f'#include "{spec.package}/{spec.short_name}.h"', "",
             f"const char {n}__DEFINITION[] = {c_literal(full)};", "",
             f"void {n}__init({n} *m) {{ memset(m, 0, sizeof *m); }}", ""]
        for enc in ("ros1", "cdr"):
            fields = spec.fields if enc == "ros1" else spec.cdr_fields
            L.append(f"void {n}__{enc}_write(const {n} *m, takt_wcur_t *w) {{")
            if not spec.fields:
                L.append("  (void)m;")
                if enc == "cdr":
                    L.append("  takt_w_u8(w, 0);")
                else:
                    L.append("  (void)w;")
            for f in fields:
                L += self.write_field(spec, f, enc)
            L += ["}", ""]
            L.append(f"void {n}__{enc}_read({n} *m, takt_rcur_t *r) {{")
            if not spec.fields:
                L.append("  (void)m;")
                if enc == "cdr":
                    L.append("  (void)takt_r_u8(r);")
                else:
                    L.append("  (void)r;")
            for f in spec.fields:
                if f not in fields:  # not on this wire (ROS 1's Header.seq in CDR): zero
                    L.append(f"  memset(&m->{fname(f)}, 0, sizeof m->{fname(f)});")
            for f in fields:
                L += self.read_field(spec, f, enc)
            L += ["}", ""]
        # counting stops at INT32_MAX bytes and serializing at the same, so a length always
        # fits the int32_t result (TAKT_ESIZE beyond)
        L += [f"int32_t {n}__ros1_size(const {n} *m) {{",
              "  takt_wcur_t w = {NULL, INT32_MAX, 0, 0, TAKT_OK};",
              f"  {n}__ros1_write(m, &w);", "  return w.err ? w.err : (int32_t)w.pos;", "}", "",
              f"int32_t {n}__ros1_serialize(const {n} *m, uint8_t *buf, uint32_t cap) {{",
              "  if (m == NULL || buf == NULL) return TAKT_EINVAL;",
              "  takt_wcur_t w = {buf, cap < INT32_MAX ? cap : INT32_MAX, 0, 0, TAKT_OK};",
              f"  {n}__ros1_write(m, &w);", "  return w.err ? w.err : (int32_t)w.pos;", "}", "",
              f"takt_err_t {n}__ros1_deserialize({n} *m, const uint8_t *buf, uint32_t len) {{",
              "  if (m == NULL || (buf == NULL && len > 0)) return TAKT_EINVAL;",
              "  takt_rcur_t r = {buf, len, 0, 0, TAKT_OK};",
              f"  {n}__ros1_read(m, &r);",
              "  if (!r.err && r.pos != len) r.err = TAKT_EMALFORMED; /* trailing bytes */",
              "  return r.err;", "}", "",
              f"int32_t {n}__cdr_size(const {n} *m) {{",
              "  takt_wcur_t w = {NULL, INT32_MAX, 4, 4, TAKT_OK};",
              f"  {n}__cdr_write(m, &w);", "  return w.err ? w.err : (int32_t)w.pos;", "}", "",
              f"int32_t {n}__cdr_serialize(const {n} *m, uint8_t *buf, uint32_t cap) {{",
              "  static const uint8_t encapsulation[4] = {0x00, 0x01, 0x00, 0x00}; /* CDR_LE */",
              "  if (m == NULL || buf == NULL) return TAKT_EINVAL;",
              "  takt_wcur_t w = {buf, cap < INT32_MAX ? cap : INT32_MAX, 0, 4, TAKT_OK};",
              "  takt_w_put(&w, encapsulation, 4);",
              f"  {n}__cdr_write(m, &w);", "  return w.err ? w.err : (int32_t)w.pos;", "}", "",
              f"takt_err_t {n}__cdr_deserialize({n} *m, const uint8_t *buf, uint32_t len) {{",
              "  if (m == NULL || (buf == NULL && len > 0)) return TAKT_EINVAL;",
              "  if (len < 4 || buf[0] != 0x00 || buf[1] != 0x01) return TAKT_EMALFORMED; /* CDR_LE only */",
              "  takt_rcur_t r = {buf, len, 4, 4, TAKT_OK};",
              f"  {n}__cdr_read(m, &r);",
              "  if (!r.err && len - r.pos > 3) r.err = TAKT_EMALFORMED; /* more than end padding */",
              "  return r.err;", "}", "",
              f"void {n}__randomize({n} *m, uint64_t *rng) {{"]
        if not spec.fields:
            L += ["  (void)rng;", "  m->structure_needs_at_least_one_member = 0;"]
        for f in spec.fields:
            L += self.rand_field(spec, f)
        L += ["}", ""]
        for enc, suffix in (("ros1", ""), ("cdr", "_cdr")):
            L += [f"static int32_t {n}__ts_ser{suffix}(const void *m, uint8_t *b, uint32_t c) {{",
                  f"  return {n}__{enc}_serialize((const {n} *)m, b, c);", "}",
                  f"static takt_err_t {n}__ts_de{suffix}(void *m, const uint8_t *b, uint32_t l) {{",
                  f"  return {n}__{enc}_deserialize(({n} *)m, b, l);", "}",
                  f"const takt_type_support_t {n}__type{suffix} = {{{n}__NAME, "
                  f"{n}__{'MD5' if enc == 'ros1' else 'DDS_NAME'}, (uint32_t)sizeof({n}), "
                  f"{n}__ts_ser{suffix}, {n}__ts_de{suffix}}};", ""]
        _ = md5
        return "\n".join(L)

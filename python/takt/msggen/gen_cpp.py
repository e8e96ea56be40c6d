"""C++ wrappers that read like roscpp messages (`std_msgs::String msg; msg.data = "hi";`): for each
C struct a C++ struct with the same layout, whose strings and arrays are bounded containers
(takt/msg.hpp), convertible to and from the C struct at no cost."""

from __future__ import annotations

from .gen_c import CGen, cname, const_name, fname
from .spec import PRIMITIVES, Field, MsgSpec


def _cpp_elem(gen: CGen, spec: MsgSpec, f: Field) -> str:
    if f.base in PRIMITIVES:
        return "bool" if f.base == "bool" else PRIMITIVES[f.base][0]
    if f.base == "time":
        return "takt::Time"
    if f.base == "duration":
        return "takt::Duration"
    if f.base == "string":
        return f"takt::String<{gen.bounds.string_cap(spec, f, f.array is not None)}>"
    return "::" + "::".join(f.base.split("/"))


def class_name(spec: MsgSpec, names) -> str:
    """The C++ struct's name: the message's, unless a member of it (names) has that name, which C++
    refuses in a class of that name (`uint8 Mode=1` in Mode.msg, as gencpp takes it); then
    <Type>_takt_, and the message's name a typedef of it (gencpp's is one too)."""
    return spec.short_name + "_takt_" if spec.short_name in names else spec.short_name


def cpp_block(gen: CGen, spec: MsgSpec) -> str:
    n = cname(spec)
    cls = class_name(spec, [const_name(c) for c in spec.constants] + [fname(f) for f in spec.fields])
    lines = ['#include "takt/msg.hpp"', "", f"namespace {spec.package.replace('/', '::')} {{",
             f"struct {cls} {{"]
    for c in spec.constants:
        ctype = "const char *" if c.type == "string" else ("bool" if c.type == "bool" else PRIMITIVES[c.type][0])
        lines.append(f"  static constexpr {ctype} {const_name(c)} = {n}__{const_name(c)};")
    for f in spec.fields:
        e = _cpp_elem(gen, spec, f)
        if f.array == "var":
            lines.append(f"  takt::Vector<{e}, {gen.bounds.array_cap(spec, f)}> {fname(f)};")
        elif f.array == "fixed":
            lines.append(f"  takt::Array<{e}, {f.length}> {fname(f)};")
        else:
            lines.append(f"  {e} {fname(f)}{{}};")
    if not spec.fields:
        lines.append("  uint8_t __takt_empty = 0;  // the C struct's structure_needs_at_least_one_member")
    # helpers in names no field or constant can have (they start with a letter): takt::datatype<T>(),
    # takt::md5sum<T>(), takt::definition<T>(), takt::type_support<T>(), takt::c_struct(m) call them
    lines += [f"  typedef {n} __takt_c_struct;",
              f"  static const char *__takt_datatype() {{ return {n}__NAME; }}",
              f"  static const char *__takt_md5sum() {{ return {n}__MD5; }}",
              f"  static const char *__takt_definition() {{ return {n}__DEFINITION; }}",
              f"  static const takt_type_support_t *__takt_type_support() {{ return &{n}__type; }}",
              "};", f"static_assert(sizeof({cls}) == sizeof({n}), \"layout of {spec.full_name}\");"]
    if cls != spec.short_name:
        lines.append(f"typedef {cls} {spec.short_name};")
    lines.append(f"}}  // namespace {spec.package.replace('/', '::')}")
    return "\n".join(lines)

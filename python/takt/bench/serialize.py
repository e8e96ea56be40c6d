"""`takt bench serialize`: the generated ROS 1 and CDR codecs beside memcpy of the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from takt import native
from takt.bench.common import command, machine, run_native, write_json, write_markdown

NAME = "serialize"
OPS = ("ros1_serialize", "ros1_deserialize", "cdr_serialize", "cdr_deserialize", "memcpy")


def run(quick: bool, out: Path) -> int:
    raw = run_native(native.program("msgs/takt-bench-serialize"), ["--quick"] if quick else [])
    rows = raw["rows"]
    by = {(r["message"], r["op"]): r for r in rows}
    messages = list(dict.fromkeys(r["message"] for r in rows))
    headline: Dict[str, object] = {}
    m = machine()
    md = ["# serialize: generated message codecs beside memcpy", "",
          f"Command: `takt bench serialize{' --quick' if quick else ''}` on {m['cpus']} CPUs ({m['cpu_model']}, "
          f"kernel {m['kernel']}), one thread, no other load. Each repetition runs every operation once, "
          "interleaved; `memcpy` copies the same number of bytes as the ROS 1 encoding (the floor). A sample "
          "of a small message (Header, Pose...) is the mean of 100 back-to-back operations, as the clock "
          "itself costs about 20 ns a read. "
          "Throughput = encoded bytes / p50 time.", "",
          "| message | bytes | operation | p50 ns | p99 ns | MB/s at p50 | p50 / memcpy |",
          "|---|---:|---|---:|---:|---:|---:|"]
    for msg in messages:
        floor = by[(msg, "memcpy")]["p50_ns"]
        key = msg.split()[0].split("/")[1]
        for op in OPS:
            r = by[(msg, op)]
            mbs = r["bytes"] / max(r["p50_ns"], 1) * 1e3
            ratio = r["p50_ns"] / max(floor, 1)
            md.append(f"| {msg} | {r['bytes']} | {op} | {r['p50_ns']} | {r['p99_ns']} | {mbs:.0f} | {ratio:.2f} |")
            if op != "memcpy":
                headline[f"{key}_{op}_over_memcpy"] = round(ratio, 2)
            headline[f"{key}_{op}_mb_s"] = round(mbs)
    md.append("")
    result = {"benchmark": NAME, "command": command(NAME, quick),
              "machine": m, "quick": quick, "failures": raw["failures"], "headline": headline, "rows": rows}
    write_json(out, NAME, result)
    write_markdown(out, NAME, md)
    return 0 if raw["failures"] == 0 else 1

"""`takt sizes --mcu`: every configuration cross-compiles for the Cortex-M4 and the table holds
together (each subsystem adds code, the complete configuration holds more than the core plus any
one subsystem, QoS and debug builds are larger, each of takt's own flags adds code, a µRT-like
firmware links less than the whole objects and no executor kind it does not name); and
takt_strerror without its sentences (TAKT_WITH_ERROR_STRINGS=0) gives the codes' names. Skipped
where the toolchain is not installed."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from takt import mcu_sizes

pytestmark = [pytest.mark.release_pass,  # pyproject.toml
              pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                                 reason="arm-none-eabi-gcc not installed (tools/deps.sh)")]


def test_footprint_table_on_cortex_m4(takt):
    r = takt("sizes", "--mcu", "--json", check=True)
    t = json.loads(r.stdout)
    assert "cortex-m4" in t["target"]
    rel, dbg = t["builds"]["release"], t["builds"]["debug"]
    for build in (rel, dbg):
        rows = build["rows"]
        core = rows["Core"]["qos_off"]["flash"]
        assert core > 1000
        for sub in ("Synchronization", "Publish-subscribe", "RPC"):
            assert rows[sub]["qos_off"]["flash"] > 0, sub
            assert rows["Complete"]["qos_off"]["flash"] > core + rows[sub]["qos_off"]["flash"] - 64
        assert rows["Complete"]["qos_on"]["flash"] > rows["Complete"]["qos_off"]["flash"]
        for name, part in build["extra"].items():
            assert part["flash"] > 0, name
    assert dbg["rows"]["Complete"]["qos_on"]["flash"] > rel["rows"]["Complete"]["qos_on"]["flash"]
    assert t["urt_table3"]["Complete"][2] == 11520
    for build in (rel, dbg):
        rows, extra = build["rows"], build["extra"]
        qos = rows["Complete"]["qos_on"]["flash"]
        # takt's own flags, off in the table's rows: each adds code, and together they make the
        # configuration the CMake build compiles
        own = [v["flash"] for k, v in extra.items() if "TAKT_WITH_" in k]
        assert len(own) == 3 and all(f > 0 for f in own)
        every = extra["complete with QoS and every takt flag (the CMake build)"]["flash"]
        assert abs(every - (qos + sum(own))) <= 64  # the flags barely interact (-Og: 4 bytes)
        # compiling out jitter and rate validation leaves out their code (not only refuses them)
        latency_only = extra["complete with QoS of latency only (no jitter, no rate validation)"]["flash"]
        assert rows["Complete"]["qos_off"]["flash"] < latency_only < qos - 500
        # the core's RAM on the MCU: the 16-entry table of deferred work (one copy, no threads)
        assert rows["Core"]["qos_off"]["ram"] < 1024
    # µRT's features as a firmware links them (sections garbage-collected): less than the whole
    # objects, and of the executors only tide and the shared code (the kinds it does not name stay
    # out: preempt and waitset alone are over 9 KB)
    for build in (rel, dbg):
        linked = build["linked"]
        assert 1000 < linked["core + timing"]["flash"] < build["rows"]["Complete"]["qos_on"]["flash"]
        assert 0 < linked["executors"]["flash"] < build["extra"]["tide executor (+ shared executor code)"]["flash"]
        assert linked["port"]["flash"] > 0
    # where µRT's figure is met (deterministic: the same compiler gives the same bytes)
    assert rel["rows"]["Synchronization"]["qos_off"]["flash"] <= t["urt_table3"]["Synchronization"][3]
    # the text form of the same measurement (one compile run for both: it takes half a minute)
    text = mcu_sizes.format_table(t)
    for row in ("Core", "Synchronization", "Publish-subscribe", "RPC", "Complete", "tide executor",
                "swi executor", "daemon + framing", "Cortex-M port", "as a firmware links them"):
        assert row in text
    assert f"{rel['rows']['Complete']['qos_on']['flash']:,}" in text
    # the per-entity table from the firmware in QEMU, where the main build made it
    if t["entities"] is not None:
        assert t["entities"]["pointer_bytes"] == 4
        names = [row["entity"] for row in t["entities"]["rows"]]
        assert "topic" in names and "subscription" in names
        assert "32-bit pointers" in text


def test_strerror_without_sentences(tmp_path):
    """A firmware that sets TAKT_WITH_ERROR_STRINGS=0 gets each code's name from takt_strerror."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler")
    root = mcu_sizes.repo_root()
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "takt/err.h"\n'
                    "int main(void) { for (int e = 1; e >= -22; e--) puts(takt_strerror(e)); return 0; }\n")
    exe = tmp_path / "strerror"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-DTAKT_WITH_ERROR_STRINGS=0",
                    f"-I{root / 'include'}", str(main), str(root / "src/port/err.c"), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "E?" and out[1] == "OK" and out[-1] == "E?"
    assert out[2:-1] == ["EINVAL", "ENAME", "EFULL", "ENOMEM", "ESIZE", "EEXIST", "ENOENT", "EAGAIN",
                         "EBUSY", "ETIMEDOUT", "ECANCELED", "ESTATE", "ETYPE", "EPERM", "EOS",
                         "ELATE", "ENOTSUP", "EMALFORMED", "ERANGE", "EKIND", "EPANIC"]


def test_firmware_flags_off_on_the_host(tmp_path):
    """The core compiled as a firmware without chains, trace points and error sentences: chains
    and traces are refused with TAKT_ENOTSUP, the rest (a node, a timer) works as before."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler")
    root = mcu_sizes.repo_root()
    srcs = ["src/port/err.c", "src/port/portable.c", "src/port/posix/port_posix.c",
            *[f for f in mcu_sizes.CORE_FILES if f.startswith("src/core/")],
            "src/core/trace.c", "src/timing/timing.c"]
    main = tmp_path / "main.c"
    main.write_text(r'''
#include <stdio.h>
#include <stdalign.h>
#include "takt/takt.h"
static void tick(takt_timer_t *t, const takt_timer_event_t *ev, void *u) { (void)t; (void)ev; (void)u; }
int main(void) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx; takt_node_t *node; takt_timer_t *tm; takt_chain_t *ch;
  if (takt_context_create(&cfg, &ctx) != TAKT_OK) return 1;
  if (takt_node_create(ctx, "n", &node) != TAKT_OK) return 2;
  if (takt_timer_create(node, "t", 1000000, 0, tick, NULL, NULL, &tm) != TAKT_OK) return 3;
  takt_callback_t *cb = takt_timer_callback(tm);
  printf("chain %s\n", takt_strerror(takt_chain_create(ctx, "c", &cb, 1, 0, &ch)));
  static alignas(8) unsigned char mem[1 << 16];
  takt_trace_config_t tc = {.max_threads = 1, .events_per_thread = 16};
  printf("trace %s\n", takt_strerror(takt_trace_start(ctx, &tc, mem, sizeof mem)));
  printf("destroy %s\n", takt_strerror(takt_timer_destroy(tm)));
  takt_context_destroy(ctx);
  return 0;
}
''')
    exe = tmp_path / "flags_off"
    flags = ["-DTAKT_WITH_CHAINS=0", "-DTAKT_WITH_TRACE=0", "-DTAKT_WITH_ERROR_STRINGS=0"]
    res = subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror", *flags,
                          f"-I{root / 'include'}", f"-I{root / 'src'}", str(main),
                          *[str(root / s) for s in srcs], "-o", str(exe), "-lpthread", "-lm"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split("\n")[:3] == ["chain ENOTSUP", "trace ENOTSUP", "destroy OK"]

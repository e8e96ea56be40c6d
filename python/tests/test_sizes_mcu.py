"""`takt sizes --mcu`: every configuration cross-compiles for the Cortex-M4 and the table holds
together (each subsystem adds code, the complete configuration holds more than the core plus any
one subsystem, QoS and debug builds are larger). Skipped where the toolchain is not installed."""
from __future__ import annotations

import json
import shutil

import pytest

from takt import mcu_sizes

pytestmark = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                                reason="arm-none-eabi-gcc not installed (tools/deps.sh)")


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
    # the text form of the same measurement (one compile run for both: it takes half a minute)
    text = mcu_sizes.format_table(t)
    for row in ("Core", "Synchronization", "Publish-subscribe", "RPC", "Complete", "tide executor",
                "swi executor", "daemon + framing", "Cortex-M port"):
        assert row in text
    assert f"{rel['rows']['Complete']['qos_on']['flash']:,}" in text
    # the per-entity table from the firmware in QEMU, where the main build made it
    if t["entities"] is not None:
        assert t["entities"]["pointer_bytes"] == 4
        names = [row["entity"] for row in t["entities"]["rows"]]
        assert "topic" in names and "subscription" in names
        assert "32-bit pointers" in text

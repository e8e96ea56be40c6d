#!/usr/bin/env python3
"""Two hosts over DDS (tests/CMakeLists.txt registers it as the ctest dds_two_hosts): two network
namespaces joined by a veth pair, made here and removed at the end, each running a takt-run
process whose system file has a `dds:` section pinned to its end of the pair (unicast peer: the
other end). Host A's timer publishes `ping`; host B's `relay` subscribes to it and publishes
`pong`; A's `back` subscribes to `pong`; the chain [tick, back] crosses both hosts and its
latency is reported in A's chain table and JSON. A's client `ask` calls B's service `lookup`
over DDS every 100 ms.

Midway B is killed (SIGKILL) and started again: A keeps running (exits 0), reports the gap as a
validation violation at the instant it starts (`back` is HARD with a rate constraint and
`on_violation: continue`: takt-run's validator thread watches the critical instant and prints the
violation; the system goes on) and re-discovers the new B (more
round trips than the first B could have carried, the second B relayed messages and served calls:
the calls lost with the first B expired and freed their slots).

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for `ip netns`); without them it says why and exits
77, which ctest reports as skipped.

  run_hosts.py --takt-run PATH
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77
PERIOD_MS = 20
DURATION_S = 9.0
B1_LIFE_S = 3.0  # the first B runs this long after A starts, then is killed
GAP_S = 1.5      # B is away this long


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


class Hosts:
    """Namespaces A and B, veth pair, addresses 10.<n>.0.1 and .2 (n from the pid: runs of
    several builds at once do not collide)."""

    def __init__(self) -> None:
        tag = os.getpid() % 10000
        self.ns = (f"takt_a{tag}", f"takt_b{tag}")
        self.veth = (f"tka{tag}", f"tkb{tag}")
        net = 100 + os.getpid() % 100
        self.addr = (f"10.{net}.77.1", f"10.{net}.77.2")
        self.made: list[str] = []

    def up(self) -> None:
        for ns in self.ns:
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
        sh("ip", "link", "add", self.veth[0], "netns", self.ns[0], "type", "veth", "peer",
           "name", self.veth[1], "netns", self.ns[1])
        for i in range(2):
            ex = ("ip", "netns", "exec", self.ns[i])
            sh(*ex, "ip", "addr", "add", f"{self.addr[i]}/24", "dev", self.veth[i])
            sh(*ex, "ip", "link", "set", self.veth[i], "up")
            sh(*ex, "ip", "link", "set", "lo", "up")

    def down(self) -> None:
        for ns in self.made:  # deleting a namespace deletes its end of the pair, and the pair
            sh("ip", "netns", "del", ns, check=False)
        self.made = []


def can_make_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "not root: creating network namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN"
    if shutil.which("ip") is None:
        return "no `ip` command (Debian iproute2, which tools/deps.sh installs)"
    probe = f"takt_probe{os.getpid()}"
    r = sh("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"`ip netns add` refused ({r.stderr.strip()}): no CAP_SYS_ADMIN/CAP_NET_ADMIN here"
    sh("ip", "netns", "del", probe, check=False)
    return None


def system_a(h: Hosts, domain: int) -> str:
    return f"""name: host_a
executor: preempt
scheduling: edf
duration_s: {DURATION_S}
topics:
  - {{name: ping, size: 64, slots: 8}}
  - {{name: pong, size: 64, slots: 8}}
nodes:
  - name: a
    timers:
      - {{name: tick, period_ms: {PERIOD_MS}, deadline_ms: 15, work_us: 20, publish: [ping]}}
    subscriptions:
      - {{name: back, topic: pong, work_us: 20, class: hard, rate_ms: 200, on_violation: continue}}
    clients:
      - {{name: ask, service: lookup, period_ms: 100}}
chains:
  - {{name: across, deadline_ms: 15, callbacks: [tick, back]}}
dds:
  domain: {domain}
  interface: {h.veth[0]}
  peers: [{h.addr[1]}]
  export: [{{topic: ping, priority: 10}}]
  import: [{{topic: pong, priority: 10}}]
  services: [{{name: lookup, direction: import, request_size: 8, response_size: 32}}]
"""


def system_b(h: Hosts, domain: int) -> str:
    return f"""name: host_b
executor: preempt
scheduling: edf
duration_s: 60
topics:
  - {{name: ping, size: 64, slots: 8}}
  - {{name: pong, size: 64, slots: 8}}
nodes:
  - name: b
    subscriptions:
      - {{name: relay, topic: ping, work_us: 20, publish: [pong]}}
    services:
      - {{name: lookup, request_size: 8, response_size: 32}}
dds:
  domain: {domain}
  interface: {h.veth[1]}
  peers: [{h.addr[0]}]
  import: [{{topic: ping, priority: 10}}]
  export: [{{topic: pong, priority: 10}}]
  services: [{{name: lookup, direction: export}}]
"""


def table_violations(out: str, name: str) -> int:
    """The violations column of a constrained subscription's row in takt-run's final table."""
    rows = out.split("constrained", 1)[-1].splitlines()
    for row in rows:
        cols = row.split()
        if cols and cols[0] == name and len(cols) >= 7:
            return int(cols[-2])
    return -1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--takt-run", required=True)
    args = ap.parse_args()
    why = can_make_namespaces()
    if why is not None:
        print(f"SKIPPED: {why}")
        return SKIP
    domain = 73
    hosts = Hosts()
    procs: list[subprocess.Popen] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="takt_hosts_") as tmp:
        d = Path(tmp)
        try:
            hosts.up()
            (d / "a.yaml").write_text(system_a(hosts, domain))
            (d / "b.yaml").write_text(system_b(hosts, domain))

            def run(i: int, name: str, json_out: str | None) -> subprocess.Popen:
                cmd = ["ip", "netns", "exec", hosts.ns[i], args.takt_run, str(d / name),
                       "--no-introspect"]
                if json_out:
                    cmd += ["--json", str(d / json_out)]
                out = open(d / f"{Path(name).stem}_{len(procs)}.out", "w")
                p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                     env={**os.environ, "TERM": "dumb"})
                procs.append(p)
                return p

            b1 = run(1, "b.yaml", None)
            time.sleep(0.5)
            a = run(0, "a.yaml", "a.json")
            time.sleep(B1_LIFE_S)
            b1.send_signal(signal.SIGKILL)  # B disappears without a word
            b1.wait(10)
            time.sleep(GAP_S)
            b2 = run(1, "b.yaml", "b2.json")
            rc_a = a.wait(DURATION_S + 30)
            b2.send_signal(signal.SIGINT)  # a stop signal: B2 ends cleanly and writes its JSON
            rc_b2 = b2.wait(30)
            a_out = (d / "a_1.out").read_text()
            print("--- host A ---\n" + a_out[-3000:])
            if rc_a != 0:
                failures.append(f"host A exited {rc_a}")
            if rc_b2 != 0:
                failures.append(f"the second host B exited {rc_b2}")
            ra = json.loads((d / "a.json").read_text())
            rb = json.loads((d / "b2.json").read_text())
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait(10)
            hosts.down()
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1

    def callback(r: dict, name: str) -> dict:
        cbs = r["callbacks"]
        if isinstance(cbs, dict):
            return cbs[name]
        return next(c for c in cbs if c["name"] == name)

    chain = next(c for c in ra["chains"] if c["name"] == "across")
    ticks = callback(ra, "tick")["runs"]
    back = callback(ra, "back")
    relay2 = callback(rb, "relay")["runs"]
    ask = callback(ra, "ask")
    served2 = callback(rb, "lookup")["runs"]
    b1_most = int((B1_LIFE_S + 0.5) * 1000 / PERIOD_MS) + 5
    print(f"ticks {ticks}, back {back['runs']}, chain count {chain['count']} p50 "
          f"{chain['p50_ns'] / 1e6:.3f} ms p99 {chain['p99_ns'] / 1e6:.3f} ms max "
          f"{chain['max_ns'] / 1e6:.3f} ms, second B relayed {relay2}, violations "
          f"{back.get('violations')}, calls answered {ask.get('answers')} (second B served {served2}, "
          f"refused {ask.get('refused')})")
    checks = [
        (ticks >= 0.8 * DURATION_S * 1000 / PERIOD_MS, "A's timer kept running"),
        (chain["count"] > 0 and chain["p50_ns"] > 0, "the chain across both hosts was measured"),
        (chain["count"] == back["runs"], "every round trip ended the chain"),
        (relay2 >= 50, "the second B was discovered by A and relayed its pings"),
        (back["runs"] > relay2 + 50, "round trips of the first B were measured as well"),
        (back["runs"] < ticks, "the pings sent while B was away never came back"),
        (back["runs"] > b1_most, "A re-discovered B: more round trips than the first B could carry"),
        (back.get("violations", {}).get("rate", 0) >= 1, "the gap is a rate violation of 'back'"),
        (table_violations(a_out, "back") >= 1, "A's table reports the violation of 'back'"),
        ("rate of 'back' on 'pong'" in a_out, "A printed the rate violation when the gap began"),
        (served2 >= 20 and ask.get("answers", 0) > served2,
         "A's client called B's service over DDS, answered by both Bs"),
    ]
    bad = [what for ok, what in checks if not ok]
    for ok, what in checks:
        print(("ok   " if ok else "FAIL ") + what)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Two takt processes share topics over a link: the agent hosts the middle callbacks of the micro
side's chains (examples/link_*.yaml), over UDP on loopback with ports chosen for the test."""

import json
import signal
import socket
import subprocess
import sys

from conftest import BUILD, REPO, wait_for


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_bound(port: int) -> bool:
    """Some socket of this machine is bound to UDP port (/proc/net/udp: no probe socket that could
    take the port from the process starting)."""
    want = f":{port:04X}"
    with open("/proc/net/udp") as f:
        return any(line.split()[1].endswith(want) for line in f.readlines()[1:])


def test_chains_cross_two_processes(tmp_path):
    a, m = free_port(), free_port()
    env_cmd = [sys.executable, "-m", "takt"]
    agent = subprocess.Popen(env_cmd + ["agent", str(REPO / "examples" / "link_agent.yaml"),
                                        "--link", f"uart=udp:127.0.0.1:{a}:127.0.0.1:{m}",
                                        "--peer-clock", "uart", "--rt-priority", "0", "--out", str(tmp_path / "agent")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the agent's socket is bound before the micro side sends (python and takt-run starting
        # take their time on a loaded machine)
        wait_for(lambda: udp_bound(a) or agent.poll() is not None, 20, f"the agent to bind UDP port {a}")
        assert udp_bound(a), f"the agent ended without binding UDP port {a}"
        micro = subprocess.run(
            [str(BUILD / "tools" / "takt-run"), str(REPO / "examples" / "link_micro.yaml"),
             "--duration", "1.5", "--quiet", "--rt-priority", "0", "--json", str(tmp_path / "micro.json"),
             "--link", f"uart=udp:127.0.0.1:{m}:127.0.0.1:{a}"], capture_output=True, text=True, timeout=60)
    finally:
        agent.send_signal(signal.SIGINT)  # an orderly stop: the agent writes its result and exits 0
        out, err = agent.communicate(timeout=30)
    assert micro.returncode == 0, micro.stderr
    assert agent.returncode == 0, err
    r = json.loads((tmp_path / "micro.json").read_text())
    link = r["links"][0]
    assert link["mode"] == "pods"
    assert link["forwarded"] > 0 and link["imported"] > 0
    for chain in r["chains"]:
        assert chain["count"] > 0, chain  # every chain went out, through the agent, and back
    agent_result = json.loads(next((tmp_path / "agent").glob("run_*.json")).read_text())
    agent_link = agent_result["links"][0]
    assert agent_link["imported"] >= link["forwarded"] - 3  # what was sent arrived
    # the agent mapped the micro side's clock (the same CLOCK_MONOTONIC here): the offset is the
    # least one-way time on loopback, never negative, well under a millisecond on an idle machine
    assert agent_link["peer_clock"] is True and link["peer_clock"] is False
    assert agent_link["peer_clock_known"] is True and link["peer_clock_known"] is False
    assert agent_link["peer_clock_estimates"] == 1 and agent_link["peer_clock_jumps"] == 0, agent_link
    assert 0 <= agent_link["peer_clock_offset_ns"] < 20_000_000, agent_link
    # the micro side's client called the agent's service across the link and got answers
    client = next(c for c in r["callbacks"] if c["name"] == "ask_plan")
    assert client["kind"] == "client" and client["service"] == "plan"
    assert client["answers"] > 0, client
    served = next(c for c in agent_result["callbacks"] if c["name"] == "plan")
    assert served["kind"] == "service" and served["runs"] >= client["answers"]


def test_link_errors_are_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10, publish: x}\n"
                   "links:\n  - name: l\n    spec: udp:1.2.3.4\n    export:\n      - {topic: x, entity: 1}\n"
                   "      - {topic: x, entity: 1}\n")
    proc = subprocess.run([str(BUILD / "tools" / "takt-run"), str(bad), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "bad.yaml:10:" in proc.stderr and "entity 1 of link 'l' is taken" in proc.stderr
    bad.write_text("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10, publish: x}\n"
                   "links:\n  - name: l\n    spec: tcp:nowhere\n")
    proc = subprocess.run([str(BUILD / "tools" / "takt-run"), str(bad), "--duration", "0.1",
                           "--quiet", "--rt-priority", "0"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "link 'l' (tcp:nowhere): invalid argument" in proc.stderr
    proc = subprocess.run([str(BUILD / "tools" / "takt-run"), str(bad), "--peer-clock", "uart",
                           "--duration", "0.1", "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"takt run: --peer-clock uart: {bad} has no link of that name"

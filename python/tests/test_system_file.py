"""Bad system descriptions: each gets one line naming file:line and what is wrong, exit != 0."""

import re

import pytest

GOOD = """
name: tiny
nodes:
  - name: a
    timers:
      - {name: tick, period_ms: 10, work_us: 5, publish: t1}
    subscriptions:
      - {name: sink, topic: t1, work_us: 5}
chains:
  - {name: c, deadline_ms: 5, callbacks: [tick, sink]}
"""

CASES = [
    # (yaml text, expected line, fragment of the message)
    ("nodes: [\n  {name: a\n", 3, "YAML"),
    ("name: x\nnodes:\n  - name: a\n    timers:\n      - {name: t, perod_ms: 10}\n", 5, "unknown key 'perod_ms'"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: fast}\n", 4, "period_ms must be a number"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t}\n", 4, "needs 'period_ms'"),
    ("name: x\n", 1, "needs 'nodes'"),
    ("nodes:\n  - name: 9lives\n", 2, "not a valid name"),
    ("executor: fifo\nnodes:\n  - name: a\n", 1,
     "executor must be 'tide', 'batch', 'preempt' or 'waitset'"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10, deadline_ms: 0}\n", 4,
     "deadline_ms must be greater than 0"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10, group: g}\n", 4,
     "no group named 'g'"),
    ("groups:\n  - {name: g, kind: parallel}\nnodes:\n  - name: a\n", 2,
     "kind must be 'exclusive' or 'reentrant'"),
    ("scheduling: rm\nnodes:\n  - name: a\n", 1, "scheduling must be 'fp' or 'edf'"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10, cpus: [0, 99]}\n", 4,
     "out of range"),
    ("nodes:\n  - name: a\n    fusions:\n      - {name: f, inputs: [x]}\n", 4,
     "a fusion needs at least two inputs"),
    ("nodes:\n  - name: a\n    cyclic:\n      - {name: c, period_ms: 10}\n", 4,
     "a cyclic timer needs 'inputs'"),
    ("nodes:\n  - name: a\n    fusions:\n      - {name: f, inputs: [x, x]}\n", 4,
     "listed twice"),
    ("nodes:\n  - name: a\n    clients:\n      - {name: c, service: nowhere, period_ms: 10}\n", 4,
     "client 'c': no service named 'nowhere'"),
    ("nodes:\n  - name: a\n    services:\n      - {name: s, request_size: 8}\n"
     "    clients:\n      - {name: c, service: s, period_ms: 10, request_size: 9}\n", 6,
     "sizes 9/64 differ from service 's' (8/64)"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10}\n"
     "links:\n  - name: l\n    spec: pty\n    services:\n      - {name: t, entity: 1, direction: export}\n",
     9, "exported service 't' is not a service of this system"),
    ("nodes:\n  - name: a\n    services:\n      - {name: s}\n"
     "links:\n  - name: l\n    spec: pty\n    services:\n      - {name: s, entity: 1, direction: up}\n",
     9, "direction must be 'import'"),
    # a link's topics and services share its entities, below the bridge's own (0x7FF0 up)
    ("nodes:\n  - name: a\n    services:\n      - {name: s}\n"
     "links:\n  - name: l\n    spec: pty\n    export: [{topic: x, entity: 3}]\n"
     "    services:\n      - {name: s, entity: 3, direction: export}\n",
     10, "entity 3 of link 'l' is taken (the export of 'x')"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10}\n"
     "links:\n  - name: l\n    spec: pty\n    import: [{topic: x, entity: 40000}]\n",
     8, "entity = 40000 is out of range [0, 32751]"),
    ("nodes:\n  - name: a\n    services:\n      - {name: s}\n    clients:\n      - {name: c, service: s, period_ms: 5}\n"
     "chains:\n  - {name: k, callbacks: [c]}\n", 8, "client 'c' cannot be a chain member"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: -1}\n", 4, "out of range"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 1}\n      - {name: t, period_ms: 2}\n",
     5, "defined twice"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 1}\n"
     "chains:\n  - {name: c, callbacks: [t, nope]}\n", 6, "no callback named 'nope'"),
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 1, publish: x}\n"
     "    subscriptions:\n      - {name: s, topic: y}\n"
     "chains:\n  - {name: c, callbacks: [t, s]}\n", 8, "does not subscribe"),
    ("nodes: 3\n", 1, "must be a list"),
    ("- just\n- a list\n", 1, "must be a mapping"),
    ("", 1, "empty file"),
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, class: soft}\n", 4,
     "soft subscription needs usefulness_zero_ms"),
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, class: hard, latency_ms: -2}\n",
     4, "latency_ms = -2 is out of range"),
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, class: urgent}\n", 4,
     "class must be one of none, soft, firm, hard"),
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, jitter_ms: 2}\n", 4,
     "constraints need a class"),
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, class: hard, on_violation: ignore}\n",
     4, "on_violation must be 'panic' or 'continue'"),
    # a key of another class would be ignored
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, class: firm, latency_ms: 5, on_violation: panic}\n",
     4, "on_violation is for class hard, not firm"),
    ("nodes:\n  - name: a\n    subscriptions:\n      - {name: s, topic: t, class: hard, latency_ms: 5, usefulness_zero_ms: 9}\n",
     4, "usefulness_zero_ms is for class soft, not hard"),
    # what only building the system finds, checked too (takt run would refuse it)
    ("executor: preempt\nnodes:\n  - name: a\n    timers:\n      - {name: tk, period_ms: 10, priority: 95}\n",
     5, "callback 'tk': priority 95 is outside the preempt executor's SCHED_FIFO range 1..80"),
    ("groups:\n  - {name: g, kind: reentrant}\nnodes:\n  - name: a\n    subscriptions:\n"
     "      - {name: s, topic: t, group: g, check: sequence}\n", 6,
     "check: sequence takes the jobs of 's' one at a time, but its group 'g' is reentrant"),
    # PoDS priorities go above the largest of the callbacks outside chains (a chain member's own is
    # replaced): said by name, not as "assigning PoDS priorities: invalid argument"
    ("nodes:\n  - name: a\n    timers:\n      - {name: t, period_ms: 10, publish: x, priority: 1000000}\n"
     "      - {name: u, period_ms: 10, priority: 999999}\n"
     "    subscriptions:\n      - {name: s, topic: x}\n"
     "chains:\n  - {name: c, callbacks: [t, s]}\n", 5,
     "callback 'u' has priority 999999: the chains' PoDS priorities go above it and need 2 more "
     "(at most 1000000); give callbacks outside chains priorities up to 999998"),
]


@pytest.mark.parametrize("text,line,fragment", CASES)
def test_bad_file_is_named_with_line(takt, write, text, line, fragment):
    path = write("bad.yaml", text)
    proc = takt("check", path)
    assert proc.returncode != 0
    msg = proc.stderr.strip()
    assert len(msg.splitlines()) == 1, msg
    m = re.match(r"^(.*bad\.yaml):(\d+)(:\d+)?: (.*)$", msg)
    assert m, msg
    assert int(m.group(2)) == line, msg
    assert fragment in m.group(4), msg


def test_good_file_checks(takt, write):
    proc = takt("check", write("good.yaml", GOOD), check=True)
    assert "2 callbacks, 1 chains" in proc.stdout


def test_missing_file(takt, tmp_path):
    for command in ("run", "check", "agent"):
        proc = takt(command, "nowhere.yaml")
        assert proc.returncode == 2
        assert proc.stderr.strip() == f"takt {command}: nowhere.yaml: no such file"
        proc = takt(command, tmp_path)
        assert proc.returncode == 2
        assert proc.stderr.strip() == f"takt {command}: {tmp_path}: is a directory, not a file"


def test_unknown_benchmark(takt):
    proc = takt("bench", "nope")
    assert proc.returncode == 2
    assert "unknown benchmark 'nope'" in proc.stderr


def test_bad_cli_arguments(takt, write):
    proc = takt("run", write("good.yaml", GOOD), "--executor", "fifo")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr

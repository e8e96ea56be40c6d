"""The benchmarks' shared helpers (python/takt/bench/common.py)."""

import os
import struct

from takt.bench.common import cpu_latency_held

DEV = "/dev/cpu_dma_latency"


def _current() -> int:
    with open(DEV, "rb") as f:
        return struct.unpack("i", f.read(4))[0]


def test_cpu_latency_held_requests_zero_while_the_block_runs():
    with cpu_latency_held() as held:
        if not held:  # not root, or no PM QoS device: says so rather than pretending
            assert not os.access(DEV, os.W_OK)
            return
        assert _current() == 0  # the kernel's aggregate of every request now open


def test_a_failed_benchmark_program_is_one_line_and_status_1(monkeypatch, capsys):
    # BenchFailed (a RuntimeError) went past `takt bench`, which caught ValueError only: a traceback
    from takt import cli
    from takt.bench import common, registry

    def fails(*args, **kwargs):
        raise common.BenchFailed("takt-bench-urt exited with status 3")

    monkeypatch.setattr(registry, "run", fails)
    assert cli.main(["bench", "urt", "--quick"]) == 1
    err = capsys.readouterr().err
    assert "takt bench urt: takt-bench-urt exited with status 3" in err and "Traceback" not in err

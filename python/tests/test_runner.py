"""The runner end to end: build the system, run it for a moment, write the JSON result."""

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_run_example_writes_result(takt, tmp_path):
    proc = takt("run", REPO / "examples" / "robot.yaml", "--duration", "0.5", "--quiet",
                "--rt-priority", "0", "--out", tmp_path / "out", check=True)
    result = json.loads((tmp_path / "out" / "run_robot_file.json").read_text())
    assert result["executor"] == "tide"
    assert [c["name"] for c in result["chains"]] == ["safety", "obstacle", "tracking"]
    for chain in result["chains"]:
        assert chain["count"] > 0
        assert 0 < chain["min_ns"] <= chain["p50_ns"] <= chain["p99_ns"] <= chain["max_ns"]
    prios = {c["name"]: c["priority"] for c in result["callbacks"]}
    # PoDS priorities: chain rank major, position minor; the unchained logger stays lowest
    assert prios["brake"] > prios["bumper_sample"] > prios["steer"] > prios["lidar_sample"]
    assert prios["logger"] == 0
    assert result["publish_errors"] == 0
    assert "result:" in proc.stdout


def test_executor_override(takt, tmp_path):
    takt("run", REPO / "examples" / "robot.yaml", "--executor", "batch", "--duration", "0.3",
         "--quiet", "--rt-priority", "0", "--out", tmp_path, check=True)
    result = json.loads((tmp_path / "run_robot_batch.json").read_text())
    assert result["executor"] == "batch"
    assert result["executor_stats"]["executed"] > 0


def test_bench_quick_writes_json_and_markdown(takt, tmp_path):
    takt("bench", "tide_overhead", "--quick", "--out", tmp_path, check=True)
    data = json.loads((tmp_path / "tide_overhead.json").read_text())
    assert data["failed_rounds"] == 0
    ops = {(r["executor"], r["op"]) for r in data["rows"]}
    assert ("tide", "timer_dispatch") in ops and ("batch", "message_dispatch") in ops
    for key in ("tide_timer_dispatch_growth", "batch_timer_dispatch_growth",
                "batch_over_tide_empty_round_at_max"):
        assert key in data["headline"]
    md = (tmp_path / "tide_overhead.md").read_text()
    assert "| entities | executor |" in md

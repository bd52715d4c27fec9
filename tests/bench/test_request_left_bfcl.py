"""``bench/request_left_bfcl.py`` in its quick mode: BFCL's ground truth played through the
rule, both of its errors counted."""

from __future__ import annotations

from bench.request_left_bfcl import main


def test_the_quick_run_counts_lost_steps_only_among_entries_of_several_calls(tmp_path):
    output = tmp_path / "request_left.json"
    report = main(["--quick", "--categories", "simple_python,parallel", "--output", str(output)])
    simple, parallel = report.categories
    assert (simple.category, simple.entries, simple.multi_call) == ("simple_python", 20, 0)
    assert simple.lost_step == 0 and simple.done_at_once > 0
    assert parallel.multi_call == parallel.entries == 20
    assert parallel.lost_step == len(parallel.lost_step_ids) <= parallel.multi_call
    assert output.read_text().startswith("{")

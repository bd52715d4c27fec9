"""bench.session_starts at a tiny size: both bursts run, every caller gets its reply, and
the ratio and percentiles come from the bursts."""

from __future__ import annotations

import json

from bench import session_starts


def test_session_starts_quick(tmp_path, capfd):
    report = session_starts.main(["--quick", "--output", str(tmp_path / "s.json")])
    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads((tmp_path / "s.json").read_text())
    durable, bare = report.bursts
    assert (durable.loop, bare.loop) == ("durable_loop", "bare_temporal")
    for burst in report.bursts:
        assert burst.replied == burst.sessions == 10 and burst.errors == 0, burst
        assert 0 < burst.first_reply_p50_s <= burst.first_reply_p99_s <= burst.wall_s
    assert report.ratio_durable_vs_bare == round(durable.starts_per_s / bare.starts_per_s, 2)


def test_percentiles():
    values = [float(v) for v in range(1, 101)]
    assert session_starts.percentile(values, 50) == 50.5
    assert session_starts.percentile(values, 99) == 99.01
    assert session_starts.percentile([2.0], 99) == 2.0
    assert session_starts.percentile([], 50) == 0.0

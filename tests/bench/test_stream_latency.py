"""Smoke test of ``bench.stream_latency`` in its --quick mode: every token reaches the caller
through every reader, the woken reader is woken, and the report is what it prints. The
latencies themselves are measured by the full runs (bench/results/stream_latency.json)."""

from __future__ import annotations

import json
import os

import pytest

from bench import stream_latency


def test_stream_latency_quick(tmp_path, capfd):
    pg_url = os.environ.get("DURABLE_LOOP_TEST_DB_URL")
    argv = ["--quick", "--output", str(tmp_path / "s.json")]
    report = stream_latency.main([*argv, "--pg-url", pg_url] if pg_url else argv)
    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads((tmp_path / "s.json").read_text())
    stores = {store.store: store for store in report.stores}
    assert set(stores) == ({"sqlite", "postgresql"} if pg_url else {"sqlite"})
    tokens = report.workload.tokens * report.workload.rounds
    for store in stores.values():
        readers = {reader.reader: reader for reader in store.readers}
        assert set(readers) == set(stream_latency.READERS[store.store])
        assert store.direct_samples == tokens * len(readers)
        for reader in readers.values():
            assert reader.samples == tokens
            assert reader.p95_ms >= reader.p50_ms > 0
        assert readers["woken"].wakes > 0
        assert readers["poll_50ms"].wakes == 0 and readers["poll_50ms"].polls > 0


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert stream_latency.percentile(values, 50) == 50.0
    assert stream_latency.percentile(values, 95) == 95.0
    assert stream_latency.percentile([7.0], 95) == 7.0
    assert stream_latency.percentile([], 50) == 0.0


def test_a_lost_token_fails_the_measurement():
    emitted = [0.0, 1.0, 2.0]
    assert stream_latency.latencies_ms({0: 1.5, 1: 2.25}, emitted, 2) == [500.0, 250.0]
    with pytest.raises(RuntimeError, match=r"tokens lost: \[1\]"):
        stream_latency.latencies_ms({0: 1.5}, emitted, 2)

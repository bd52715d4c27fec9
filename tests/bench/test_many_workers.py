"""bench.many_workers at a tiny size: the levels run, every message completes, and every
process's CPU is counted."""

from __future__ import annotations

import json

from bench import many_workers


def test_many_workers_quick(tmp_path, capfd):
    report = many_workers.main(["--quick", "--output", str(tmp_path / "m.json")])
    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads((tmp_path / "m.json").read_text())
    assert [level.workers for level in report.levels] == [1, 2]
    for level in report.levels:
        assert level.failed_messages == 0 and not level.errors, level
        assert level.turns == 2 * level.sessions * level.messages_per_session
        workers = [name for name in level.cpu_s if name.startswith("worker")]
        assert len(workers) == level.workers
        assert level.cpu_s["server"] > 0 and level.cpu_busy > 0
        assert 0 < level.machine_busy <= 1
        assert level.binds
    assert report.ratio_vs_one_worker[1] == 1.0
    assert report.store == "sqlite"


def test_binding_names_the_machine_cpu_only_when_the_cores_are_busy():
    cpu = {"worker1": 3.0, "server": 5.0, "driver": 1.0}
    busy = many_workers.binding(cpu, 0.5, 0.95)
    assert busy.startswith("machine CPU") and "50% by this" in busy and "server" in busy
    assert many_workers.binding(cpu, 0.4, 0.5).startswith("not CPU")


def test_cpu_of_processes_that_come_and_go():
    before = {1: 10.0, 2: 5.0}
    after = {1: 12.0, 3: 0.5}  # 2 ended, 3 started during the level
    assert many_workers.cpu_between(before, after) == 2.5

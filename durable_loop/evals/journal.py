"""A run's records written as they arrive, and a stopped run resumed from them.

Each finished run is appended to its report directory's ``runs.jsonl`` the moment it
ends, so a long run that is stopped or dies keeps what it measured: BFCL's whole
non-live set takes hours on 2 cores. ``durable-loop eval --resume DIR`` reads the file
back; the runs it holds are not run again, and the report written into ``DIR`` at the
end holds them beside the new ones. A record is the outcome of a finished run (its
session was scored); a run cut off mid-session has no record and runs again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from durable_loop.cli.errors import CliError
from durable_loop.evals.codes import EvalCode
from durable_loop.evals.runner import Job
from durable_loop.evals.schema import RunRecord

RUNS_FILE = "runs.jsonl"


@dataclass(frozen=True)
class RunKey:
    """What makes a run the same run again: a planned job and its record share it."""

    model: str
    profile: str
    strategy: str
    fallback: bool
    scenario: str
    entry: str | None
    trial: int

    def label(self) -> str:
        variant = f"{self.strategy}{' +fallback' if self.fallback else ''}"
        return (
            f"{self.model} / {self.profile} / {variant} / {self.entry or self.scenario} "
            f"#{self.trial}"
        )


def job_key(job: Job) -> RunKey:
    return RunKey(
        job.model,
        job.profile,
        job.strategy,
        job.fallback,
        job.scenario.name,
        job.scenario.entry,
        job.trial,
    )


def record_key(record: RunRecord) -> RunKey:
    return RunKey(
        record.model,
        record.profile,
        record.strategy,
        record.fallback,
        record.scenario,
        record.entry,
        record.trial,
    )


@contextmanager
def journal(
    directory: Path, kept: Sequence[RunRecord] = ()
) -> Iterator[Callable[[RunRecord], None]]:
    """``runs.jsonl`` holding ``kept`` (a resumed run's records) and opened for appending,
    and a writer of one flushed line per run. The kept records are written afresh, so a line
    a killed run cut off is gone before the next record follows it (appended to it, it would
    break the file for the next resume)."""
    path = directory / RUNS_FILE
    fresh = path.with_suffix(".jsonl.tmp")
    fresh.write_text("".join(record.model_dump_json() + "\n" for record in kept), encoding="utf-8")
    fresh.replace(path)
    with path.open("a", encoding="utf-8") as out:

        def write(record: RunRecord) -> None:
            out.write(record.model_dump_json() + "\n")
            out.flush()

        yield write


def recorded(directory: Path) -> list[RunRecord]:
    """The runs a report directory holds. A last line cut off by a killed run is left out
    (that run runs again); any other line that is not a record is an error."""
    path = directory / RUNS_FILE
    if not path.is_file():
        raise CliError(EvalCode.BAD_RESUME, f"--resume {directory}: no {RUNS_FILE} there")
    lines = path.read_text(encoding="utf-8").splitlines()
    records: list[RunRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(RunRecord.model_validate_json(line))
        except ValidationError as err:
            if number == len(lines):
                break
            first = err.errors()[0]["msg"]
            raise CliError(
                EvalCode.BAD_RESUME, f"{path}:{number} is not a run record ({first})"
            ) from None
    return records


@dataclass(frozen=True)
class Resumed:
    records: list[RunRecord]
    """The earlier runs, one per planned job they ran."""
    jobs: list[Job]
    """The planned jobs with no record yet."""


def resume(jobs: list[Job], records: list[RunRecord], source: Path) -> Resumed:
    """Split ``jobs`` into those ``records`` already ran and the rest. A record of a run
    this plan does not hold means the options differ from the run that wrote it, and the
    report would mix two runs: refused."""
    planned = {job_key(job) for job in jobs}
    stray = [record for record in records if record_key(record) not in planned]
    if stray:
        raise CliError(
            EvalCode.RESUME_MISMATCH,
            f"--resume {source}: {len(stray)} of its {len(records)} runs are not in this "
            f"run's plan (first: {record_key(stray[0]).label()}); resume with the options "
            "of the run that wrote it",
        )
    kept: dict[RunKey, RunRecord] = {}
    for record in records:
        kept.setdefault(record_key(record), record)
    return Resumed(
        records=list(kept.values()), jobs=[job for job in jobs if job_key(job) not in kept]
    )

"""The ``durable-loop`` console script: the CLI's commands plus the ones that live in the
layers on top of it (evals, chaos, demo), registered here by name so the CLI never imports
them, and none is imported before it runs."""

from durable_loop.cli.app import EVALUATION, OPERATIONS, add_command, app, run
from durable_loop.cli.lazy import Entry

for _entry in (
    Entry(
        "demo",
        "durable_loop.demo.command:demo_command",
        EVALUATION,
        "Run a real tool-calling session end to end (local model) and check its answer.",
    ),
    Entry(
        "eval",
        "durable_loop.evals.command:eval_command",
        EVALUATION,
        "Measure tool-calling reliability: scenarios through the real session workflow.",
    ),
    Entry(
        "route-bench",
        "durable_loop.evals.routing.command:route_bench",
        EVALUATION,
        "Measure routing: JSON and schema validity, accuracy, clarify rate, latency.",
    ),
    Entry(
        "chaos",
        "durable_loop.chaos.command:chaos",
        OPERATIONS,
        "Inject faults (worker and server kills, provider errors) and check every session.",
    ),
):
    add_command(_entry)


def main() -> None:
    run(app)

"""The ``durable-loop`` console script: the CLI's commands plus the ones that live in the
layers on top of it (evals, chaos, demo), registered here so the CLI never imports them."""

from durable_loop.chaos.command import chaos
from durable_loop.cli.app import app, run
from durable_loop.demo.command import demo_command
from durable_loop.evals.command import eval_command
from durable_loop.evals.routing.command import route_bench

app.command("chaos")(chaos)
app.command("demo")(demo_command)
app.command("route-bench")(route_bench)
app.command("eval")(eval_command)


def main() -> None:
    run(app)

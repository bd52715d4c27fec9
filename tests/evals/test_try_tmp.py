from durable_loop.evals.selection import SCENARIOS
from durable_loop.evals.behaviours import BEHAVIOURS
from tests.evals.kit import run_offline


async def test_try(loop_worker, store_url, scripted_llm):
    import time

    t = time.time()
    runs = []
    for b in BEHAVIOURS.values():
        runs.append((b.name, b.broken_under, list(SCENARIOS.values())))
        if b.fix:
            runs.append((b.name, b.fix, list(SCENARIOS.values())))
    recs = await run_offline(loop_worker, store_url, scripted_llm, runs)
    for k, r in recs.items():
        print(k, r.ok, r.failure, r.problems[:1])
    print("took", time.time() - t)

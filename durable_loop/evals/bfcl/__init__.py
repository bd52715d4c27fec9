"""BFCL (the Berkeley Function Calling Leaderboard) as a suite of ``durable-loop eval``:
each entry runs as a real session, its functions as tools, scored by BFCL's own checker."""

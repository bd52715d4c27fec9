"""Pure, deterministic building blocks of the tool loop.

Nothing in this package performs I/O or reads the clock, randomness or the environment,
so every module can be imported inside the Temporal workflow sandbox.
"""

"""The demo app: a calculator and a notebook, and a scripted-free session that uses them."""

"""Benchmarks: scripts that measure the project's speed, memory and agreement and print the
figures the docs quote, each beside its command.

Run each from the project root as a module, `python -m bench.NAME [--help]` (for example
`python -m bench.accuracy --pairs 2000`). The modules whose names start with an underscore are
what the scripts share: `_args` (common command-line options), `_data` (sentences and n-best
lists to time), `_server` (a gunicorn of the service on a free loopback port) and `_timing`
(latency percentiles, best-of-N timing, timing in a fresh process).
"""

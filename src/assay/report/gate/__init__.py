"""The gate: a run's numbers and the pass/fail it gates on.

`policy.py` holds the choices (mode, inconclusive, errors), `interval.py` the intervals,
`significance.py` the regression test against a baseline, `stats.py` the summary and the
decision. The report, the CLI and the Action all call these; nothing else decides the gate.
"""

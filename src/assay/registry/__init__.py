"""The registries of names a suite file may use: runtimes and user graders.

They sit below `suites/` (which checks a suite's `runtime:` and `graders:` against them
while it loads, so `assay validate` names a typo at its file and line) and above nothing
but `_util/` and `core/`: the agents and graders they name are imported only when a run
needs one, by module path, so reading suites never imports an agent or a grader.
"""

"""The registries of names a suite file may use: runtimes and user graders.

They sit below `suites/` (which checks a suite's `runtime:` and `graders:` against them
while it loads, so `assay validate` names a typo at its file and line) and above nothing
but `_util/` and `core/`: the agents and graders they name are imported only when a run
needs one, by module path, so reading suites never imports an agent or a grader.
`plugin_calls.py` is how a message about a plugin's mistake names the plugin and says
what it did, whatever kind of plugin it is.
"""

"""The OS sandbox and every process assay starts.

`processes.py` is the one module that starts a process (tests/project/test_import_rules.py
checks it); `bwrap.py` builds the bubblewrap argv, `exec_shim.py` is the sandbox's first program,
`launch.py` finds the program as Go would, `limits.py` and `exposure.py` say what a confined
process may use and see, `toolchains.py` which toolchains it is given, `git.py` how git runs
(one scrubbed environment, no user or system config).
"""

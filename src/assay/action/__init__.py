"""GitHub integration for `assay ci`: everything that talks to the Actions runner or the API.

```
environment   GITHUB_* / RUNNER_* variables        inputs       the Action's inputs (validated)
event         the payload and the run/skip decision changed_files PR files (API, git fallback)
decide        the decision as the Action's first step, before anything is installed
rest          read-only REST calls over urllib     input_text   raw input values, defaults
globs         trigger-paths matching               coverage     what trigger-paths misses
preflight     is there a key for the models?       problems     config errors as annotations
commands      the only writer of workflow commands (escaping, masking, output guard)
outputs       $GITHUB_OUTPUT and the job summary    annotations  failed cases on their suite file
comment       the sticky PR comment                 check_run    the "Evaluation Results" check
publish       all of the above for one report       github_api   the PyGithub client and its errors
baseline      the report a run is compared with (a path, or the default branch's artifact)
```

The decision (decide, event, changed_files, rest, globs, input_text, environment, outputs,
commands, problems) imports only the standard library, since it runs before assay's
dependencies are installed; publishing uses PyGithub. Nothing else in assay prints `::`
workflow commands.
"""

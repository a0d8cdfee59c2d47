"""GitHub integration for `assay ci`: everything that talks to the Actions runner or the API.

```
environment   GITHUB_* / RUNNER_* variables        inputs       the Action's inputs
event         the payload and the run/skip decision changed_files PR files (API, git fallback)
globs         trigger-paths matching               preflight    is there a key for the models?
commands      the only writer of workflow commands (escaping, masking, output guard)
outputs       $GITHUB_OUTPUT and the job summary    annotations  failed cases on their suite file
comment       the sticky PR comment                 check_run    the "Evaluation Results" check
publish       all of the above for one report       github_api   the PyGithub client and its errors
baseline      the report a run is compared with (a path, or the default branch's artifact)
```

Nothing else in assay prints `::` workflow commands.
"""

"""A plugin for assay's tests, found through its entry points
(`../assay_testplugin-0.1.0.dist-info`) when this directory is on the import path: no pip
install, and no change to assay's source.

It adds a model provider (`testplugin/<model>`, answered in process), a runtime (`oracle`,
an agent that asks that model whether to keep a candidate finding), a grader
(`no_todo_comments`) and a renderer (`plugin-digest.txt`).
"""

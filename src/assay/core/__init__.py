"""assay's core: the value types and facts every other package shares.

Everything in assay may import `assay.core`; `assay.core` imports nothing of assay (only
the standard library and pydantic, whose models are the report contract's own types).
Each fact lives in one module here:

| module | the fact |
|---|---|
| `kinds` | the case kinds |
| `statuses` | case, check and gate statuses |
| `severities` | the five severities, the words agents use for them, Warden's three-level scale |
| `usage` | token use and cost of model calls, and how they add up |
| `checks` | one graded assertion of a case |
| `findings` | a finding an agent reports, and the repo location it points at |
| `positions` | where in a user's file something is (`path:line:col`) |
| `shards` | `--shard I/N` |
| `files` | the names of the files a run writes |
| `paths` | whether a path stays inside its root |
| `text` | control characters, and text made safe to print |
| `placeholders` | the agent command's `{placeholder}` names |

The package's `__init__` imports nothing, so importing one fact costs only that module.
"""

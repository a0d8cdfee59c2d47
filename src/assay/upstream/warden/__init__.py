"""Warden's readers: YAML 1.2 and the static reader of its `.eval.ts` declarations."""

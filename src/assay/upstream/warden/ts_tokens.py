"""A tokenizer for TypeScript source, just enough to read literals and call shapes.

Comments and whitespace are dropped; strings, template literals without `${}` and
numbers (`120_000`, hex) carry their values (a template with `${}` is one token, which
`template_parts` splits); anything else is a name or punctuation.
It never raises: a character it has no use for (a regex body, say) is one punctuation
token, and the reader above it treats what it cannot read as "not a literal".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "template_parts", "tokenize", "unescape"]


@dataclass(frozen=True)
class Token:
    kind: str  # "str", "num", "name", "punct", "template"
    text: str
    value: str | int | float | None
    line: int
    col: int
    start: int
    """Offset of the token in the source (its end is start + len(text))."""


_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<str>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<template>`(?:[^`\\]|\\.)*`)
  | (?P<num>(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)n?)
  | (?P<name>[A-Za-z_$][\w$]*)
  | (?P<punct>=>|\.\.\.|\?\?|\|\||&&|[{}()\[\];,.:=+\-*/%<>!?&|^~@#])
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}


def _unquote(text: str) -> str:
    return unescape(text[1:-1])


def unescape(body: str) -> str:
    """The value of a string literal's (or a template chunk's) source text."""
    return re.sub(
        r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\n|.)",
        lambda m: _escape(m.group(1)),
        body,
    )


def _escape(code: str) -> str:
    if code.startswith("u{"):
        return chr(int(code[2:-1], 16))
    if code[0] in "ux" and len(code) > 1:
        return chr(int(code[1:], 16))
    if code == "\n":
        return ""  # a line continuation
    return _ESCAPES.get(code, code)


def _number(text: str) -> int | float | None:
    digits = text.replace("_", "")
    if digits.endswith("n"):
        return None  # a BigInt is not a number Warden passes
    try:
        if digits[:2].lower() == "0x":
            return int(digits, 16)
        if re.fullmatch(r"\d+", digits):
            return int(digits)
        return float(digits)
    except ValueError:
        return None


def template_parts(text: str) -> list[tuple[bool, str]]:
    """A template literal's source split into `(False, text)` chunks, their escapes read,
    and `(True, source)` of each `${...}` expression, in order."""
    body, parts, start, index = text[1:-1], [], 0, 0
    while index < len(body):
        if body[index] == "\\":
            index += 2
            continue
        if body.startswith("${", index):
            depth, end = 1, index + 2
            while end < len(body) and depth:
                depth += {"{": 1, "}": -1}.get(body[end], 0)
                end += 1
            parts += [(False, unescape(body[start:index])), (True, body[index + 2 : end - 1])]
            start = index = end
            continue
        index += 1
    parts.append((False, unescape(body[start:])))
    return parts


def tokenize(text: str) -> list[Token]:
    """The tokens of a TypeScript source, comments and whitespace dropped; never raises."""
    tokens: list[Token] = []
    position, line, line_start = 0, 1, 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:  # a character the reader has no use for (a regex body, unicode)
            kind, chunk = "punct", text[position]
        else:
            kind, chunk = match.lastgroup or "punct", match.group()
        value: str | int | float | None = None
        col = position - line_start + 1
        if kind == "str":
            value = _unquote(chunk)
        elif kind == "template":
            value = None if "${" in chunk else _unquote(chunk)
        elif kind == "num":
            value = _number(chunk)
        if kind not in ("space", "line_comment", "block_comment"):
            tokens.append(Token(kind, chunk, value, line, col, position))
        newlines = chunk.count("\n")
        if newlines:
            line += newlines
            line_start = position + chunk.rindex("\n") + 1
        position += len(chunk)
    return tokens

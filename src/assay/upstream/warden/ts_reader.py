"""Reading one TypeScript file statically: its top-level constants and calls' options.

`SourceReader` holds a file's tokens (`ts_tokens.py`). It knows the file's top-level
`const` / `let NAME = ...`, finds where an expression or a bracket ends, and reads the
`{key: value}` options of a call, each value worked out as a constant expression
(`ts_eval.py`) and kept with where it came from, for messages that name `file:line`.
What it is told of the names the file imports (`names`, zero-argument `calls`) stands in
for the modules it does not read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import SourcePosition
from assay.upstream.warden.ts_eval import JsValue, Undefined, Unknown, evaluate
from assay.upstream.warden.ts_tokens import Token

__all__ = ["CallOptions", "EvalValue", "SourceReader"]

_DECLARING = ("const", "let")
_NOTHING = ("undefined", "null")


@dataclass(frozen=True)
class EvalValue:
    value: JsValue
    """A string or a number (`undefined`, an unset `process.env` variable, is never kept)."""
    how: str
    """`literal`, or what it was worked out from (an imported name, `defaultEvalModel()`,
    `const NAME`, the expression's source)."""
    location: SourcePosition


@dataclass
class CallOptions:
    """A call's `{...}` options: the readable values, and what could not be evaluated."""

    index: int
    """Where the call's name is, in the tokens."""
    token: Token
    values: dict[str, EvalValue] = field(default_factory=dict)
    unread: list[tuple[str, Token, str, str]] = field(default_factory=list)
    """(key, token, source, reason) of each option that could not be evaluated."""


Call = Callable[[Mapping[str, str]], tuple[str, str]]
"""A zero-argument call the file imports: environ -> (its value, how it was chosen)."""


@dataclass
class SourceReader:
    path: Path
    text: str
    tokens: list[Token]
    environ: Mapping[str, str]
    names: Mapping[str, str] = field(default_factory=dict)
    """Names the file imports, with their values (Warden's `DEFAULT_EVAL_RUNTIME`)."""
    calls: Mapping[str, Call] = field(default_factory=dict)
    """Zero-argument calls the file imports (Warden's `defaultEvalModel()`)."""
    constants: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Top-level `const` / `let NAME = ...`: the token span of the value."""
    _values: dict[str, EvalValue | Unknown] = field(default_factory=dict)
    _resolving: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._read_constants()

    def location(self, token: Token) -> SourcePosition:
        return SourcePosition(self.path, token.line, token.col)

    def source(self, start: int, end: int) -> str:
        """The source text of tokens[start:end], its whitespace runs made one space."""
        first, last = self.tokens[start], self.tokens[end - 1]
        return " ".join(self.text[first.start : last.start + len(last.text)].split())

    def end_of(self, start: int) -> int:
        """Where the expression starting at `start` ends (a `,` `;` or closing bracket)."""
        end, depth = start, 0
        while end < len(self.tokens):
            text = self.tokens[end].text
            if depth == 0 and text in (",", ";", "}", ")", "]"):
                break
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
            end += 1
        return end

    def closing(self, opening: int) -> int:
        """The index of the bracket closing the one at `opening`."""
        depth = 0
        for index in range(opening, len(self.tokens)):
            text = self.tokens[index].text
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return index
        return len(self.tokens)

    def holder(self, index: int) -> str | None:
        """The top-level const whose value holds the token at `index`."""
        return next((n for n, (s, e) in self.constants.items() if s <= index < e), None)

    def names_in(self, span: tuple[int, int], name: str) -> bool:
        """Whether `name` is used (not as a property) between the tokens of `span`."""
        start, end = span
        return any(
            self.tokens[i].text == name and self.tokens[i - 1].text != "."
            for i in range(start + 1, end)
        )

    def value(self, start: int, end: int) -> EvalValue | Unknown:
        """The value of tokens[start:end], with where it came from."""
        parts = self.tokens[start:end]
        if not parts:
            return Unknown("no value")
        first = parts[0]
        if len(parts) == 1 and first.kind == "name" and first.text not in _NOTHING:
            return self.name_value(first)
        result = evaluate(parts, resolve=self._resolve, environ=self.environ)
        if isinstance(result, Unknown):
            return result
        if len(parts) == 1 and first.kind in ("str", "num", "template"):
            how = "literal"
        elif len(parts) == 3 and first.text in self.calls and parts[1].text == "(":
            how = self.calls[first.text](self.environ)[1]
        else:
            how = self.source(start, end)
        return EvalValue(result, how, self.location(first))

    def name_value(self, token: Token) -> EvalValue | Unknown:
        """A bare name: a top-level const (`const NAME`, or what it holds when that is an
        imported name) or an imported name."""
        name = token.text
        if name in self.constants:
            if name not in self._values:
                if name in self._resolving:
                    return Unknown(f"`{name}` is defined in terms of itself")
                self._resolving.add(name)
                self._values[name] = self.value(*self.constants[name])
                self._resolving.discard(name)
            inner = self._values[name]
            if isinstance(inner, Unknown):
                return Unknown(f"`{name}`: {inner.reason}")
            imported = inner.how in self.names or inner.how in self._call_hows()
            return EvalValue(
                inner.value, inner.how if imported else f"const {name}", inner.location
            )
        if name in self.names:
            return EvalValue(self.names[name], name, self.location(token))
        return Unknown(f"`{name}` is not a constant of this file")

    def call_options(self, index: int, wanted: tuple[str, ...]) -> CallOptions:
        """The `wanted` options of `call({...})` whose name is at `index`."""
        found = CallOptions(index, self.tokens[index])
        tokens = self.tokens
        if index + 2 >= len(tokens) or tokens[index + 2].text != "{":
            return found
        position = index + 3
        while position < len(tokens) and tokens[position].text != "}":
            token = tokens[position]
            if token.text == ",":
                position += 1
                continue
            if token.text == "...":
                position = self.end_of(position + 1)
                continue
            key = str(token.value if token.kind == "str" else token.text)
            if position + 1 < len(tokens) and tokens[position + 1].text == ":":
                start, position = position + 2, self.end_of(position + 2)
                value = self.value(start, position) if key in wanted else None
                source = self.source(start, position) if start < position else ""
            else:  # `{ model }` means `{ model: model }`
                value = self.name_value(token) if key in wanted else None
                source, position = token.text, position + 1
            if isinstance(value, Unknown):
                found.unread.append((key, token, source, value.reason))
            elif value is not None and not isinstance(value.value, Undefined):
                found.values[key] = value  # `undefined` is an option left out
        return found

    def _resolve(self, token: Token, called: bool) -> JsValue | Unknown:
        """A name's value, or with `called` the value of `name()`, for the evaluator."""
        if called:
            if token.text in self.calls:
                return self.calls[token.text](self.environ)[0]
            return Unknown(f"`{token.text}()` is a function call")
        named = self.name_value(token)
        return named if isinstance(named, Unknown) else named.value

    def _call_hows(self) -> set[str]:
        return {call(self.environ)[1] for call in self.calls.values()}

    def _read_constants(self) -> None:
        depth, tokens = 0, self.tokens
        for index, token in enumerate(tokens):
            if token.text in ("{", "(", "["):
                depth += 1
            elif token.text in ("}", ")", "]"):
                depth -= 1
            elif (
                depth == 0
                and token.text in _DECLARING
                and index + 2 < len(tokens)
                and tokens[index + 1].kind == "name"
            ):
                equals = index + 2
                if tokens[equals].text == ":":  # `const NAME: Type = ...`
                    while equals < len(tokens) and tokens[equals].text not in ("=", ";"):
                        equals += 1
                if equals < len(tokens) and tokens[equals].text == "=":
                    self.constants[tokens[index + 1].text] = (equals + 1, self.end_of(equals + 1))

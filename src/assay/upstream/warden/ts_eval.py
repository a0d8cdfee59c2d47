"""Constant TypeScript expressions, evaluated as Node would evaluate them (no Node).

What Warden's eval.ts files pass their discover calls and harnesses is often computed:
`CODE_REVIEW_RUN_TIMEOUT_MS + 60_000`, `` `${SKILLS}/code-review/SKILL.md` ``,
`process.env['WARDEN_SEMANTIC_CHUNK_EVAL_MODEL'] ?? defaultEvalModel()`. This reads
number and string literals, templates, `+ - * / %`, unary minus, parentheses, `??`, `||`,
`&&`, `process.env.NAME` / `process.env['NAME']`, and the suffixes `as T`, `satisfies T`
and `!`; a bare name, or a call without arguments, is asked of the caller (a top-level
const, a name Warden defines, its `defaultEvalModel()`).
Anything else (a call, a property, a value that is not a finite number or a string) is
`Unknown`, with the reason, and the caller says so as a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from assay.upstream.warden.ts_tokens import Token, template_parts, tokenize

__all__ = ["UNDEFINED", "JsValue", "Undefined", "Unknown", "evaluate", "js_text"]


class Undefined:
    """JavaScript's `undefined` (and `null`): an unset `process.env.NAME`."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = Undefined()
JsValue = str | int | float | Undefined


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be worked out without running the code, and why."""

    reason: str


Value = JsValue | Unknown
NameResolver = Callable[[Token, bool], Value]
"""`(name, called)`: a bare name's value, or with `called` the value of `name()`."""

_TYPE_MODIFIERS = frozenset({"keyof", "typeof", "readonly", "unique"})


def evaluate(
    tokens: Sequence[Token], *, resolve: NameResolver, environ: Mapping[str, str]
) -> Value:
    """The value of the expression made of exactly `tokens`."""
    if not tokens:
        return Unknown("no value")
    parser = _Parser(list(tokens), resolve, environ)
    value = parser.expression()
    if parser.index < len(tokens) and not isinstance(value, Unknown):
        return Unknown(f"`{tokens[parser.index].text}` is not part of a constant expression")
    return value


def js_text(value: JsValue) -> str:
    """`String(value)`: what `+` and a template make of a value."""
    if isinstance(value, str):
        return value
    if isinstance(value, Undefined):
        return "undefined"
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e21):
        return str(int(value))
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text, k = "".join(map(str, digits)), len(digits)
    n = k + int(exponent)  # value = 0.<digits> * 10^n
    minus = "-" if sign else ""
    if 0 < n <= 21:
        return minus + (text + "0" * (n - k) if k <= n else f"{text[:n]}.{text[n:]}")
    if -6 < n <= 0:
        return f"{minus}0.{'0' * -n}{text}"
    mantissa = text[0] + (f".{text[1:]}" if k > 1 else "")
    return f"{minus}{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def _number(value: float) -> int | float | Unknown:
    """A result as JavaScript's one number type holds it: whole values as int."""
    if isinstance(value, int):
        if abs(value) < 2**53:
            return value
        try:
            value = float(value)  # as Node holds it: a double
        except OverflowError:
            return Unknown("the result is Infinity, not a finite number")
    if not math.isfinite(value):
        return Unknown(f"the result is {value}, not a finite number")
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _nullish(value: JsValue) -> bool:
    return isinstance(value, Undefined)


def _truthy(value: JsValue) -> bool:
    return not (isinstance(value, Undefined) or value == "" or value == 0)


@dataclass
class _Parser:
    tokens: list[Token]
    resolve: NameResolver
    environ: Mapping[str, str]
    index: int = 0

    def peek(self, offset: int = 0) -> str | None:
        at = self.index + offset
        return self.tokens[at].text if at < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expression(self) -> Value:
        left = self.logical("||")
        while self.peek() == "??":
            self.index += 1
            right = self.logical("||")
            if not isinstance(left, Unknown):
                left = right if _nullish(left) else left
        return left

    def logical(self, operator: str) -> Value:
        left = self.logical("&&") if operator == "||" else self.additive()
        while self.peek() == operator:
            self.index += 1
            right = self.logical("&&") if operator == "||" else self.additive()
            if not isinstance(left, Unknown):
                keep_left = _truthy(left) if operator == "||" else not _truthy(left)
                left = left if keep_left else right
        return left

    def additive(self) -> Value:
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            operator = self.take().text
            left = _binary(operator, left, self.multiplicative())
        return left

    def multiplicative(self) -> Value:
        left = self.unary()
        while self.peek() in ("*", "/", "%"):
            operator = self.take().text
            left = _binary(operator, left, self.unary())
        return left

    def unary(self) -> Value:
        if self.peek() in ("-", "+"):
            operator = self.take().text
            operand = self.unary()
            if isinstance(operand, Unknown):
                return operand
            if not isinstance(operand, int | float):
                return Unknown(f"unary {operator} of {js_text(operand)!r}, not a number")
            return -operand if operator == "-" else operand
        return self.postfix()

    def postfix(self) -> Value:
        value = self.primary()
        while True:
            if self.peek() == "!" and self.peek(1) != "=":  # a non-null assertion
                self.index += 1
            elif self.peek() in ("as", "satisfies"):
                self.index += 1
                self.skip_type()
            else:
                return value

    def primary(self) -> Value:
        if self.index >= len(self.tokens):
            return Unknown("the expression ends too early")
        token = self.take()
        if token.kind in ("str", "num") and token.value is not None:
            return _number(token.value) if isinstance(token.value, int | float) else token.value
        if token.kind == "num":
            return Unknown(f"{token.text} is a BigInt, not a number")
        if token.kind == "template":
            return self.template(token)
        if token.text == "(":
            value = self.expression()
            if self.peek() != ")":
                return Unknown("unbalanced parentheses")
            self.index += 1
            return value
        if token.kind != "name":
            return Unknown(f"`{token.text}` is not part of a constant expression")
        if token.text in ("undefined", "null"):
            return UNDEFINED
        if token.text == "process" and self.peek() == "." and self.peek(1) == "env":
            self.index += 2
            return self.environment()
        if self.peek() == "(" and self.peek(1) == ")":
            self.index += 2
            return self.resolve(token, True)
        if self.peek() in ("(", ".", "["):
            return Unknown(self.not_constant(token.text))
        return self.resolve(token, False)

    def not_constant(self, name: str) -> str:
        """Why `name` followed by `(`, `.` or `[` has no value without running the code."""
        after = self.peek()
        if after == "(":
            return f"`{name}(...)` is a function call"
        if after == "." and self.peek(1) is not None:
            return f"`{name}.{self.peek(1)}` is a property"
        return f"`{name}[...]` is an element"

    def environment(self) -> Value:
        """`process.env` has just been read: `.NAME` or `['NAME']` follows."""
        if self.peek() == "." and self.index + 1 < len(self.tokens):
            name = self.tokens[self.index + 1]
            self.index += 2
        elif self.peek() == "[" and self.peek(2) == "]":
            name = self.tokens[self.index + 1]
            self.index += 3
            if name.kind != "str":
                return Unknown("process.env[...] with a computed name")
        else:
            return Unknown("process.env without a variable name")
        key = name.value if name.kind == "str" else name.text
        value = self.environ.get(str(key))
        return UNDEFINED if value is None else value

    def template(self, token: Token) -> Value:
        text = ""
        for is_expression, chunk in template_parts(token.text):
            if not is_expression:
                text += chunk
                continue
            value = evaluate(tokenize(chunk), resolve=self.resolve, environ=self.environ)
            if isinstance(value, Unknown):
                return value
            if isinstance(value, Undefined):
                return Unknown(f"`${{{chunk.strip()}}}` is undefined")
            text += js_text(value)
        return text

    def skip_type(self) -> None:
        """Step over the type after `as` / `satisfies`: it changes no value."""
        self.skip_type_part()
        while self.peek() in ("|", "&"):
            self.index += 1
            self.skip_type_part()

    def skip_type_part(self) -> None:
        if self.peek() in ("|", "&"):
            self.index += 1
        while self.peek() in _TYPE_MODIFIERS:
            self.index += 1
        if self.peek() in ("(", "{", "["):
            self.skip_balanced()
        elif self.index < len(self.tokens):
            self.index += 1
            while self.peek() == "." and self.index + 1 < len(self.tokens):
                self.index += 2
            if self.peek() == "<":
                self.skip_balanced()
        while self.peek() == "[" and self.peek(1) == "]":
            self.index += 2

    def skip_balanced(self) -> None:
        closing = {"(": ")", "{": "}", "[": "]", "<": ">"}
        stack = [closing[self.take().text]]
        while stack and self.index < len(self.tokens):
            text = self.take().text
            if text in closing:
                stack.append(closing[text])
            elif text == stack[-1]:
                stack.pop()


def _binary(operator: str, left: Value, right: Value) -> Value:
    if isinstance(left, Unknown):
        return left
    if isinstance(right, Unknown):
        return right
    for side in (left, right):
        if isinstance(side, Undefined):
            return Unknown(f"{operator} on an undefined value (an unset process.env variable?)")
    if operator == "+" and (isinstance(left, str) or isinstance(right, str)):
        return js_text(left) + js_text(right)
    if not isinstance(left, int | float) or not isinstance(right, int | float):
        return Unknown(f"{operator} on a string")
    if operator in ("/", "%") and right == 0:
        return Unknown(f"{operator} by zero")
    if operator == "+":
        return _number(left + right)
    if operator == "-":
        return _number(left - right)
    if operator == "*":
        return _number(left * right)
    if operator == "/":
        return _number(left / right)
    return _number(math.fmod(left, right))  # JavaScript's % keeps the dividend's sign

"""Finding a secret's forms in text through invisible characters, and masking them.

The rule: a form matches wherever its characters appear in order with nothing between
them but runs of `core.text.INVISIBLE_CHARACTERS` (control and format characters), and the
whole span, those characters included, is replaced. So a key printed with a BEL, an
ESC, a CR, a zero-width space or a right-to-left override inside is masked as the key it
reads as once a terminal, GitHub or a Markdown renderer drops them, while text around
a secret keeps its line breaks and everything else.

Looking is cheap: the text's printable ASCII characters are searched for each form's
(`bytes in`, linear), and only a form found there is matched with its pattern. Text that
comes in pieces is cut only where no match can cross (`uncrossed_cut`): behind the cut
stay the last characters that could still begin a match, counted in visible characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from assay.core.text import INVISIBLE_CHARACTERS

__all__ = ["found_forms", "holds_any", "mask_forms", "uncrossed_cut", "visible_start"]

_GAP = f"[{INVISIBLE_CHARACTERS}]*"


@lru_cache(maxsize=512)
def _pattern(form: str) -> re.Pattern[str]:
    """`form` with any run of invisible characters allowed between two of its characters."""
    return re.compile(_GAP.join(re.escape(character) for character in form))


def found_forms(text: str, forms: Sequence[str]) -> list[str]:
    """The `forms` (stripped of invisible characters) that may match in `text`, in their
    order: each whose printable ASCII characters appear in `text`'s, in a row.

    Every invisible character is a control character below 0x80 or encodes to bytes of
    0x80 and over, so taking all of those out (a byte translation: the regular expression
    of invisible characters scans about ten times slower) keeps every match whole; a
    visible non-ASCII character next to a form costs a pattern match, never a miss.
    """
    if text.isascii():  # str.translate has a fast path for ASCII, and makes one copy
        flat_text = text.translate(_ASCII_CONTROL)
        return [form for form in forms if _printable(form)[0] in flat_text]
    flat = text.encode("utf-8", "surrogatepass").translate(None, _NOT_ASCII_PRINTABLE)
    return [form for form in forms if _printable(form)[1] in flat]


_ASCII_CONTROL = dict.fromkeys([*range(0x20), 0x7F])
_NOT_ASCII_PRINTABLE = bytes([*range(0x20), *range(0x7F, 0x100)])


@lru_cache(maxsize=4096)
def _printable(form: str) -> tuple[str, bytes]:
    """`form`'s printable ASCII characters, as text and as bytes."""
    flat = form.encode("utf-8", "surrogatepass").translate(None, _NOT_ASCII_PRINTABLE)
    return flat.decode("ascii"), flat


def holds_any(text: str, forms: Sequence[str]) -> bool:
    """Whether any of `forms` matches in `text`."""
    return any(_pattern(form).search(text) for form in found_forms(text, forms))


def mask_forms(text: str, forms: Sequence[str], mask: str) -> str:
    """`text` with every match of `forms` replaced by `mask`, one form after another in
    the order given (longest first, so a secret holding another is masked whole)."""
    for form in found_forms(text, forms):
        text = _pattern(form).sub(lambda _: mask, text)
    return text


@lru_cache(maxsize=64)
def _visible_run(count: int) -> re.Pattern[str]:
    """`count` visible characters, each after any invisible ones (read backwards)."""
    return re.compile(f"(?:[{INVISIBLE_CHARACTERS}]*[^{INVISIBLE_CHARACTERS}]){{{count}}}")


def visible_start(text: str, end: int, count: int) -> int:
    """Where the last `count` visible characters of `text[:end]` begin (0 when it has fewer)."""
    if count <= 0:
        return end
    window = 4 * count + 64
    while True:
        begin = max(end - window, 0)
        found = _visible_run(count).match(text[begin:end][::-1])
        if found is not None:
            return end - found.end()
        if begin == 0:
            return 0
        window *= 4


def uncrossed_cut(text: str, forms: Sequence[str]) -> int:
    """The largest position at which `text` may be masked apart from what follows it:
    every match that could continue into later text starts at or after it, and no match
    within `text` crosses it."""
    longest = max(map(len, forms))
    cut = visible_start(text, len(text), longest - 1)
    while True:
        # a match crossing the cut holds fewer than `longest` visible characters before it
        near = found_forms(text[visible_start(text, cut, longest - 1) :], forms)
        crossing = [
            match.start()
            for form in near
            # a match of `form` starting here or later, and before the cut, crosses it
            if (match := _pattern(form).search(text, visible_start(text, cut, len(form) - 1)))
            and match.start() < cut
        ]
        if not crossing:
            return cut
        cut = min(crossing)

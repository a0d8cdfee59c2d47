"""URL slugs and short previews."""

from __future__ import annotations

import re
import unicodedata

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _ascii_fold(text: str) -> str:
    """Replace accented Latin letters by their base letter ("é" -> "e", "Å" -> "A").

    NFKD splits a letter from its combining accents; dropping the combining marks leaves
    the base letter. Characters without an ASCII base (symbols, CJK) are kept as they are
    and become separators in `slugify`.
    """
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def slugify(text: str, *, max_length: int = 80, separator: str = "-") -> str:
    """Lower-case `text` and join its words with `separator`, for use in URLs.

    Accented letters are transliterated to their ASCII base letter; anything else that is
    not an ASCII letter or digit separates words. The result never starts or ends with the
    separator and is at most `max_length` characters long.
    """
    slug = _NON_ALNUM.sub(separator, _ascii_fold(text).lower()).strip(separator)
    if len(slug) > max_length:
        slug = slug[:max_length].rstrip(separator)
    return slug


def truncate_words(text: str, limit: int, *, ellipsis: str = "...") -> str:
    """Shorten `text` to at most `limit` characters, cutting at a word boundary."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - len(ellipsis), 0)]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + ellipsis

"""report.html keeps transcripts encoded until the page is written, and the page is the
same as when they were held as values."""

from __future__ import annotations

from typing import Any

from assay.report.html import embed_json
from assay.report.html_data import EncodedJSON


def test_an_encoded_value_is_written_as_the_value_itself() -> None:
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "caf\u00e9 </script> & \u2028"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "input": {"n": 1.5, "ok": None}}]},
        "\x00looks:0\x00 like a marker",
    ]
    plain = {"cases": [{"messages": messages, "error": None}, {"messages": []}]}
    encoded = {"cases": [{"messages": EncodedJSON(messages), "error": None}, {"messages": []}]}
    assert str(embed_json(encoded)) == str(embed_json(plain))


def test_data_shaped_like_a_placeholder_is_left_as_data() -> None:
    # The exact shape embed_json marks an encoded value with, but another call's token.
    lookalike = "\x00" + "0123456789abcdef" + ":0\x00"
    plain = {"a": [1, 2], "b": lookalike}
    encoded = {"a": EncodedJSON([1, 2]), "b": lookalike}
    assert str(embed_json(encoded)) == str(embed_json(plain))
    assert "\\u00000123456789abcdef:0\\u0000" in str(embed_json(encoded))


def test_anything_else_that_is_not_json_is_still_refused() -> None:
    try:
        embed_json({"x": object()})
    except TypeError as exc:
        assert "not JSON serializable" in str(exc)
    else:
        raise AssertionError("an object was encoded")

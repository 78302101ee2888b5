"""kb serve refuses, in its own words, a number the library's JSON parser would refuse in
its words ("Invalid JSON: number out of range at line 1 column 4431"). The integer check
counted integers only: a number with a fraction or an exponent whose whole part is longer
than 4,300 characters (sign included) is read by Python's float() and refused by the
library all the same. Real `kb serve` over real pipes."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import copy_demo
from test_faults_hardening_index import _RawServer


def _reply_to(tmp_path: Path, top: bytes) -> dict:
    """The reply to a kb_route call whose `top` is written as `top`; the server still up after."""
    line = (b'{"jsonrpc": "2.0", "id": "f1", "method": "tools/call", "params": {"name": "kb_route",'
            b' "arguments": {"question": "deploy", "top": ' + top + b"}}}")
    s = _RawServer(copy_demo(tmp_path / "demo"))
    try:
        assert "result" in s.initialize()
        s.send(line)
        reply = s.reply()
        assert s.call({"jsonrpc": "2.0", "id": 2, "method": "ping"})["id"] == 2  # still up
    finally:
        err = s.end()
    assert "Traceback" not in err, err[-3000:]
    return reply


@pytest.mark.parametrize("big, digits", [(b"9" * 4_400 + b".5", "4,400"), (b"-" + b"9" * 4_300 + b"e5", "4,300"),
                                         (b"1" * 4_301 + b"E-9", "4,301")], ids=["fraction", "minus-exponent", "exponent"])
def test_kb_serve_says_in_its_own_words_that_a_numbers_whole_part_is_too_long(tmp_path, big, digits):
    bad = _reply_to(tmp_path, big)
    assert bad["id"] == "f1" and bad["error"]["code"] == -32600
    message = bad["error"]["message"]
    assert f"{digits} digits" in message and "at most 4,300" in message, message
    assert "out of range" not in message and "Invalid JSON" not in message, message


def test_a_long_fraction_after_a_short_whole_part_is_not_refused_as_too_long(tmp_path):
    # The library reads 0.999... of 5,000 digits: kb's own refusal is for what it cannot read.
    bad = _reply_to(tmp_path, b"0." + b"9" * 5_000)
    assert bad["id"] == "f1" and bad["error"]["code"] == -32602, bad  # top: an integer, not a number

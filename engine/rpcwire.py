"""The wire under `kb serve`: each line is checked before the MCP library reads it.

The library's stdio transport drops a line it cannot read (not JSON, a message with no
method, `[]`, a lone surrogate) without a reply, so a client waiting on that id waits
forever. JSON-RPC 2.0 prescribes an error reply: -32700 (parse error) for text that is not
JSON, -32600 (invalid request) for JSON that is not a message. We do not fork the library:
its stdio transport serves `sys.stdin`/`sys.stdout` in place when they are not the process's
own descriptors, so the server is given two pipes, and two threads relay between them and
the real wire. The inbound relay answers a bad line itself; the outbound relay writes whole
lines, so a reply of ours never lands inside one of the library's.

Decisions where JSON-RPC is silent: a blank line is no message and gets no reply; text that
is not UTF-8 is a parse error (the library would have read it with U+FFFD in place); a lone
surrogate (`"\\ud800"`) is JSON but no text, so the request is invalid, answered under its
id when it has one; a batch is not part of MCP, so an array gets one -32600 with id null; an
integer past Python's limit on digits (4,300) is JSON but no number kb takes, so -32600 too, under the id.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from typing import Any

log = logging.getLogger("kb.serve")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def refusal(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error reply this line gets, or None when the library may read it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return _error(None, PARSE_ERROR, f"Parse error: not UTF-8 (byte 0x{line[e.start]:02x} at offset {e.start})")
    try:
        message, bad = _read(text)
    except ValueError:
        # An integer past Python's limit on reading digits (4,300 unless set), whose error
        # advises sys.set_int_max_str_digits: no id or argument kb takes is that long.
        return _too_long(text)
    if bad:
        return bad
    if isinstance(message, list):
        why = "an empty batch" if not message else "a batch (JSON-RPC batches are not part of MCP)"
        return _error(None, INVALID_REQUEST, f"Invalid Request: {why}")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, f"Invalid Request: a JSON {type(message).__name__}, not an object")
    msg_id = _id_of(message)
    surrogate = _lone_surrogate(message)
    if surrogate:
        return _error(msg_id, INVALID_REQUEST, f"Invalid Request: a lone surrogate (\\u{ord(surrogate):04x}) is not a character")
    if "id" in message and message["id"] is not None and msg_id is None:
        # The library would read it as a notification, and answer nothing.
        return _error(None, INVALID_REQUEST, "Invalid Request: an id must be a string or an integer")
    if "method" not in message and "result" not in message and "error" not in message:
        return _error(msg_id, INVALID_REQUEST, "Invalid Request: no method")
    from mcp import types  # the library's own reading of a message: what it would refuse, we answer

    try:
        # The library reads the line with this call (its JSON parser stops at a nesting a
        # Python dict passes, and it then drops the line without a reply): ask it the same.
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as e:  # pydantic's ValidationError
        first = e.errors()[0] if hasattr(e, "errors") else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if not isinstance(p, int))
        return _error(msg_id, INVALID_REQUEST, f"Invalid Request: {where or 'message'}: {first.get('msg', e)}")
    return None


def _read(text: str, parse_int=None) -> tuple[Any, dict[str, Any] | None]:
    """The message, or the parse error it gets."""
    try:
        return json.loads(text, parse_int=parse_int), None
    except json.JSONDecodeError as e:
        return None, _error(None, PARSE_ERROR, f"Parse error: not JSON ({e})")
    except RecursionError:  # `[[[[...` a thousand deep: it killed the relay, and the server with it
        return None, _error(None, PARSE_ERROR, "Parse error: nested too deeply to read")


def _too_long(text: str) -> dict[str, Any]:
    """The refusal of a line holding an integer too long for Python to read: read again with
    each such number as null, to answer under the message's id when the rest is a message."""
    limit = sys.get_int_max_str_digits()
    too_long: list[int] = []

    def read_int(digits: str) -> int | None:
        count = len(digits) - digits.startswith("-")
        if count > limit:
            too_long.append(count)
            return None
        return int(digits)

    message, bad = _read(text, read_int)
    if bad:  # not JSON after all, past the number
        return bad
    return _error(_id_of(message), INVALID_REQUEST,
                  f"Invalid Request: a number of {too_long[0]:,} digits (kb reads integers of at most {limit:,})")


def _id_of(message: Any) -> str | int | None:
    """The message's id when it can be answered under it (a string or an integer), else None."""
    msg_id = message.get("id") if isinstance(message, dict) else None
    return msg_id if isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool) else None


def _lone_surrogate(message: Any) -> str:
    """The first lone surrogate anywhere in the message, or "" (found at C speed: the one
    thing UTF-8 cannot encode)."""
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        return e.object[e.start]
    return ""


def _error(msg_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


class CheckedWire:
    """Put the library on pipes and relay them to the real stdin/stdout, bad lines answered.

    Also what the library does for itself when it owns the descriptors: while serving, fd 0
    reads nothing and fd 1 goes to stderr, so a stray print cannot corrupt the wire.
    """

    def __init__(self) -> None:
        self._wire_in = os.dup(0)
        self._wire_out = os.dup(1)
        self._write_lock = threading.Lock()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)
        lib_in_r, self._lib_in_w = os.pipe()
        self._lib_out_r, lib_out_w = os.pipe()
        sys.stdin = os.fdopen(lib_in_r, "r", encoding="utf-8", errors="replace")
        sys.stdout = os.fdopen(lib_out_w, "w", encoding="utf-8")
        self._outbound = threading.Thread(target=self._relay_out, name="kb-wire-out", daemon=True)
        self._inbound = threading.Thread(target=self._relay_in, name="kb-wire-in", daemon=True)
        self._outbound.start()
        self._inbound.start()

    def _send(self, data: bytes) -> None:
        with self._write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._wire_out, view):]

    def _relay_in(self) -> None:
        with os.fdopen(self._wire_in, "rb") as wire, os.fdopen(self._lib_in_w, "wb") as lib:
            try:
                for line in wire:
                    if not line.strip():
                        continue
                    try:
                        reply = refusal(line.rstrip(b"\r\n"))
                    except Exception as e:  # noqa: BLE001 - whatever one line does, the relay must live on
                        reply = _error(None, PARSE_ERROR, f"Parse error: the line could not be read ({type(e).__name__})")
                    if reply is None:
                        lib.write(line if line.endswith(b"\n") else line + b"\n")
                        lib.flush()
                        continue
                    log.warning("refused a line (%s): %s", reply["error"]["code"], reply["error"]["message"])
                    self._send(json.dumps(reply).encode() + b"\n")
            except (BrokenPipeError, OSError) as e:  # the server has stopped reading: it is ending
                log.info("inbound wire closed: %s", e)

    def _relay_out(self) -> None:
        with os.fdopen(self._lib_out_r, "rb") as lib:
            try:
                for line in lib:
                    self._send(line)
            except OSError as e:  # the client went away
                log.info("outbound wire closed: %s", e)

    def close(self) -> None:
        """After the server returned: what it wrote reaches the client before the process ends."""
        try:
            sys.stdout.close()
        except OSError:
            pass
        self._outbound.join(timeout=10)

"""The wire under `kb serve`: each line is checked before the MCP library reads it.

The library's stdio transport drops a line it cannot read (not JSON, a message with no
method, `[]`, a lone surrogate) without a reply, so a client waiting on that id waits
forever. JSON-RPC 2.0 prescribes an error reply: -32700 (parse error) for text that is not
JSON, -32600 (invalid request) for JSON that is not a message. We do not fork the library:
its stdio transport serves `sys.stdin`/`sys.stdout` in place when they are not the process's
own descriptors, so the server is given two pipes, and two threads relay between them and
the real wire. The inbound relay answers a bad line itself; the outbound relay writes whole
lines, so a reply of ours never lands inside one of the library's.

The client's end of stdin is not the end of its requests: a client that writes its requests
and closes its side (`printf ... | kb serve`, a hook) still reads the replies. The library
stops at end of input and drops every call still running, so the inbound relay holds the
library's input open until each request it passed on has its reply (or was cancelled by the
client, which then waits for none), or the server has stopped writing.

A client that writes and never reads must not make the server grow: the library reads every
line it is given and holds each reply until it is written, so a client that wrote 70,473
requests in 60 s and read none cost 1.19 GB. The inbound relay passes a request on only while
fewer than MAX_IN_FLIGHT of them wait for a reply that has reached the client's pipe; past
that it stops reading, and the kernel's pipe makes the client wait instead.

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
import re
import select
import sys
import threading
from typing import Any

log = logging.getLogger("kb.serve")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# The longest line read. A question is cut at 4,000 characters and a note is a few KB: a line
# past this is refused unread, by the id at its head, rather than held whole (reading one
# larger than the server's memory ended the relay's thread, and the server with it).
MAX_LINE_BYTES = 16 << 20
# Requests passed to the library whose replies are not yet written to the client: enough for
# a client's concurrent calls (the library runs tools on up to 40 threads), few enough that a
# client that never reads costs a few MB, not a reply held per request it wrote.
MAX_IN_FLIGHT = 32
# The library's JSON parser (pydantic's) refuses an integer written in more characters.
LIBRARY_INT_CHARS = 4300
# The id, when it leads the message, as JSON-RPC clients write it ({"jsonrpc": "2.0", "id": ...).
_LEADING_ID = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def refusal(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error reply this line gets, or None when the library may read it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return _error(None, PARSE_ERROR, f"Parse error: not UTF-8 (byte 0x{line[e.start]:02x} at offset {e.start})")
    try:
        message, bad = _read(text, _int_in_reach, _float_in_reach)
    except ValueError:
        # An integer past the limit on reading one (4,300 unless set), whose error advises
        # sys.set_int_max_str_digits, or is the library's: no id or argument kb takes is that long.
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


CANCELLED = "notifications/cancelled"


def _id_key(msg_id: Any) -> tuple[str, Any] | None:
    """An id as a set member: 1 and "1" are two requests."""
    if isinstance(msg_id, bool) or not isinstance(msg_id, (str, int)):
        return None
    return (type(msg_id).__name__, msg_id)


def _parsed(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return {}
    return message if isinstance(message, dict) else {}


class _Awaited:
    """The ids of requests passed to the library whose replies are not yet written (counted:
    a client that reuses one id must not pass the bound on requests in flight)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, Any], int] = {}
        self._count = 0
        self._changed = threading.Condition()
        self._server_gone = False

    def sent(self, line: bytes, limit: int | None = None, reader_gone=lambda: False) -> None:
        """`line` is passed on; a request waits first, while `limit` others wait for replies
        (a notification, a cancellation among them, never waits)."""
        message = _parsed(line)
        if message.get("method") == CANCELLED and isinstance(message.get("params"), dict):
            self._drop(_id_key(message["params"].get("requestId")))  # no reply is sent for it
        elif "method" in message and _id_key(message.get("id")) is not None:
            with self._changed:
                while limit is not None and self._count >= limit and not self._server_gone and not reader_gone():
                    self._changed.wait(timeout=1.0)
                key = _id_key(message["id"])
                self._ids[key] = self._ids.get(key, 0) + 1
                self._count += 1

    def answered(self, line: bytes) -> None:
        if b'"id"' in line:  # a notification from the server carries none: not parsed
            message = _parsed(line)
            if "method" not in message:
                self._drop(_id_key(message.get("id")))

    def _drop(self, key) -> None:
        with self._changed:
            left = self._ids.get(key)
            if left is not None:
                self._count -= 1
                if left > 1:
                    self._ids[key] = left - 1
                else:
                    del self._ids[key]
            self._changed.notify_all()

    def server_stopped(self) -> None:
        with self._changed:
            self._server_gone = True
            self._changed.notify_all()

    def wait_all(self, reader_gone) -> None:
        """Until every request is answered, the server stopped, or `reader_gone()` (nobody
        reads the replies any more: a request the library never answers cannot keep the
        process alive after its client)."""
        with self._changed:
            while self._ids and not self._server_gone and not reader_gone():
                self._changed.wait(timeout=1.0)


def line_too_long(head: bytes, wire) -> dict[str, Any] | None:
    """-32600 for a line longer than MAX_LINE_BYTES (`head` its first part, the rest read from
    `wire` and dropped), under the id it opens with when it has one; None for a line read whole."""
    if len(head) <= MAX_LINE_BYTES or head.endswith(b"\n"):
        return None
    size = len(head)
    while chunk := wire.readline(1 << 20):
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
    found = _LEADING_ID.match(head)
    try:
        msg_id = json.loads(found.group(1)) if found else None
    except ValueError:
        msg_id = None
    return _error(msg_id, INVALID_REQUEST, f"Invalid Request: a line of {size:,} bytes; kb serve reads lines of up to {MAX_LINE_BYTES:,}")


def _read(text: str, parse_int=None, parse_float=None) -> tuple[Any, dict[str, Any] | None]:
    """The message, or the parse error it gets."""
    try:
        return json.loads(text, parse_int=parse_int, parse_float=parse_float), None
    except json.JSONDecodeError as e:
        return None, _error(None, PARSE_ERROR, f"Parse error: not JSON ({e})")
    except RecursionError:  # `[[[[...` a thousand deep: it killed the relay, and the server with it
        return None, _error(None, PARSE_ERROR, "Parse error: nested too deeply to read")


def _int_in_reach(written: str) -> int:
    """An integer as both readers take it, or ValueError. Python's int() counts digits
    against its limit, the library's parser (pydantic) counts the minus sign too: a minus and
    4,300 digits passed here and was refused there, in the library's words."""
    if len(written) > _int_limit():
        raise ValueError("integer too long")
    return int(written)


def _float_in_reach(written: str) -> float:
    """A number with a fraction or an exponent as both readers take it, or ValueError: the
    library's parser counts its whole part (sign included) against the integers' limit, and
    Python's float() reads any length."""
    if len(_whole_part(written)) > LIBRARY_INT_CHARS:
        raise ValueError("number too long")
    return float(written)


def _whole_part(written: str) -> str:
    return _WHOLE.match(written).group()


_WHOLE = re.compile(r"-?\d*")


def _int_limit() -> int:
    """The longest integer read, in characters: the library's 4,300, or Python's limit when
    set lower (0 is no limit)."""
    return min(LIBRARY_INT_CHARS, sys.get_int_max_str_digits() or LIBRARY_INT_CHARS)


def _too_long(text: str) -> dict[str, Any]:
    """The refusal of a line holding an integer too long for Python to read: read again with
    each such number as null, to answer under the message's id when the rest is a message."""
    limit = _int_limit()
    too_long: list[str] = []  # each number's whole part, "." after one that has a fraction or exponent

    def read_int(written: str) -> int | None:
        if len(written) > limit:
            too_long.append(written)
            return None
        return int(written)

    def read_float(written: str) -> float | None:
        if len(_whole_part(written)) > LIBRARY_INT_CHARS:
            too_long.append(_whole_part(written) + ".")
            return None
        return float(written)

    message, bad = _read(text, read_int, read_float)
    if bad:  # not JSON after all, past the number
        return bad
    first = too_long[0].removesuffix(".")
    digits = len(first) - first.startswith("-")
    sign = " and a minus sign" if first.startswith("-") else ""
    reads = f"integers of at most {limit:,} characters"
    if too_long[0].endswith("."):
        sign += " before its point or exponent"
        reads = f"at most {LIBRARY_INT_CHARS:,} characters before a number's point or exponent"
    return _error(_id_of(message), INVALID_REQUEST,
                  f"Invalid Request: a number of {digits:,} digits{sign} (kb reads {reads}, a minus sign included)")


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
        self._awaited = _Awaited()
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
                while line := wire.readline(MAX_LINE_BYTES + 1):
                    if not line.strip():
                        continue
                    try:
                        reply = line_too_long(line, wire) or refusal(line.rstrip(b"\r\n"))
                    except Exception as e:  # noqa: BLE001 - whatever one line does, the relay must live on
                        reply = _error(None, PARSE_ERROR, f"Parse error: the line could not be read ({type(e).__name__})")
                    if reply is None:
                        self._awaited.sent(line, MAX_IN_FLIGHT, self._reader_gone)  # waits for room: the next is read only then
                        lib.write(line if line.endswith(b"\n") else line + b"\n")
                        lib.flush()
                        continue
                    log.warning("refused a line (%s): %s", reply["error"]["code"], reply["error"]["message"])
                    self._send(json.dumps(reply).encode() + b"\n")
                self._awaited.wait_all(self._reader_gone)  # the client is done writing, not reading
            except (BrokenPipeError, OSError) as e:  # the server has stopped reading: it is ending
                log.info("inbound wire closed: %s", e)

    def _reader_gone(self) -> bool:
        """Whether the read end of stdout was closed (a pipe's writer then polls as an error)."""
        try:
            poller = select.poll()
            poller.register(self._wire_out, select.POLLERR | select.POLLHUP)
            return any(ev & (select.POLLERR | select.POLLHUP) for _fd, ev in poller.poll(0))
        except (ImportError, AttributeError, OSError):  # no poll() here: wait for the replies
            return False

    def _relay_out(self) -> None:
        with os.fdopen(self._lib_out_r, "rb") as lib:
            try:
                for line in lib:
                    self._send(line)
                    self._awaited.answered(line)  # written to the client's pipe: room for the next request
            except OSError as e:  # the client went away
                log.info("outbound wire closed: %s", e)
            finally:
                self._awaited.server_stopped()

    def close(self) -> None:
        """After the server returned: what it wrote reaches the client before the process ends."""
        try:
            sys.stdout.close()
        except OSError:
            pass
        self._outbound.join(timeout=10)

"""The pipe a second process answers its parent on: frames (a length, then that many bytes of
kb's own value layout, engine/index/valuelayout.encode), read without waiting, and a fork of this
process that writes them. Shared by the fresh interpreters of engine/index/helperprocess.py and the
fork of engine/review/missworker.py."""

from __future__ import annotations

import _thread
import os
import struct
import sys
from typing import Callable, Iterable

from .valuelayout import Damaged, encode as dumps, decode

# What a child sends on its stdout: frames, each a length then that many bytes of a value.
FRAME = struct.Struct("<I")


def loads(raw: bytes):
    """The value of a frame (or of the work a parent wrote); ValueError for bytes not one."""
    try:
        return decode(raw, "a second process's pipe")
    except Damaged as e:
        raise ValueError(str(e)) from None


def frame_of(obj) -> bytes:
    """`obj` as one frame: its bytes' length, then those bytes."""
    frame = dumps(obj)
    return FRAME.pack(len(frame)) + frame


def send_frame(out, obj) -> None:
    """Write `obj` to the binary stream `out` as one frame, its length then its bytes (the
    caller flushes)."""
    frame = dumps(obj)
    out.write(FRAME.pack(len(frame)))
    out.write(frame)


def read_frame(stream) -> bytes | None:
    """The next frame's bytes from a blocking binary stream; None at its end or a cut frame."""
    head = stream.read(FRAME.size)
    if len(head) < FRAME.size:
        return None
    (n,) = FRAME.unpack(head)
    body = stream.read(n)
    return body if len(body) == n else None


def whole_frames(buffer: bytearray) -> list[bytes]:
    """The frames complete in `buffer` (bytes read without waiting), removed from it; a
    frame still arriving stays for the next read."""
    out = []
    while len(buffer) >= FRAME.size:
        (n,) = FRAME.unpack_from(buffer)
        if len(buffer) < FRAME.size + n:
            break
        out.append(bytes(buffer[FRAME.size:FRAME.size + n]))
        del buffer[:FRAME.size + n]
    return out


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may run on (a container's share)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def runnable_now() -> int | None:
    """Threads runnable on the machine now, this one among them (the fourth field of
    /proc/loadavg: runnable/all); None where there is no such file."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def may_fork() -> bool:
    """Whether this process may fork: POSIX, and no thread but this one: none in threading's
    list (read without importing it) and none started below it (_thread, as a C extension
    may), which threading does not list but whose locks the child would inherit held."""
    if not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return _thread._count() == 0 and (threading is None or threading.active_count() == 1)


def fork_sending(items: Callable[[], Iterable]) -> tuple[int, int] | None:
    """A fork of this process sending each of `items()` (run in the child) as one frame on a
    pipe as soon as it is made, then leaving by os._exit (no atexit, no buffer flushed twice;
    a closed pipe, the parent gone or done, ends it too): (its pid, the pipe's read end), or
    None when the pipe or the fork cannot be made. The caller checked may_fork()."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
        if stream is not None:  # None: closed when kb started (`kb misses >&-`)
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    try:
        pid = os.fork()
    except OSError:  # no process to spare (a ulimit)
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            for item in items():
                _write_all(write_end, frame_of(item))
            code = 0
        except BaseException:  # a closed pipe, anything else: what was sent stands
            pass
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]

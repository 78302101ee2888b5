"""The one way kb starts a second process of its own: a second interpreter running this copy of
the engine, for a large build's notes prepared on a second core (engine/index/prepworker.py, the
one batch measured to pay: docs/speed.md). How it is started, how wide its pipe is, what it
sends back (frames: a length, then that many bytes of kb's own value layout,
engine/index/valuelayout.encode), and how it is stopped.

No other module in engine/ or kbtui/ starts an interpreter of kb's or forks
(tests/test_layout.py); `kb misses` once did, and was as quick in one process.
"""

from __future__ import annotations

import struct
import subprocess

from .valuelayout import Damaged, encode as dumps, decode

# How much the child may run ahead: a pipe holds 64 KB (about four notes) unless widened. On
# a loaded machine each side that waits on a full or empty pipe waits for its turn on a core
# too, so a narrow pipe made the two processes take turns; at 1 MB (Linux's cap for an
# ordinary user) each side runs a time slice through.
PIPE_BYTES = 1 << 20
# What a child sends on its stdout: frames, each a length then that many bytes of a value.
FRAME = struct.Struct("<I")
# What starting a child can raise: no interpreter to start, the work not a value, a pipe gone.
START_FAILED = (OSError, ValueError, TypeError, subprocess.SubprocessError)


def start(command: list[str]) -> subprocess.Popen:
    """The child, its stdin and stdout pipes to this process, its stderr discarded. `command`
    comes from engine/notes/owncode.python_running, so the child imports this copy of the engine and
    nothing from the working directory. Raises what Popen raises."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    widen_pipe(proc.stdout)
    return proc


def widen_pipe(pipe) -> None:
    try:
        import fcntl  # POSIX only

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError, ValueError):
        pass  # another platform, or a lower cap: the pipe keeps its size, the work its answer


def stop(proc: subprocess.Popen | None) -> None:
    """Kill the child if it is still running, close its pipes and reap it."""
    if proc is None:
        return
    if proc.poll() is None:
        proc.kill()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass  # bytes it had not read yet, which nothing needs now
    proc.wait()


def loads(raw: bytes):
    """The value of a frame (or of the work a parent wrote); ValueError for bytes not one."""
    try:
        return decode(raw, "a second process's pipe")
    except Damaged as e:
        raise ValueError(str(e)) from None


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

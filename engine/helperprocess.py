"""A second interpreter running this copy of the engine, for work split across two cores
(engine/prepworker.py for a large build, engine/missworker.py for a long miss log): how it is
started, how wide its pipe is, how it is stopped."""

from __future__ import annotations

import marshal
import struct
import subprocess

# How much the child may run ahead: a pipe holds 64 KB (about four notes) unless widened. On
# a loaded machine each side that waits on a full or empty pipe waits for its turn on a core
# too, so a narrow pipe made the two processes take turns; at 1 MB (Linux's cap for an
# ordinary user) each side runs a time slice through.
PIPE_BYTES = 1 << 20

# What a child sends on its stdout: frames, each a length then that many bytes of marshal.
FRAME = struct.Struct("<I")


def send_frame(out, obj) -> None:
    """Write `obj` to the binary stream `out` as one frame (the caller flushes)."""
    frame = marshal.dumps(obj)
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


def start(command: list[str]) -> subprocess.Popen:
    """The child, its stdin and stdout pipes to this process, its stderr discarded. `command`
    comes from engine/owncode.python_running, so the child imports this copy of the engine and
    nothing from the working directory. Raises what Popen raises."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    widen_pipe(proc.stdout)
    return proc


def widen_pipe(pipe) -> None:
    widen_pipe_fd(pipe.fileno())


def widen_pipe_fd(fd: int) -> None:
    try:
        import fcntl  # POSIX only

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
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

"""A second interpreter running this copy of the engine, for work split across two cores
(engine/index/prepworker.py for a large build, engine/review/missworker.py for a long miss log when this
process cannot fork): how it is started, how wide its pipe is, how it is stopped. What it
sends back, and a fork's channel, are engine/index/childpipe.py's."""

from __future__ import annotations

import subprocess

# How much the child may run ahead: a pipe holds 64 KB (about four notes) unless widened. On
# a loaded machine each side that waits on a full or empty pipe waits for its turn on a core
# too, so a narrow pipe made the two processes take turns; at 1 MB (Linux's cap for an
# ordinary user) each side runs a time slice through.
PIPE_BYTES = 1 << 20


def start(command: list[str]) -> subprocess.Popen:
    """The child, its stdin and stdout pipes to this process, its stderr discarded. `command`
    comes from engine/notes/owncode.python_running, so the child imports this copy of the engine and
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

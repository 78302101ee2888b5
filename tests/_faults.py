"""Shared pieces of the fault suite (tests/test_faults_*.py): fixtures built in tmp, the real
`kb` in a subprocess, the hash of a fleet's markdown, and the ways this machine can take a
permission or a disk away from a process even when the tests run as root."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from conftest import REPO, copy_notes, run_kb

DEPLOY_Q = "quem decide se um deploy pode ir pra producao"
NOTHING_Q = "quanto custa um satelite geoestacionario"

# What must never reach a terminal raw: C0 controls but newline and tab, DEL, C1 controls
# (U+009B is a CSI to many terminals) and the bidi overrides and isolates.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

IS_ROOT = os.geteuid() == 0


def tree_hash(root: Path) -> dict[str, str]:
    """Every file a person wrote under `root` (not the disposable .kb, not the miss log), by
    content; symlinks by target, so a test notices a note changed, added, removed or retargeted."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != ".kb")
        for d in dirnames:
            full = Path(dirpath, d)
            if full.is_symlink():
                out[str(full.relative_to(root))] = "link:" + os.readlink(full)
        for name in sorted(filenames):
            if name.startswith("kb-misses.txt") or name.startswith(".kb-misses.txt") or name == ".gitignore":
                continue
            full = Path(dirpath, name)
            rel = str(full.relative_to(root))
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(full)
            elif stat.S_ISREG(st.st_mode):
                try:
                    out[rel] = hashlib.sha256(full.read_bytes()).hexdigest() + f" mode {st.st_mode:o}"
                except OSError as e:  # unreadable to this process: its stat stands in for it
                    out[rel] = f"unreadable {st.st_size} {st.st_mtime_ns} {st.st_mode:o} ({e.strerror})"
            else:
                out[rel] = f"special {stat.S_IFMT(st.st_mode):o}"
    return out


def kb(*args: str, ok: bool = True, **kw) -> subprocess.CompletedProcess:
    """The real `kb`; no traceback ever, and exit 0 unless the caller expects a refusal."""
    r = run_kb(*args, **kw)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr[-3000:]
    if ok:
        assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    return r


def kb_json(question: str, *paths: str | Path, **kw) -> dict:
    r = kb("route", question, *map(str, paths), "--json", **kw)
    assert len(r.stdout.splitlines()) == 1, r.stdout[:2000]
    return json.loads(r.stdout)


def assert_terminal_safe(text: str) -> None:
    bad = sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text)})
    assert not bad, f"raw control characters reach the terminal: {bad}"


def projection(a: dict) -> dict:
    """What an answer says about the question, without what it says about this run (the
    index's history, the miss log's path, the skipped lines)."""
    keep = ("question", "verdict", "gate", "confidence", "agent", "keyword_top", "indexed", "suggestions", "unreachable")
    out = {k: a[k] for k in keep}
    out["results"] = [
        {k: r[k] for k in ("base", "path", "title", "purpose", "score", "keyword_score", "why", "matched", "passages")}
        for r in a["results"]
    ]
    return out


def markdown_copy(src: Path, dest: Path) -> Path:
    """The notes alone: no index, no miss log (and no symlinks followed)."""
    return copy_notes(src, dest, ".gitignore")


def fresh_answer(fleet: Path, question: str, scratch: Path, **kw) -> dict:
    """The answer a fresh copy of the notes gives, indexed from nothing: the truth to compare to."""
    copy = markdown_copy(fleet, scratch / f"fresh-{len(list(scratch.glob('fresh-*')))}")
    return kb_json(question, copy, **kw)


def same_answer(a: dict, b: dict) -> None:
    assert projection(a) == projection(b)


# -- taking a permission or a disk away -------------------------------------------------

_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _PR_CAPBSET_DROP = 1, 2, 24


def _drop_dac() -> None:
    """In the child before exec: without these two capabilities root obeys file modes."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@functools.lru_cache(maxsize=None)
def modes_bind() -> str | None:
    """None when chmod binds this process's children; else why it cannot be made to."""
    if not IS_ROOT:
        return None
    try:
        r = subprocess.run(["true"], preexec_fn=_drop_dac, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"running as root, and the capability bounding set cannot be narrowed here ({e})"
    if r.returncode != 0:
        return "running as root, and the capability bounding set cannot be narrowed here"
    return None


def run_kb_obeying_modes(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`kb` in a child that file modes bind: as root, with CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH dropped from its bounding set (chmod 000 then stops a read)."""
    full_env = dict(os.environ)
    full_env.pop("KB_MISSES_PATH", None)
    full_env.update(env or {})
    r = subprocess.run(
        [sys.executable, "-m", "engine.cli", *args], cwd=REPO, env=full_env, capture_output=True, text=True,
        timeout=timeout, preexec_fn=_drop_dac if IS_ROOT else None,
    )
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    return r


@functools.lru_cache(maxsize=None)
def mount_namespace() -> str | None:
    """None when `unshare -m` gives a private mount namespace (a read-only bind, a tiny tmpfs)."""
    if not IS_ROOT or shutil.which("unshare") is None:
        return "needs root and unshare(1) for a private mount namespace"
    try:
        r = subprocess.run(
            ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && umount /mnt"],
            capture_output=True, timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"unshare -m failed ({e})"
    return None if r.returncode == 0 else f"unshare -m cannot mount here ({r.stderr.decode(errors='replace').strip()})"


def run_kb_in_namespace(setup: str, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`kb` after `setup` (shell, e.g. a read-only bind mount) in a private mount namespace:
    whatever it mounts vanishes with the process, the host never sees it."""
    full_env = dict(os.environ)
    full_env.pop("KB_MISSES_PATH", None)
    full_env.update(env or {})
    script = f'set -e\n{setup}\nexec "$@"'
    r = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", sys.executable, "-m", "engine.cli", *args],
        cwd=REPO, env=full_env, capture_output=True, text=True, timeout=timeout,
    )
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    return r


def read_only_bind(path: Path) -> str:
    return f"mount --bind '{path}' '{path}'\nmount -o remount,bind,ro '{path}'"


def let_go(fifo: Path) -> None:
    """Open a FIFO for writing without waiting: a reader stuck on it gets its end of file, so
    a test that found kb waiting can still end (and its app close)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # nobody reads it: nothing to let go


def run_with_fifo_swap(target, path: Path, readers: tuple[str, ...], *, timeout: float = 20):
    """target() in a thread, with `path` swapped for a FIFO just as the first of `readers`
    (function names) is called with it as `path` or `self`: the window between whatever was
    checked and the read, forced with a trace. Returns target()'s result; fails when the
    thread is still waiting on the FIFO after `timeout` seconds."""
    import threading

    def swap(frame, event, arg):
        names = frame.f_locals
        if frame.f_code.co_name in readers and path in (names.get("path"), names.get("self")):
            path.unlink()
            os.mkfifo(path)
            sys.settrace(None)
        return None

    out: list = []

    def run():
        sys.settrace(swap)
        try:
            out.append(target())
        finally:
            sys.settrace(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=timeout)
    stuck = thread.is_alive()
    if stuck:
        let_go(path)
    assert not stuck, f"waited on a FIFO put at {path}"
    assert path.exists() and not path.is_file(), "the swap did not happen: the test proves nothing"
    return out[0]

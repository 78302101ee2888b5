"""Shared fixtures: a private copy of the demo fleet, so no test writes into the repo."""

from __future__ import annotations

import hmac
import os
import subprocess
import zlib
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from engine.notes.fleet import copy_notes  # the one copy of notes, shared with kb label and the benches

REPO = Path(__file__).resolve().parent.parent

# Hypothesis sized for CI (docs/decisions.md, "A new test"): the same examples on every run and
# worker, so a failure is reproduced by running the test again; no deadline, since two workers on
# two busy cores time an example by the machine, not by the code. `--hypothesis-profile=dev`
# draws new examples on every run, 4 times as many where a test does not name its own count.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def _private_state_dir(tmp_path_factory):
    """kb's per-user state (cache key, allowed commands) in a folder of the session's own:
    no test reads or writes the person's ~/.local/state/kb. Child processes inherit it."""
    os.environ["KB_STATE_DIR"] = str(tmp_path_factory.mktemp("kb-state"))
    yield
DEMO = REPO / "examples" / "demo"


def copy_demo(dest: Path) -> Path:
    """A fresh copy of examples/demo at `dest`: the one way a test gets the demo fleet."""
    return copy_notes(DEMO, dest)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A fresh copy of examples/demo (no index yet), with the miss log kept inside it."""
    return copy_demo(tmp_path / "demo")


def pytest_collection_modifyitems(items):
    """The tests marked `slow` (tens of seconds each) first: handed out last, one of them
    kept a worker busy alone at the end while the other sat idle."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: else as collected


def _tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` by (size, mtime_ns): what a test that writes would change.
    Not SQLite's `-shm` (every reader writes its marks there) nor an empty `-wal` (made by a
    reader's open, removed at the last close); a write to the index fills the `-wal`."""
    return {str(f.relative_to(root)): (st.st_size, st.st_mtime_ns)
            for f in sorted(root.rglob("*")) if f.is_file() and not f.name.endswith("-shm")
            for st in (f.stat(),) if not (f.name.endswith("-wal") and st.st_size == 0)}


class _SharedDemo:
    """The worker's one indexed demo, and what its files were when it was made."""

    def __init__(self, root: Path) -> None:
        self.root, self.made = root, 0
        self.fleet, self.state = self._make()

    def _make(self) -> tuple[Path, dict[str, tuple[int, int]]]:
        from engine.memory import Memory  # here, not at the top: conftest is imported by every test

        self.made += 1
        fleet = copy_demo(self.root / f"demo-{self.made}")
        index_aged(fleet)
        # A hit and a refusal, neither recorded: the opening caches and the kept spellings are
        # written here, once, so a test that reads finds nothing left to write.
        for question in ("how much protein per meal", "xyzzy qwfp how do I roll back"):
            Memory(fleet).ask(question, record_miss=False)
        return fleet, _tree_state(fleet)

    def check_and_renew(self) -> list[str]:
        """The files a test changed; when any, the next test gets a fresh copy, not this one."""
        after = _tree_state(self.fleet)
        changed = sorted(k for k in self.state.keys() | after.keys() if self.state.get(k) != after.get(k))
        if changed:
            self.fleet, self.state = self._make()
        return changed


@pytest.fixture(scope="session")
def _indexed_demo_once(tmp_path_factory) -> _SharedDemo:
    return _SharedDemo(tmp_path_factory.mktemp("indexed"))


@pytest.fixture
def indexed_demo(_indexed_demo_once) -> Path:
    """The demo, indexed, shared by every test of the worker that only reads it (asks with
    `record_miss=False`, lists, reads notes). A test that writes anything into it (a note, the
    index, a cache, the miss log) fails here, by name, and the next test gets a fresh copy:
    such a test takes `demo`, its own copy."""
    yield _indexed_demo_once.fleet
    changed = _indexed_demo_once.check_and_renew()
    assert not changed, f"a test given the shared read-only indexed_demo wrote into it: {changed}"


def run_kb(*args: str, cwd: Path | None = None, env: dict | None = None, stdin: str | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    """The real `kb` command, as a user runs it, in a fresh process."""
    full_env = dict(os.environ)
    full_env.pop("KB_MISSES_PATH", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", *args], cwd=cwd or REPO, env=full_env, input=stdin,
        capture_output=True, text=True, timeout=timeout,
    )


def kb_here(*args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`kb` run in this process (engine.cli.main, its streams captured), answered as run_kb
    answers: for a test that arranges a fleet through kb (misses to review, a note to label)
    or reads what a verb prints, where the fresh process is not what it tests. About 0.5 s
    less than run_kb a call; keep a few run_kb tests per verb (docs/decisions.md)."""
    import contextlib
    import io

    from engine.cli import main

    out, err, saved, saved_stdin = io.StringIO(), io.StringIO(), dict(os.environ), sys.stdin
    os.environ.pop("KB_MISSES_PATH", None)
    os.environ.update(env or {})
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse's usage errors, as the process would exit
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin = saved_stdin
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(["kb", *args], code, out.getvalue(), err.getvalue())


def age_indexes(fleet: Path) -> None:
    """Date the index files a minute back: what is derived from an index (the opening cache,
    a kept spelling) is kept only for an index old enough for its stat to vouch for it, and
    a test cannot wait for the clock."""
    then = os.stat(fleet).st_mtime - 60
    for f in fleet.glob("*/.kb/index.db*"):
        os.utime(f, (then, then))


def index_aged(fleet: Path) -> None:
    """`kb index` the fleet with its notes older than the index can doubt (RACY_NS), then
    age the index: the next `kb` reads and keeps what is derived from it."""
    then = os.stat(fleet).st_mtime - 120
    for note in fleet.rglob("*.md"):
        os.utime(note, (then, then))
    r = run_kb("index", str(fleet))
    assert r.returncode == 0, r.stderr
    age_indexes(fleet)


def damage_cache(path: Path, damage: str) -> bytes:
    """Replace a sound cache file with a damaged one: "truncated", "flipped" (one byte near
    its end), "regions" (every byte past the head flipped: any blob read is damaged),
    "garbage", "empty" or "a-directory"; any other name leaves nothing there, for the caller
    to make. Returns the sound bytes."""
    raw = path.read_bytes()
    path.unlink()
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped":
        path.write_bytes(raw[:-40] + bytes([raw[-40] ^ 0xFF]) + raw[-39:])
    elif damage == "regions":
        end = _head_end(raw)
        path.write_bytes(raw[:end] + bytes(b ^ 0xFF for b in raw[end:]))
    elif damage == "garbage":
        path.write_bytes(os.urandom(4096))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "a-directory":
        path.mkdir()
    return raw


# kb's cache files (engine/index/sealedfile.py), read here by a second, independent reading of the
# layout: magic line | HMAC-SHA256 of magic, length and head (32) | head length (8) | head |
# regions. The values are decoded by the engine's own decoder (sealedfile.decode).


def _head_end(raw: bytes) -> int:
    lead = raw.index(b"\n") + 1 + 40
    return lead + int.from_bytes(raw[lead - 8:lead], "big")


def sealed_parts(raw: bytes) -> tuple[object, list[bytes]]:
    """(payload, the regions' bytes) of a cache file's bytes."""
    from engine.index.sealedfile import decode

    end = _head_end(raw)
    payload, layout = decode(raw[raw.index(b"\n") + 41:end])
    regions = []
    for length, _crc in layout:
        regions.append(raw[end:end + length])
        end += length
    return payload, regions


def sound_cache(path: Path) -> bool:
    """Whether a cache file is whole: its head and every region match their CRC-32s."""
    from engine.index.sealedfile import Damaged, decode
    from engine.notes.userstate import secret

    raw = path.read_bytes()
    try:
        start, end = raw.index(b"\n") + 1, _head_end(raw)
        signed = raw[:start] + raw[start + 32:end]
        if not hmac.compare_digest(hmac.digest(secret(), signed, "sha256"), raw[start:start + 32]):
            return False
        _, layout = decode(raw[start + 40:end])
    except (ValueError, Damaged):
        return False
    for length, crc in layout:
        if zlib.crc32(raw[end:end + length]) != crc:
            return False
        end += length
    return end == len(raw)

"""The per-user state folder: named by the environment, never inside a notes folder."""

from __future__ import annotations

import os
import stat

from engine.notes.userstate import ensure_state_dir, state_dir


def test_the_variable_names_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_STATE_DIR", str(tmp_path / "s"))
    assert state_dir() == tmp_path / "s"
    made = ensure_state_dir()
    assert made.is_dir() and stat.S_IMODE(os.stat(made).st_mode) == 0o700


def test_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.delenv("KB_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "kb"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/not/allowed")  # the XDG spec ignores a relative path
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "kb"


def test_the_suite_never_uses_the_persons_folder():
    assert os.environ["KB_STATE_DIR"] and ".local/state" not in os.environ["KB_STATE_DIR"]


def _fresh_key(monkeypatch, folder):
    from engine.notes import userstate

    monkeypatch.setenv("KB_STATE_DIR", str(folder))
    monkeypatch.setattr(userstate, "_key", None)
    return userstate


def test_the_secret_is_32_private_bytes_made_once(tmp_path, monkeypatch):
    userstate = _fresh_key(monkeypatch, tmp_path / "s")
    key = userstate.secret()
    path = tmp_path / "s" / userstate.KEY_NAME
    assert len(key) == 32 and path.read_bytes() == key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in (tmp_path / "s").iterdir()] == [userstate.KEY_NAME]  # no temporary left
    monkeypatch.setattr(userstate, "_key", None)
    assert userstate.secret() == key  # the next process reads the same one


def test_a_key_of_another_length_is_replaced(tmp_path, monkeypatch):
    userstate = _fresh_key(monkeypatch, tmp_path / "s")
    (tmp_path / "s").mkdir(mode=0o700)
    (tmp_path / "s" / userstate.KEY_NAME).write_bytes(b"short")
    key = userstate.secret()
    assert len(key) == 32 and (tmp_path / "s" / userstate.KEY_NAME).read_bytes() == key


def test_two_first_processes_agree_on_one_key(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    code = "from engine.notes.userstate import secret; print(secret().hex())"
    env = {**os.environ, "KB_STATE_DIR": str(tmp_path / "s")}
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and bytes.fromhex(keys.pop()) == (tmp_path / "s" / "cache.key").read_bytes()


def test_no_state_folder_gives_a_key_of_this_process_only(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    userstate = _fresh_key(monkeypatch, tmp_path / "file" / "s")
    assert len(userstate.secret()) == 32

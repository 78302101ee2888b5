"""The per-user state folder: named by the environment, never inside a notes folder."""

from __future__ import annotations

import os
import stat

from engine.userstate import ensure_state_dir, state_dir


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

"""Round 5b: the stems fingerprint on a fleet that cannot be written. An index another
PyStemmer wrote is rebuilt where it can be; on a read-only mount it must not be served as is.
A real read-only bind mount in a private mount namespace, real `kb` processes."""

from __future__ import annotations

import json

import pytest

from _faults import fresh_answer, mount_namespace, read_only_bind, run_kb_in_namespace, same_answer
from conftest import REPO, run_kb
from test_faults_stems import OTHER_STEMMER

QUESTION = "what do the deploys check before production releases"


@pytest.mark.skipif(mount_namespace() is not None, reason=str(mount_namespace()))
def test_a_read_only_fleet_indexed_by_another_stemmer_answers_as_a_fresh_index(demo, tmp_path):
    """The in-memory fallback copied the file's index, other stems and all: the notes'
    stats vouched for them, so no note was read again and no question met the old stems."""
    shim = tmp_path / "other-stemmer"
    shim.mkdir()
    (shim / "Stemmer.py").write_text(OTHER_STEMMER, encoding="utf-8")
    built = run_kb("index", str(demo), env={"PYTHONPATH": f"{shim}:{REPO}"})
    assert built.returncode == 0, built.stderr
    r = run_kb_in_namespace(read_only_bind(demo.parent), "route", QUESTION, str(demo), "--json")
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert any("read-only file system" in s for s in answer["skipped"]), answer["skipped"]
    same_answer(answer, fresh_answer(demo, QUESTION, tmp_path / "scratch"))

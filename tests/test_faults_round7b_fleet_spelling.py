"""A fleet of many bases keeps one spelling at `<root>/.kb/fleet-spelling.cache`. When that
file cannot be kept there (the root's `.kb` is a link, or a file; the cache's own path is a
link or a folder), every refusal prepared the spelling of every key of the fleet and threw it
away: ~0.4 s of CPU a refusal at 60,000 chunks, the cost the file exists to avoid. A fleet root
that cannot be written already fell back to the bases' parts (kept beside each index); these
now do too, and nothing is written through the link. Real indexes, real Memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.index import spelling_cache
from tests.test_spelling_cache import ASKED, _fleet_file, _speller_offers, _spellings, fleet  # noqa: F401 (a fixture)


@pytest.fixture
def many(fleet, monkeypatch) -> Path:
    monkeypatch.setattr(spelling_cache, "FLEET_FROM", 2)  # the demo's three bases count as many
    return fleet


def _plant(fleet: Path, where: str, outside: Path) -> Path:
    outside.mkdir()
    if where == "kb-link":
        (fleet / ".kb").symlink_to(outside)
    elif where == "kb-file":
        (fleet / ".kb").write_text("not a folder\n")
    else:
        (fleet / ".kb").mkdir(exist_ok=True)
        if where == "cache-link":
            _fleet_file(fleet).symlink_to(outside / "target.cache")
        else:  # cache-folder
            _fleet_file(fleet).mkdir()
    return outside


@pytest.mark.parametrize("where", ["kb-link", "kb-file", "cache-link", "cache-folder"])
def test_a_fleet_spelling_that_cannot_be_kept_is_not_prepared_on_every_refusal(many, tmp_path, monkeypatch, where):
    outside = _plant(many, where, tmp_path / "outside")
    first = _speller_offers(many, ASKED)  # the answers are those of every key at once
    assert len(_spellings(many)) == 3  # each base's part kept instead

    def not_prepared(keys):
        raise AssertionError("the spelling was prepared again")

    monkeypatch.setattr(spelling_cache, "spelling_of", not_prepared)
    assert _speller_offers(many, ASKED) == first
    assert list(outside.iterdir()) == []  # nothing written through a link

"""fold() drops combining marks in C now; it must give what the plain definition gives:
lower-case, NFKD, every combining mark removed, everything else kept."""

from __future__ import annotations

import random
import sys
import unicodedata

from engine.rank.normalize import fold


def _reference(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def test_fold_is_the_plain_definition_for_latin_and_other_scripts():
    for text in ["Produção", "RECUPERAÇÃO muscular", "e\u0301te\u0301", "日本語 café", "ǅ ﬁ ²",
                 "Ἀθῆναι", "मराठी", "x" * 300 + "ção", "ção" + "日" * 300]:
        assert fold(text) == _reference(text), text


def test_fold_matches_for_every_code_point_and_random_mixtures():
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        assert fold(c) == _reference(c), hex(cp)
    rng = random.Random(7)
    pool = [chr(rng.randrange(0x20, 0x3000)) for _ in range(5000)] + list("áéíóúãõçàâêô")
    for _ in range(2000):
        s = "".join(rng.choice(pool) for _ in range(rng.randrange(1, 400)))
        assert fold(s) == _reference(s), repr(s)

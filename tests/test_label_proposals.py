"""What `kb label` proposes (engine/review/label.py), on small fleets built to show one rule each:
a word another note is named for stays that note's, a word or phrase goes to the note that
uses it densest, single words come from the note's names for itself and not from prose at
large, heading markup is not a key, and a plural name is offered in the singular too when the
note itself writes it so."""

from __future__ import annotations

import pytest

from engine.review.label import propose, propose_fleet
from engine.review.labelstats import fleet_stats

FILLER = [f"# Topic {i}\n\nTopic {i} covers gardening item{i} thoroughly.\n" for i in range(12)]


def proposals(notes: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    texts = {("docs", f"filler{i}.md"): t for i, t in enumerate(FILLER)}
    texts.update({("docs", rel): t for rel, t in notes.items()})
    settled = propose_fleet({key: t.encode() for key, t in texts.items()})
    out = {}
    for rel in notes:
        p = settled.get(f"docs/{rel}")
        out[rel] = [(k.key, k.source) for k in p.keys] if p else []
    return out


def keys_of(props, rel) -> set[str]:
    return {k for k, _ in props[rel]}


def test_a_word_another_note_is_named_for_is_left_to_that_note():
    props = proposals({
        "width.md": "# Width\n\nThe width rule sets a width. A width in cells.\n",
        "max_width.md": "# Max width\n\n## Width limits\n\nCaps the width. The width never grows past it.\n",
    })
    assert "width" in keys_of(props, "width.md")
    assert "width" not in keys_of(props, "max_width.md")  # it would outbid width.md on "set the width"
    assert "max width" in keys_of(props, "max_width.md")


def test_heading_markup_is_not_proposed_and_a_plural_name_is_offered_singular_too():
    props = proposals({
        "nav.md": "# Navigation\n\n## Navigation path <small>Breadcrumbs</small> { #navigation-path }\n\n"
                  "The navigation path shows breadcrumbs. A breadcrumb per level.\n\n"
                  "## Custom widgets :material-star:\n\nA custom widget is a class. Custom widgets compose.\n",
    })
    keys = keys_of(props, "nav.md")
    assert "navigation path breadcrumbs" in keys
    assert not any("material" in k or "star" in k.split() or " id " in f" {k} " for k in keys), keys
    assert {"custom widgets", "custom widget"} <= keys


def test_a_link_target_and_an_entity_are_not_words_of_the_note():
    props = proposals({
        "scalar.md": "# &lt;scalar&gt;\n\nA scalar is a number with a unit. See [Unit][textual.css.UnitSpec] "
                     "and [Unit][textual.css.UnitSpec] again; a scalar unit, a scalar unit.\n",
        # A link in a title or a heading: its text, never its target ("x md" for `[x](y.md)`).
        "rollback.md": "# Rolling [back a deploy](other.md) safely\n\nRevert a release that fails. Rehearse a revert.\n\n"
                       "## Canary [traffic](canary.md#share) shifts\n\nShift traffic slowly, canary first, then traffic.\n",
    })
    keys = keys_of(props, "scalar.md")
    assert ("scalar", "title") in props["scalar.md"]
    assert not any(w in k.split() for k in keys for w in ("lt", "gt", "unitspec", "textual")), keys
    keys = keys_of(props, "rollback.md")
    assert ("rolling back a deploy safely", "title") in props["rollback.md"] and "canary traffic shifts" in keys
    assert not [k for k in keys if {"md", "other", "share"} & set(k.split())], keys
    # A shortcut reference link loses its brackets in the proposed purpose line too.
    p = propose("about.md", b"# About\n\nWith [MkDocs] you [build](x.md) sites.\n", fleet_stats({("d", "about.md"): ""}))
    assert p.purpose == "With MkDocs you build sites."


def test_a_word_of_a_longer_title_is_not_also_a_key_of_its_own():
    props = proposals({
        "search-post.md": "# Search: better, faster, smaller\n\n## A smaller index\n\nThe index is smaller. "
                          "Smaller files load faster.\n",
    })
    keys = keys_of(props, "search-post.md")
    assert "search better faster smaller" in keys  # the title, whole
    assert "smaller" not in keys  # it scores as a title word already; as a key it claims every "smaller"
    assert "a smaller index" in keys  # the heading as written


def test_a_phrase_another_note_is_named_for_is_left_to_that_note():
    props = proposals({
        "static-files.md": "# Arquivos Estáticos\n\nServir arquivos estáticos de um diretório.\n",
        "custom-docs.md": "# Recursos da documentação\n\nOs arquivos estáticos da UI. Baixe os arquivos "
                          "estáticos e sirva os arquivos estáticos.\n",
    })
    assert "arquivos estaticos" in keys_of(props, "static-files.md")
    assert "arquivos estaticos" not in keys_of(props, "custom-docs.md")  # it took the static files question


def test_a_word_of_another_notes_title_is_not_a_key_elsewhere():
    props = proposals({
        "dependencies-with-yield.md": "# Dependências com yield\n\nUse yield numa dependência.\n",
        "advanced-dependencies.md": "# Dependências avançadas\n\n## Yield e escopo\n\nCom yield o código roda "
                                    "depois. Yield fecha a sessão.\n",
    })
    # As a key here it tied the note titled for it (title + file name) and won on the path.
    assert "yield" not in keys_of(props, "advanced-dependencies.md")


def test_a_phrase_inside_another_notes_title_does_not_go_to_a_stub():
    props = proposals({
        "sql-databases.md": "# Bancos de Dados SQL (Relacionais)\n\nO FastAPI usa bancos de dados SQL.\n",
        "testing-database.md": "# Testando a Base\n\nLeia sobre dados SQL no SQLModel e como testar dados SQL.\n",
    })
    assert "dados sql" not in keys_of(props, "testing-database.md")
    # The titled note gets the part of its long title a person asks with.
    assert ("dados sql", "title part") in props["sql-databases.md"]


def _underlined(note: str) -> str:
    """The note with its `#` and `##` headings written underlined (setext) instead."""
    return "\n".join(f"{ln[3:]}\n{'-' * len(ln[3:])}" if ln.startswith("## ") else
                     f"{ln[2:]}\n{'=' * len(ln[2:])}" if ln.startswith("# ") else ln for ln in note.split("\n"))


@pytest.mark.parametrize("write", [str, _underlined], ids=["hash", "underlined"])
def test_a_heading_that_only_points_to_another_note_gives_no_key(write):
    props = proposals({
        "general.md": write("# Receitas\n\nLinks para outros locais.\n\n## Tags de Documentação\n\nPara adicionar tags, "
                            "leia [Configuração](../tutorial/path-operation-configuration.md#tags).\n\n"
                            "## Receitas próprias\n\nUma receita própria aqui, receitas próprias.\n\n"
                            "## Comando borda\n\nO comando mostra a [borda](borda.md):\n\n```\ntextual borders\n```\n"),
    })
    keys = keys_of(props, "general.md")
    assert "tags de documentacao" not in keys and "documentacao" not in keys
    assert "receitas proprias" in keys  # a heading with its own prose stays
    assert "comando borda" in keys  # and one with code of its own, though it links in passing


def test_plural_words_of_a_short_name_are_offered_singular_in_portuguese_too():
    props = proposals({
        "query-params.md": "# Parâmetros de Consulta\n\nUm parâmetro de consulta opcional. Outra consulta.\n\n"
                           "## Conversões dos tipos de parâmetros de consulta de exemplo\n\nUma conversão.\n",
    })
    keys = keys_of(props, "query-params.md")
    assert "parametro de consulta" in keys  # a person asks for one parameter
    # A long heading gets no variant: it is rarely asked whole and would take a slot.
    assert not any(k.startswith("conversao dos tipo") for k in keys), keys


def test_a_footnote_reference_is_not_part_of_the_purpose():
    p = propose("start.md", b"# Start\n\nMkDocs is a generator for documentation.[^1] More.\n\n[^1]: A note.\n",
                fleet_stats({("d", "start.md"): ""}))
    assert p.purpose == "MkDocs is a generator for documentation."


def test_a_step_number_before_a_heading_is_not_a_word_of_the_note():
    props = proposals({
        "compositor.md": "# The compositor\n\n### Step 1. Finding the cuts\n\nCuts, cuts.\n\n"
                         "### Step 2. Applying the cuts\n\nApply each step of the cuts, step by step.\n",
    })
    keys = keys_of(props, "compositor.md")
    assert "step" not in keys and not any(k.startswith("step ") for k in keys), keys
    assert "finding the cuts" in keys


def test_a_title_opening_with_a_gerund_is_offered_as_asked_too():
    props = proposals({
        "dependencies.md": "# Adding dependencies\n\nTo add a dependency, run the add command. "
                           "Each dependency is locked.\n",
        "testing.md": "# Testando Dependências\n\nPara testar uma dependência, substitua a dependência.\n",
    })
    assert ("add dependency", "title") in props["dependencies.md"]  # "how do I add a dependency"
    assert ("testar dependencia", "title") in props["testing.md"]


def test_a_word_of_a_heading_key_is_not_also_a_key_of_its_own():
    props = proposals({
        "versioning.md": "# Setting up versioning\n\n## Version warning\n\nA warning shows on old versions. "
                         "The warning links to the latest.\n",
    })
    keys = keys_of(props, "versioning.md")
    assert "version warning" in keys
    # The heading scores when a question holds it whole; alone, "warning" took a question
    # about call-out boxes with a warning.
    assert "warning" not in keys


def test_a_key_longer_than_the_cap_is_never_proposed():
    from engine.review.label import MAX_KEY_CHARS, MAX_KEY_WORDS

    long_title = " ".join(f"word{i}" for i in range(20_000))
    huge_word = "x" * 5_000
    props = proposals({
        "long.md": f"# {long_title}\n\nA body about long titles.\n",
        "huge.md": f"# Huge {huge_word}\n\nA body about huge words.\n",
        "twelve.md": "# " + " ".join(f"term{i}" for i in range(MAX_KEY_WORDS)) + "\n\nBody.\n",
    })
    for rel in ("long.md", "huge.md"):
        for key, _ in props[rel]:
            assert len(key.split()) <= MAX_KEY_WORDS and len(key) <= MAX_KEY_CHARS, (rel, key[:80])
    assert props["long.md"]  # the note still gets keys: its title's parts
    assert (" ".join(f"term{i}" for i in range(MAX_KEY_WORDS)), "title") in props["twelve.md"]  # at the cap: kept

"""A deterministic haystack for benchmarks: a fleet of any size, and questions drawn from it.

    python3 -m kbtools.haystack /tmp/kb-hay/h60k --chunks 60000 [--seed 8] [--bases 4]

Same seed and size, same bytes: every choice comes from one `random.Random(seed)`, nothing
iterates a set, and the chunk count is exact, because each note is cut by the engine's own
parser and chunker while it is written (the number `kb index` reports is the number asked).

What it writes, under OUT:
  fleet.txt, kb-aliases.txt       the fleet's manifest and a few alias lines
  <base>/agent.txt, index.md       one base per agent; the first holds most of the chunks
  <base>/knowledge/<topic>/*.md    notes: a title, a `Search for:` line (most notes), an
  <base>/protocols/*.md ...        `Exists to:` line, sections of varied length under `##`
                                   and `###` headings, lists, the odd code fence and link
  questions.tsv                    question<TAB>base/path (the note it was drawn from) or
                                   `-` for a question that should miss; `kb eval` reads it
  haystack.json                    what was asked for and what was made

The prose is English or Portuguese (about 70/30), a real core vocabulary per language with
a synthetic long tail, drawn from a Zipf-Mandelbrot law: the commonest content words land
in most chunks (the case the pruning rule exists for), the tail in a handful. Each base
shuffles the middle of the ranking (its subject), and each note repeats a few rare words
of its own (what it is about), which its label and title then name.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

GENERATOR_VERSION = 1
DEFAULT_SEED = 8
DEFAULT_QUESTIONS = 300
ZIPF_S = 1.05  # the exponent of the content-word law: rank r weighs 1 / (r + ZIPF_Q) ** ZIPF_S
ZIPF_Q = 2.7
TAIL_WORDS = 9000  # synthetic words per language, after the real ones
PORTUGUESE_SHARE = 0.3
ENTRY_SHARE = 0.88  # notes with a `Search for:` line; the rest are text-indexed only
SHARED_HEAD = 60  # the commonest words are common in every base; below that each base differs

# -- vocabulary ------------------------------------------------------------------------

_EN_CONTENT = """
deploy release production rollback service server database query index cache latency
traffic request response error incident outage alert monitor metric dashboard log trace
pipeline build test commit branch merge review change version schema migration backup
restore cluster node container image network storage disk memory cpu thread process queue
worker job schedule budget cost price invoice payment customer client account contract
policy risk audit report review team owner manager meeting decision plan goal target
project task deadline estimate scope priority roadmap feature product design interface
user session login password token access permission role security encryption key secret
vendor supplier order shipping delivery warehouse stock inventory refund return claim
campaign audience content video channel post hook caption thumbnail brand growth funnel
lead conversion retention churn revenue margin forecast quarter growth pricing discount
protein meal calorie diet training recovery muscle sleep hydration vitamin fiber sugar
carbohydrate fat weight exercise strength endurance injury stretch rest heart blood
doctor patient clinic symptom dose label nutrition recipe ingredient portion snack
document note template checklist guide protocol standard rule exception approval
signature compliance regulation privacy consent retention archive record evidence
question answer search keyword ranking score floor signal agent fleet memory skill tool
library book chapter reader writer editor draft outline summary argument source
interview hiring candidate salary benefit holiday leave onboarding training mentor
feedback performance promotion conflict culture remote office travel expense receipt
tax filing deduction audit ledger balance transfer bank loan interest rate inflation
market stock bond fund portfolio dividend asset liability equity valuation
garden plant soil water seed harvest weather rain season tree flower compost pest
kitchen oven knife pan stove fridge freezer bread rice bean coffee tea milk cheese
"""

_PT_CONTENT = """
implantação produção reversão serviço servidor banco consulta índice latência tráfego
requisição resposta erro incidente indisponibilidade alerta monitoramento métrica painel
registro rastreio esteira construção teste versão migração cópia restauração contêiner
imagem rede armazenamento disco memória processo fila tarefa agenda orçamento custo preço
fatura pagamento cliente conta contrato política risco auditoria relatório revisão equipe
dono gerente reunião decisão plano meta projeto prazo estimativa escopo prioridade
funcionalidade produto desenho interface usuário sessão senha acesso permissão papel
segurança criptografia chave segredo fornecedor pedido entrega frete estoque reembolso
devolução estorno campanha público conteúdo vídeo canal postagem gancho legenda marca
crescimento funil conversão retenção receita margem previsão trimestre desconto
proteína refeição caloria dieta treino recuperação músculo sono hidratação vitamina fibra
açúcar carboidrato gordura peso exercício força resistência lesão alongamento descanso
coração sangue médico paciente clínica sintoma dose rótulo nutrição receita ingrediente
porção lanche documento nota modelo lista guia protocolo padrão regra exceção aprovação
assinatura conformidade regulamento privacidade consentimento arquivo evidência pergunta
resposta busca palavra ranking pontuação piso sinal agente frota habilidade ferramenta
biblioteca livro capítulo leitor escritor editor rascunho resumo argumento fonte
entrevista contratação candidato salário benefício feriado férias integração mentor
desempenho promoção conflito cultura escritório viagem despesa recibo imposto declaração
dedução balanço transferência empréstimo juros taxa inflação mercado ação fundo carteira
dividendo ativo passivo patrimônio avaliação jardim planta solo água semente colheita
clima chuva estação árvore flor adubo praga cozinha forno faca panela fogão geladeira
pão arroz feijão café chá leite queijo
"""

# Function words give the prose its shape and its length; normalisation drops them from
# questions, FTS5 indexes them (a real note is half function words).
_EN_FUNCTION = """the of and to in is that for it as with on be this by are or from at
an not have but was we which can if will all their they has more when one so should do
what how who only also before after about into than then there these those each must""".split()
_PT_FUNCTION = """o a de que e do da em um para com não uma os no se na por mais as dos
como mas ao ele das à seu sua ou quando muito nos já também só pelo pela até isso ela
entre depois sem mesmo aos seus quem nas me esse eles você essa num nem suas meu""".split()

_EN_SYLLABLES = ("ka ver tan lo mi ris dor pel cam bre sto fin gal mer tho nu por ad el "
                 "ix ber wick ham vin sel tra mon dal").split()
_EN_ENDINGS = ("", "", "", "ing", "er", "ton", "ley", "ment", "ock", "ard", "ness")
_PT_SYLLABLES = ("ca ma ri lo to pe du ra vi sa bo lu fe mi na ta ve ju go ne de li "
                 "que gui ço lhe nho tré pó câ").split()
_PT_ENDINGS = ("", "", "", "ção", "ão", "inho", "ura", "ente", "ada", "eiro", "ável", "ência")

# Words no note holds: the questions that should miss are made of these (Italian, German,
# and a few synthetic forms no syllable table above can produce).
_MISS_WORDS = """funziona quaderno delle decisioni piacere sciopero gelato domani spiaggia
fattura ieri Fahrrad Schlüssel Wohnung Kühlschrank Gewitter Zeitung Baustelle
vorgestern zwqx kryptz vlarg pzomb xquill jorvath snibbet glorx""".split()

_AGENTS = ("atlas", "bruna", "caio", "dora", "enzo", "flora", "gil", "helena", "igor", "julia",
           "kaue", "lara")
_ROLES = (
    "Keeps the fleet's operations running: deploys, incidents, storage and the budget for them",
    "Marketing analyst: audiences, content, campaigns and the numbers behind them",
    "Nutrition and training: meals, protein, recovery and the evidence for each",
    "Finance and administration: invoices, taxes, contracts and approvals",
    "People and hiring: interviews, onboarding, feedback and the office",
    "The household: kitchen, garden, travel and the paperwork that comes with them",
)
_FOLDERS = (  # (folder, share of a base's notes); skills/protocols/templates and tools by species
    ("knowledge", 0.58), ("projects", 0.12), ("clients", 0.06), ("protocols", 0.09),
    ("skills", 0.05), ("templates", 0.03), ("tools", 0.07),
)
_EN_FRAMES = ("how do I {}", "what is the rule for {}", "who decides {}", "where is the {}",
              "when should we {}", "{}", "{} checklist", "why does {} matter")
_PT_FRAMES = ("como faço {}", "qual a regra de {}", "quem decide {}", "onde fica o {}",
              "quando devo {}", "{}", "o que é {}", "por que {} importa")


def _fold_ascii(word: str) -> str:
    import unicodedata

    d = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in d if not unicodedata.combining(c))


@dataclass
class Language:
    name: str
    content: list[str]  # ranked, commonest first
    function: list[str]
    syllables: tuple[str, ...]


def _tail(rng: random.Random, syllables: list[str], endings: tuple[str, ...], n: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        w = "".join(rng.choice(syllables) for _ in range(rng.choice((2, 2, 3, 3, 4)))) + rng.choice(endings)
        key = _fold_ascii(w)
        if len(key) < 4 or key in taken:
            continue
        taken.add(key)
        out.append(w)
    return out


def _languages(rng: random.Random) -> tuple[Language, Language]:
    taken: set[str] = {_fold_ascii(w) for w in _MISS_WORDS}
    en_core = list(dict.fromkeys(_EN_CONTENT.split()))
    pt_core = list(dict.fromkeys(_PT_CONTENT.split()))
    for w in en_core + pt_core + _EN_FUNCTION + _PT_FUNCTION:
        taken.add(_fold_ascii(w))
    rng.shuffle(en_core)
    rng.shuffle(pt_core)
    en = Language("en", en_core + _tail(rng, list(_EN_SYLLABLES), _EN_ENDINGS, TAIL_WORDS, taken), _EN_FUNCTION, _EN_SYLLABLES)
    pt = Language("pt", pt_core + _tail(rng, list(_PT_SYLLABLES), _PT_ENDINGS, TAIL_WORDS, taken), _PT_FUNCTION, _PT_SYLLABLES)
    return en, pt


def _zipf_cum(n: int) -> list[float]:
    return list(accumulate(1.0 / (r + ZIPF_Q) ** ZIPF_S for r in range(1, n + 1)))


def _function_cum(n: int) -> list[float]:
    return list(accumulate(1.0 / (r + 1.0) for r in range(1, n + 1)))


# -- the writer --------------------------------------------------------------------------


@dataclass
class HaystackInfo:
    root: str
    seed: int
    chunks: int
    files: int
    entries: int
    bases: dict[str, int]  # base -> chunks
    questions: int
    misses: int
    generator_version: int = GENERATOR_VERSION
    bytes: int = 0


class _BaseWriter:
    """One agent's notes, written until the base holds exactly its share of chunks."""

    def __init__(self, gen: "_Generator", name: str, index: int, target: int):
        self.gen = gen
        self.rng = gen.rng
        self.name = name
        self.index = index
        self.target = target
        self.root = gen.out / name
        self.chunks = 0
        self.notes: list[dict] = []  # what questions are drawn from
        self.used_names: set[str] = set()
        self._rel = ""
        # The base's subject: the middle of each ranking shuffled, its head shared by all.
        self.orders = {}
        for lang in (gen.en, gen.pt):
            head = lang.content[:SHARED_HEAD]
            rest = lang.content[SHARED_HEAD:]
            mid = rest[: len(rest) // 3]
            self.rng.shuffle(mid)
            self.orders[lang.name] = head + mid + rest[len(rest) // 3:]

    # words ------------------------------------------------------------------------------

    def content(self, lang: Language, k: int) -> list[str]:
        order = self.orders[lang.name]
        idx = self.rng.choices(range(len(order)), cum_weights=self.gen.zipf[lang.name], k=k)
        return [order[i] for i in idx]

    def sentence(self, lang: Language, topic: list[str], n: int) -> str:
        words = []
        content = self.content(lang, n)
        fn = self.rng.choices(lang.function, cum_weights=self.gen.fcum[lang.name], k=n)
        for i in range(n):
            r = self.rng.random()
            if r < 0.42:
                words.append(fn[i])
            elif r < 0.50 and topic:
                words.append(self.rng.choice(topic))
            else:
                words.append(content[i])
        words[0] = words[0].capitalize()
        return " ".join(words) + self.rng.choice((".", ".", ".", ".", "?", ":", ";"))

    def paragraph(self, lang: Language, topic: list[str], n_words: int) -> str:
        out = []
        left = n_words
        while left > 0:
            n = min(left, self.rng.randint(6, 24))
            out.append(self.sentence(lang, topic, max(n, 3)))
            left -= n
        return " ".join(out)

    def section_body(self, lang: Language, topic: list[str], n_words: int) -> str:
        parts = []
        left = n_words
        while left > 0:
            kind = self.rng.random()
            n = min(left, self.rng.randint(25, 110))
            if kind < 0.16:
                items = [self.paragraph(lang, topic, self.rng.randint(5, 14)) for _ in range(self.rng.randint(2, 6))]
                marker = self.rng.choice(("-", "*", "1."))
                parts.append("\n".join(f"{marker} {it}" for it in items))
                n = sum(len(it.split()) for it in items)
            elif kind < 0.19:
                code = [f"{self.rng.choice(('run', 'set', 'get', 'kb'))} {' '.join(self.content(lang, 3))}"
                        for _ in range(self.rng.randint(1, 4))]
                parts.append("```\n" + "\n".join(code) + "\n```")
                n = 4 * len(code)
            elif kind < 0.22 and self.notes:
                other = self.rng.choice(self.notes)
                target = os.path.relpath(other["rel"], os.path.dirname(self._rel) or ".").replace(os.sep, "/")
                parts.append(self.paragraph(lang, topic, n) + f" See [{other['title']}]({target}).")
            else:
                text = self.paragraph(lang, topic, n)
                # Wrap like a person's editor does, so lines are of ordinary length.
                parts.append(_wrap(text, self.rng.randint(80, 100)))
            left -= max(n, 1)
        return "\n\n".join(parts)

    def title_words(self, lang: Language, topic: list[str]) -> list[str]:
        words = list(dict.fromkeys([self.rng.choice(topic)] + self.content(lang, self.rng.randint(1, 4))))
        return words

    # notes ------------------------------------------------------------------------------

    def note(self, lang: Language, *, sections_override: int | None = None, short: bool = False) -> tuple[str, str, dict]:
        rng = self.rng
        # What the note is about: a few words of the base's middle and tail, repeated.
        order = self.orders[lang.name]
        lo = SHARED_HEAD + 40
        topic = list(dict.fromkeys(order[int(lo + rng.paretovariate(0.6) * 30) % len(order)] for _ in range(rng.randint(3, 6))))
        title = self.title_words(lang, topic)
        folder = rng.choices([f for f, _ in _FOLDERS], weights=[w for _, w in _FOLDERS])[0]
        if folder in ("knowledge", "projects", "clients"):
            sub = self.content(lang, 1)[0] if rng.random() < 0.8 else ""
            sub = _slug([sub]) if sub else ""
            folder = f"{folder}/{sub}" if sub and folder == "knowledge" else folder
        stem = _slug(title[:4]) or "note"
        rel = f"{folder}/{stem}.md"
        n = 2
        while rel in self.used_names:
            rel = f"{folder}/{stem}-{n}.md"
            n += 1
        self.used_names.add(rel)
        self._rel = rel

        lines = [f"# {' '.join(title).capitalize()}", ""]
        keys: list[str] = []
        is_entry = rng.random() < ENTRY_SHARE
        if is_entry:
            # Keys as phrases somebody types, in both languages; a few carry a function word.
            pool = topic + title
            n_keys = rng.randint(3, 18)
            for _ in range(n_keys):
                r = rng.random()
                if r < 0.45:
                    keys.append(rng.choice(pool))
                elif r < 0.85:
                    keys.append(f"{rng.choice(pool)} {rng.choice(self.content(lang, 3))}")
                else:
                    other = self.gen.pt if lang.name == "en" else self.gen.en
                    keys.append(f"{rng.choice(other.content[: 400])} {rng.choice(other.function)} {rng.choice(pool)}")
            keys = list(dict.fromkeys(keys))
            label = ", ".join(f"`{k}`" if rng.random() < 0.6 else k for k in keys)
            lines += [rng.choice(("**Search for:**", "Search for:", "**Buscar por:**")) + " " + label, ""]
        purpose_words = self.content(lang, rng.randint(5, 12)) + [rng.choice(topic)]
        purpose = self.sentence(lang, topic, len(purpose_words))
        lines += [("**Exists to:** " if lang.name == "en" else "**Existe para:** ") + purpose, ""]
        if rng.random() < 0.5:
            lines += [f"Updated: 20{rng.randint(24, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", ""]
        lines += [_wrap(self.paragraph(lang, topic, rng.randint(15, 70)), 90), ""]

        if sections_override is not None:
            n_sections = sections_override
        else:
            n_sections = min(40, 1 + int(rng.expovariate(1 / 9.0)))
        depth2 = False
        for _ in range(n_sections):
            head = " ".join(self.title_words(lang, topic)).capitalize()
            if depth2 and rng.random() < 0.35:
                lines += [f"### {head}", ""]
            else:
                lines += [f"## {head}", ""]
                depth2 = True
            if short:
                n_words = rng.randint(8, 40)
            else:
                # Lognormal section length: most a paragraph or two, a few long enough to window.
                n_words = max(8, min(2400, int(rng.lognormvariate(4.3, 0.85))))
            lines += [self.section_body(lang, topic, n_words), ""]
        text = "\n".join(lines).rstrip() + "\n"
        meta = {"rel": rel, "title": " ".join(title), "keys": keys, "topic": topic, "lang": lang.name,
                "is_entry": is_entry}
        return rel, text, meta

    def write(self) -> None:
        from engine.notes.chunking import chunk_sections
        from engine.notes.note import parse_note

        self.root.mkdir(parents=True, exist_ok=True)
        role = _ROLES[self.index % len(_ROLES)]
        _write(self.root / "agent.txt", f"name = {self.name.capitalize()}\nrole = {role}\n"
               f"ends = {self.name.capitalize()} stops where the question leaves this subject.\n")
        # The base's own entry.
        lang = self.gen.en
        topic = self.orders["en"][SHARED_HEAD: SHARED_HEAD + 6]
        idx_text = (f"# {self.name.capitalize()}: the desk\n\n**Search for:** {', '.join(topic)}\n\n"
                    f"**Exists to:** {role}\n\n{_wrap(self.paragraph(lang, topic, 60), 90)}\n")
        _write(self.root / "index.md", idx_text)
        self.chunks += len(chunk_sections(parse_note("index.md", idx_text).sections))
        while self.chunks < self.target:
            lang = self.gen.pt if self.rng.random() < PORTUGUESE_SHARE else self.gen.en
            rel, text, meta = self.note(lang)
            n = len(chunk_sections(parse_note(rel, text).sections))
            left = self.target - self.chunks
            if n > left:
                # The last note of the base: short sections, one chunk each, to land exactly.
                self.used_names.discard(rel)
                for attempt in range(50):
                    rel, text, meta = self.note(lang, sections_override=max(left - 1, 0), short=True)
                    n = len(chunk_sections(parse_note(rel, text).sections))
                    if n == left:
                        break
                    self.used_names.discard(rel)
                else:  # pragma: no cover - the short form always lands within a few tries
                    raise RuntimeError(f"could not land {left} chunks exactly")
            if n == 0:
                self.used_names.discard(rel)
                continue
            _write(self.root / rel, text)
            self.chunks += n
            meta["chunks"] = n
            self.notes.append(meta)
            self.gen.files += 1
            self.gen.entries += meta["is_entry"]
        self.gen.files += 1  # index.md
        self.gen.entries += 1


class _Generator:
    def __init__(self, out: Path, seed: int):
        self.out = out
        self.rng = random.Random(seed)
        self.en, self.pt = _languages(self.rng)
        self.zipf = {"en": _zipf_cum(len(self.en.content)), "pt": _zipf_cum(len(self.pt.content))}
        self.fcum = {"en": _function_cum(len(self.en.function)), "pt": _function_cum(len(self.pt.function))}
        self.files = 0
        self.entries = 0


def _wrap(text: str, width: int) -> str:
    out, line, n = [], [], 0
    for w in text.split(" "):
        if n + len(w) + 1 > width and line:
            out.append(" ".join(line))
            line, n = [], 0
        line.append(w)
        n += len(w) + 1
    if line:
        out.append(" ".join(line))
    return "\n".join(out)


def _slug(words: list[str]) -> str:
    return "-".join(_fold_ascii(w) for w in words if w).replace("/", "-")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def base_shares(n_bases: int) -> list[float]:
    """The first base holds most of the fleet (a real fleet has one agent with a deep memory)."""
    if n_bases <= 1:
        return [1.0]
    first = 0.7
    rest = [1.0 / (i + 1) for i in range(n_bases - 1)]
    s = sum(rest)
    return [first] + [(1 - first) * r / s for r in rest]


def generate(
    out: str | os.PathLike[str], chunks: int, *, seed: int = DEFAULT_SEED, bases: int = 4,
    questions: int = DEFAULT_QUESTIONS, force: bool = False,
) -> HaystackInfo:
    """Write a fleet of exactly `chunks` chunks under `out`, and its question set."""
    out = Path(out)
    if chunks < bases * 2:
        raise ValueError(f"{chunks} chunks cannot fill {bases} bases")
    if out.exists():
        if not force and any(out.iterdir()):
            raise FileExistsError(f"{out}: exists and is not empty (pass force=True / --force)")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    gen = _Generator(out, seed)
    shares = base_shares(bases)
    targets = [max(2, round(chunks * s)) for s in shares]
    targets[0] += chunks - sum(targets)
    writers = []
    for i, t in enumerate(targets):
        w = _BaseWriter(gen, _AGENTS[i % len(_AGENTS)] + ("" if i < len(_AGENTS) else str(i)), i, t)
        w.write()
        writers.append(w)
    _write(out / "fleet.txt", f"name = Haystack {chunks}\nrole = A generated fleet for `kb bench` (seed {seed})\n")
    aliases = [f"{_fold_ascii(p)} = {_fold_ascii(e)}" for p, e in zip(gen.pt.content[:12], gen.en.content[:12])]
    _write(out / "kb-aliases.txt", "# generated: Portuguese words that mean an English one\n" + "\n".join(aliases) + "\n")
    qs = make_questions(gen, writers, questions)
    _write(out / "questions.tsv", "# question<TAB>the note it was drawn from (base/path), or - for one that should miss\n"
           + "".join(f"{q}\t{a}\n" for q, a in qs))
    info = HaystackInfo(
        root=str(out), seed=seed, chunks=sum(w.chunks for w in writers), files=gen.files, entries=gen.entries,
        bases={w.name: w.chunks for w in writers}, questions=len(qs), misses=sum(1 for _, a in qs if a == "-"),
    )
    info.bytes = sum(f.stat().st_size for f in out.rglob("*.md"))
    _write(out / "haystack.json", json.dumps(asdict(info), indent=2, sort_keys=True) + "\n")
    return info


def make_questions(gen: _Generator, writers: list[_BaseWriter], n: int) -> list[tuple[str, str]]:
    """Questions drawn from the haystack, and ~15% that should miss (words no note holds)."""
    rng = random.Random(gen.rng.random())
    notes = [(w, m) for w in writers for m in w.notes]
    if not notes:
        return []
    out: list[tuple[str, str]] = []
    kinds = ("label", "label", "label", "label", "body", "body", "body", "common", "common", "long",
             "miss", "miss", "typo")
    for i in range(n):
        kind = kinds[i % len(kinds)] if i < len(kinds) else rng.choice(kinds)
        w, m = rng.choice(notes)
        lang = gen.pt if m["lang"] == "pt" else gen.en
        frames = _PT_FRAMES if m["lang"] == "pt" else _EN_FRAMES
        answer = f"{w.name}/{m['rel']}"
        if kind == "label" and m["keys"]:
            q = rng.choice(frames).format(rng.choice(m["keys"]))
        elif kind in ("label", "body"):
            words = rng.sample(m["topic"], min(len(m["topic"]), rng.randint(1, 3))) + w.content(lang, 1)
            rng.shuffle(words)
            q = rng.choice(frames).format(" ".join(words))
        elif kind == "common":
            q = rng.choice(frames).format(" ".join(lang.content[rng.randint(0, 40)] for _ in range(rng.randint(3, 6))))
        elif kind == "long":
            q = " ".join(w.content(lang, rng.randint(8, 14)) + [rng.choice(m["topic"])])
        elif kind == "typo" and m["keys"]:
            key = rng.choice(m["keys"])
            pos = rng.randrange(len(key))
            q = rng.choice(frames).format(key[:pos] + key[pos + 1:] if len(key) > 4 else key + "x")
        else:
            q = " ".join(rng.sample(_MISS_WORDS, rng.randint(2, 5)))
            answer = "-"
        out.append((q.replace("\t", " "), answer))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kbtools.haystack", description=__doc__.split("\n\n")[0])
    p.add_argument("out", metavar="DIR", help="where the fleet is written (use /tmp, never the repository)")
    p.add_argument("--chunks", type=int, default=1000, help="exactly this many chunks (default 1000)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--bases", type=int, default=4, help="agents; the first holds 70%% of the chunks (default 4)")
    p.add_argument("--questions", type=int, default=DEFAULT_QUESTIONS)
    p.add_argument("--force", action="store_true", help="replace DIR if it holds anything")
    a = p.parse_args(argv)
    try:
        info = generate(a.out, a.chunks, seed=a.seed, bases=a.bases, questions=a.questions, force=a.force)
    except (FileExistsError, ValueError) as e:
        print(f"haystack: {e}", file=sys.stderr)
        return 2
    print(json.dumps(asdict(info), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

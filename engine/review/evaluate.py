"""`kb eval`: grade the fleet against an answer key, the way "How the Catalogue Ranks" prints it.

A gold file holds one question per line, a TAB, and the file(s) that answer it as
`agent/path` joined by `|`, or `-` when the right move is to decline. `#` lines are
comments. A file may instead have three columns, question, label, file(s): the label is one
of LABELS (the seed's blind abstention set), and `kb eval` then also prints how often each
kind of question was answered confidently, hedged, or declined. A malformed line or a file the fleet does not hold is refused with its line
number: grading against a key that names nothing would measure nothing.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import KbError
from ..rank.gate import floor_for
from ..render import counted, printable
from ..notes.textfile import read_regular_text, read_text

SPEED_MIN_ASKS = 1000  # the SPEED line is a median over at least this many questions
# More asks than anyone waits for (about a minute on the demo) are refused: the median is
# steady long before, and a typo of a count (10**20) would otherwise never end.
SPEED_MAX_ASKS = 100_000
# The abstention set's kinds of question: answered by the fleet; sharing its words but not
# answered by it; unrelated to it; not a question at all.
LABELS = ("in-scope", "near", "far", "noise")
VERDICTS = ("hit", "guess", "nothing")
STRIP_WIDTH = 50  # cells of the score strip's axis: with its 15 of labels, 65 columns of 80
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class GoldQuestion:
    line: int
    question: str
    files: tuple[str, ...]  # empty: decline
    label: str | None = None  # one of LABELS in a labelled set

    @property
    def answerable(self) -> bool:
        return bool(self.files)

    @property
    def agents(self) -> frozenset[str]:
        return frozenset(f.split("/", 1)[0] for f in self.files)


@dataclass(frozen=True)
class GradedQuestion:
    gold: GoldQuestion
    verdict: str
    keyword_top: str | None
    fused_top: str | None
    owner: str | None
    score: float
    margin: float  # 1.00 when no second file scored, 0.00 when none did
    scored: int = 0  # files the keyword scorer scored: below 2 the margin above is a convention

    @property
    def file_ok(self) -> bool:
        if not self.gold.answerable:
            return self.verdict == "nothing"
        return self.fused_top in self.gold.files

    @property
    def keyword_ok(self) -> bool:
        return self.gold.answerable and self.keyword_top in self.gold.files

    @property
    def agent_ok(self) -> bool:
        return self.gold.answerable and self.owner in self.gold.agents


@dataclass
class EvalReport:
    gold_path: str
    graded: list[GradedQuestion]
    entries: int
    agents: int
    fused_us: list[float] = field(default_factory=list)
    keyword_us: list[float] = field(default_factory=list)

    @property
    def answerable(self) -> list[GradedQuestion]:
        return [g for g in self.graded if g.gold.answerable]

    @property
    def declines(self) -> list[GradedQuestion]:
        return [g for g in self.graded if not g.gold.answerable]

    def gate_scores(self) -> tuple[list[float], list[float]]:
        """The GATE block's two sets: the top keyword scores of the correct answers, and of
        the misses and declines that scored at all (a zero is refused by any floor)."""
        ans = self.answerable
        hits = [g.score for g in ans if g.keyword_ok]
        misses = [g.score for g in ans if not g.keyword_ok and g.score > 0]
        return hits, misses + [g.score for g in self.declines if g.score > 0]

    def render(self) -> str:
        return render(self)

    @property
    def meaning(self) -> list[VerdictMeaning]:
        return verdict_meaning(self.graded)

    @property
    def floor(self) -> float:
        return floor_for(self.entries)

    @property
    def matrix(self) -> list[AbstentionRow]:
        return abstention_matrix(self.graded)

    def to_json(self) -> dict:
        return {
            "gold": self.gold_path,
            "entries": self.entries,
            "agents": self.agents,
            "questions": [
                {
                    "line": g.gold.line, "question": g.gold.question, "label": g.gold.label,
                    "expected": list(g.gold.files), "verdict": g.verdict, "top": g.fused_top,
                    "keyword_top": g.keyword_top, "owner": g.owner, "score": round(g.score, 4),
                    "margin": round(g.margin, 4), "file_ok": g.file_ok,
                }
                for g in self.graded
            ],
            "abstention": [
                {"label": r.label, "confident": r.hit, "guess": r.guess, "nothing": r.nothing,
                 "confident_right": r.right, "total": r.total}
                for r in self.matrix
            ],
            "verdicts": [{"verdict": m.verdict, "right": m.right, "total": m.total} for m in self.meaning],
            "scores": {"floor": round(self.floor, 4), "correct": [round(x, 4) for x in self.gate_scores()[0]],
                       "misses": [round(x, 4) for x in self.gate_scores()[1]]},
        }


def load_gold(path: str | Path, known_files: set[str], *, pipe_ok: bool = False) -> list[GoldQuestion]:
    p = Path(path)
    try:
        # The room picks a fleet's gold.tsv when it starts and reads it minutes later: a FIFO
        # put there meanwhile is refused on the open, not waited on. A key the person names
        # on the command line may be a pipe (`kb eval <(grep ... gold.tsv) FLEET`): pipe_ok.
        text = read_text(p) if pipe_ok else read_regular_text(p)
    except FileNotFoundError:
        raise KbError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise KbError(f"{path}: not UTF-8 (byte at offset {e.start})") from None
    except OSError as e:
        raise KbError(f"{path}: cannot read ({e.strerror})") from None
    out = []
    # Lines end at \n, \r\n or \r only, as an editor numbers them: str.splitlines also breaks
    # at U+2028, NEL or a form feed pasted inside a question, which cut it in two and put
    # every later refusal at the wrong line number.
    for n, raw in enumerate(_LINE_BREAK.split(text.removesuffix("\n")), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cols = raw.split("\t")
        if len(cols) not in (2, 3):
            raise KbError(
                f"{path}:{n}: expected 2 tab-separated columns (question, file) or 3 (question, label, file),"
                f" found {len(cols)}"
            )
        if out and (len(cols) == 3) != (out[0].label is not None):
            raise KbError(f"{path}:{n}: {len(cols)} columns, but line {out[0].line} has {5 - len(cols)}")
        question, files = cols[0].strip(), cols[-1].strip()
        label = cols[1].strip() if len(cols) == 3 else None
        if not question:
            raise KbError(f"{path}:{n}: the question is empty")
        if label is not None and label not in LABELS:
            raise KbError(
                f"{path}:{n}: expected 2 tab-separated columns (question, file) or 3 (question, label, file):"
                f" label {label!r} is not one of {', '.join(LABELS)}"
            )
        if files == "-":
            if label == "in-scope":
                raise KbError(f"{path}:{n}: an in-scope question names the file that answers it")
            out.append(GoldQuestion(n, question, (), label))
            continue
        names = tuple(f.strip() for f in files.split("|") if f.strip())
        if not names:
            raise KbError(f"{path}:{n}: no file named (write '-' for a question to decline)")
        if label is not None and label != "in-scope":
            raise KbError(f"{path}:{n}: a {label} question names no file (write '-')")
        for f in names:
            if f not in known_files:
                raise KbError(f"{path}:{n}: {f} is not a note in this fleet")
        out.append(GoldQuestion(n, question, names, label))
    if not out:
        raise KbError(f"{path}: no questions in it")
    return out


@dataclass(frozen=True)
class AbstentionRow:
    label: str
    hit: int
    guess: int
    nothing: int
    right: int  # confident answers whose top file is one the set names (in-scope only)

    @property
    def total(self) -> int:
        return self.hit + self.guess + self.nothing


def abstention_matrix(graded: list[GradedQuestion]) -> list[AbstentionRow]:
    """Confident / guess / nothing per label, for a labelled set (empty otherwise)."""
    rows = []
    for label in LABELS:
        mine = [g for g in graded if g.gold.label == label]
        if not mine:
            continue
        count = Counter(g.verdict for g in mine)
        right = sum(1 for g in mine if g.verdict == "hit" and g.file_ok)
        rows.append(AbstentionRow(label, count["hit"], count["guess"], count["nothing"], right))
    return rows


@dataclass(frozen=True, slots=True)
class VerdictMeaning:
    """How often one verdict was right on a key."""

    verdict: str
    right: int
    total: int


def verdict_meaning(graded: list[GradedQuestion]) -> list[VerdictMeaning]:
    """What hit, guess and nothing meant on this key. A hit or a guess is right when the note
    it points at (the keyword top: the note to open, `keyword_top`) is one the key names for
    the question; a nothing is right when the key says to decline it (`-`, or a label other
    than in-scope). Wrong: a hit or guess on another note or on a question to decline, a
    nothing on a question the key says a note answers."""
    out = []
    for v in VERDICTS:
        mine = [g for g in graded if g.verdict == v]
        right = sum(1 for g in mine if (not g.gold.answerable if v == "nothing" else g.keyword_ok))
        out.append(VerdictMeaning(v, right, len(mine)))
    return out


def score_strip(correct: list[float], misses: list[float], floor: float, width: int = STRIP_WIDTH) -> list[str]:
    """The top scores of right answers (o) and of wrong ones (x) on one axis, with the floor
    (|): plain text, 65 columns. A digit is that many questions in one cell (9: nine or more)."""
    top = max([*correct, *misses, floor]) * 1.05 or 1.0

    def col(x: float) -> int:
        return min(width - 1, int(round(x / top * (width - 1))))

    fcol = col(floor)
    lines = []
    for label, scores, mark in (("correct", correct, "o"), ("misses", misses, "x")):
        cells = ["."] * width
        cells[fcol] = "|"
        for c, n in Counter(col(x) for x in scores).items():
            cells[c] = mark if n == 1 else str(min(n, 9))
        lines.append(f"       {label:<8}" + "".join(cells))
    axis = [" "] * width
    axis[0] = "0"
    end = f"{top:.0f}"
    axis[width - len(end):] = end
    label = f"floor {floor:.2f}"
    start = max(2, min(fcol - len(label) // 2, width - len(end) - len(label) - 1))
    axis[start:start + len(label)] = label
    lines.append(" " * 15 + "".join(axis).rstrip())
    return lines


def meaning_lines(r: EvalReport) -> list[str]:
    """The VERDICT block: what each verdict meant on this key, and the scores drawn."""
    said = {"hit": "the note to open is one the key names", "guess": "the note it offers is one the key names",
            "nothing": "the key says to decline the question"}
    lines = ["VERDICT  how often each verdict was right on this key"]
    for m in r.meaning:
        share = f" {_pct(m.right, m.total)}" if m.total else ""
        lines.append(f"       {m.verdict:<8} {f'{m.right}/{m.total}':>7} right{share}: {said[m.verdict]}")
    correct, misses = r.gate_scores()
    lines.append("       drawn: each answer's top keyword score, o right, x wrong, | the floor")
    lines += score_strip(correct, misses, r.floor)
    return lines


def run_eval(
    memory,
    gold_path: str | Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    speed: bool = True,
    min_asks: int = SPEED_MIN_ASKS,
    pipe_ok: bool = False,
) -> EvalReport:
    """Grade every question; then time the set, repeated to at least `min_asks` asks."""
    snap = memory.snapshot()
    known = {f"{b}/{p}" for b, recs in snap.records.items() for p in recs}
    gold = load_gold(gold_path, known, pipe_ok=pipe_ok)
    graded = []
    total = len(gold) + (1 if speed else 0)
    for i, g in enumerate(gold, start=1):
        a = memory.ask(g.question, record_miss=False, with_passages=False)
        kw = a.keyword
        margin = 0.0 if not kw else (a.confidence.margin if a.confidence.margin is not None else 1.0)
        graded.append(
            GradedQuestion(
                gold=g, verdict=a.verdict, keyword_top=a.keyword_top,
                fused_top=a.results[0].id if a.results and a.gate.served else None,
                owner=a.agent.name if a.gate.served else None,
                score=kw[0].score if kw else 0.0, margin=margin, scored=len(kw),
            )
        )
        if progress:
            progress(i, total)
    report = EvalReport(str(gold_path), graded, entries=snap.catalogue.n, agents=len(memory.bases))
    if speed:
        rounds = max(1, -(-min_asks // len(gold)))
        qs = [g.question for g in gold]
        for q in qs:  # warm the caches the first ask of each question fills
            memory.ask(q, record_miss=False)
        for _ in range(rounds):
            for q in qs:
                t0 = time.perf_counter()
                memory.ask(q, record_miss=False)
                t1 = time.perf_counter()
                memory.keyword_only(q)
                t2 = time.perf_counter()
                report.fused_us.append((t1 - t0) * 1e6)
                report.keyword_us.append((t2 - t1) * 1e6)
        if progress:
            progress(total, total)
    return report


def _pct(a: int, b: int) -> str:
    return f"({round(100 * a / b) if b else 0}%)"


def _p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def render(r: EvalReport) -> str:
    lines = _table_lines(r) + _file_and_agent_lines(r) + _gate_lines(r) + _abstain_lines(r)
    lines += [""] + meaning_lines(r)
    lines += _speed_lines(r)
    return "\n".join(lines)


def _table_lines(r: EvalReport) -> list[str]:
    """The head and one row per graded question."""
    ans = r.answerable
    lines = [
        f"gold:     {len(r.graded)} questions, {len(ans)} answerable",
        f"indexed:  {counted(r.entries, 'entry', 'entries')} across {counted(r.agents, 'agent', 'agents')}",
        "",
        "  file agent kw    score  marg verdict question",
    ]
    for g in r.graded:
        v = "none" if g.verdict == "nothing" else g.verdict
        if g.gold.answerable:
            agent = "ok" if g.agent_ok else "MISS"
            kw = "ok" if g.keyword_ok else "MISS"
        else:
            agent = kw = "-"
        file_col = "ok" if g.file_ok else "MISS"
        lines.append(f"  {file_col:<4} {agent:<5} {kw:<5} {g.score:5.1f} {g.margin:5.2f} {v:<6} {printable(g.gold.question)}")
    return lines


def _file_and_agent_lines(r: EvalReport) -> list[str]:
    """The FILE and AGENT blocks: each scorer's right files and owners, and the best fixed choice."""
    ans = r.answerable
    n = len(ans)
    fused_ok = sum(g.file_ok for g in ans)
    kw_ok = sum(g.keyword_ok for g in ans)
    routes = sum(g.agent_ok for g in ans)
    kw_agent = sum(1 for g in ans if g.keyword_top and g.keyword_top.split("/", 1)[0] in g.gold.agents)
    fused_agent = sum(1 for g in ans if g.fused_top and g.fused_top.split("/", 1)[0] in g.gold.agents)
    counts: Counter[str] = Counter()
    for g in ans:
        for a in g.gold.agents:
            counts[a] += 1
    best_fixed, best_n = ("-", 0)
    if counts:
        best_fixed, best_n = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return [
        "",
        f"FILE   fused   {fused_ok}/{n}  {_pct(fused_ok, n)}",
        f"       keyword {kw_ok}/{n}  {_pct(kw_ok, n)}, the same question asked of the keyword scorer alone",
        f"AGENT  routes  {routes}/{n}  {_pct(routes, n)}, the owner the fold chose is the agent the key names",
        f"       keyword {kw_agent}/{n}  {_pct(kw_agent, n)}, the agent of the keyword scorer's top file",
        f"       fused   {fused_agent}/{n}  {_pct(fused_agent, n)}, the agent of the reading list's top file",
        f"       always-{best_fixed}   {best_n}/{n}  {_pct(best_n, n)}, the best a fixed choice can do on this set",
        f"       routing beats the fixed choice by {routes - best_n:+d} questions",
        "",
    ]


def _gate_lines(r: EvalReport) -> list[str]:
    """The GATE block: what the floor flagged, demoted and declined, and the scores either side."""
    ans = r.answerable
    correct = [g for g in ans if g.keyword_ok]
    misses = [g for g in ans if not g.keyword_ok]
    flagged = sum(1 for g in misses if g.verdict != "hit")
    demoted = sum(1 for g in correct if g.verdict != "hit")
    dec = r.declines
    refused = sum(1 for g in dec if g.verdict == "nothing")
    hedged = sum(1 for g in dec if g.verdict == "guess")
    answered = sum(1 for g in dec if g.verdict == "hit")
    lines = [
        f"GATE   flagged {flagged}/{len(misses)} of its own misses as a guess",
        f"       demoted {demoted}/{len(correct)} correct answers to a guess",
        f"       of {len(dec)} question(s) the set says to decline: refused {refused}, hedged {hedged}, answered {answered}",
    ]
    hit_scores, miss_scores = r.gate_scores()
    lines.append(f"       hit scores  {_range(hit_scores)}")
    lines.append(f"       miss scores {_range(miss_scores) if miss_scores else 'none: every miss scored zero'}")
    if hit_scores and miss_scores:
        if max(miss_scores) >= min(hit_scores):
            lines.append("       OVERLAPS: no floor tells a hit from a miss on this set.")
        else:
            lines.append(
                f"       SEPARATES: any floor above {max(miss_scores):.2f} and at most {min(hit_scores):.2f} tells them apart."
            )
    return lines


def _abstain_lines(r: EvalReport) -> list[str]:
    """The ABSTAIN matrix, when the key holds labelled rows."""
    lines: list[str] = []
    matrix = r.matrix
    if matrix:
        lines += ["", "ABSTAIN   label     confident  guess  nothing   (confident = verdict hit)"]
        for row in matrix:
            right = f"   {row.right}/{row.hit} on the right file" if row.label == "in-scope" else ""
            lines.append(f"          {row.label:<9} {row.hit:>9} {row.guess:>6} {row.nothing:>8}{right}")
    return lines


def _speed_lines(r: EvalReport) -> list[str]:
    """The SPEED block, when asks were timed."""
    if not r.fused_us:
        return []
    fm, km = statistics.median(r.fused_us), statistics.median(r.keyword_us)
    return [
        "",
        f"SPEED  {fm:.0f} us per question fused, {km:.0f} us keyword only. No model, no network.",
        f"       median of {len(r.fused_us):,} asks in process, index warm (p95 {_p95(r.fused_us):.0f} us fused,"
        f" {_p95(r.keyword_us):.0f} us keyword); Python {sys.version.split()[0]}.",
    ]


def _range(xs: list[float]) -> str:
    return f"{min(xs):.2f} to {max(xs):.2f}" if xs else "none"

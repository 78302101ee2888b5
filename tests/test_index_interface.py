"""The index behind one interface: the code outside engine/index/textindex.py reaches a
TextIndex through its public methods (read, in_snapshot, vouch, memory_line, ...), never its
private fields, so a change inside the index cannot break a cache that leaned on one; and
Memory (engine/memory.py) talks to the fleet's index (engine/index/fleetindex.py) alone: it
imports no cache module, no thread and no fork. Read over ast, so a name in a comment or a
string is not counted, and an import inside a function is."""

from __future__ import annotations

import ast
from pathlib import Path

from engine.index.textindex import TextIndex

ROOT = Path(__file__).resolve().parent.parent
TEXTINDEX = ROOT / "engine" / "index" / "textindex.py"


def _private_names() -> set[str]:
    """Every `_name` TextIndex defines: its methods and properties, and what its __init__ sets."""
    names = {n for n in vars(TextIndex) if n.startswith("_") and not n.startswith("__")}
    tree = ast.parse(TEXTINDEX.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            names.add(node.attr)
    return names


def _product_files() -> list[Path]:
    files = [p for d in ("engine", "kbtools", "kbtui") for p in sorted((ROOT / d).rglob("*.py"))]
    return [p for p in files if p != TEXTINDEX]


def test_textindex_private_names_are_found():
    """The scan below means something only if it knows the names it looks for."""
    names = _private_names()
    assert {"_memory", "_vouched", "_checkout", "_open_checked", "_write_lock"} <= names
    assert "_guard" not in names and "_idle" not in names  # public now (read), the pool's (indexpool)


def test_nothing_outside_textindex_touches_its_private_names():
    """`x._name` for any of TextIndex's private names, on anything but `self`, outside textindex.py.
    The indexes' neighbours each have their own `self._lock` and the like: `self.` is theirs."""
    names = _private_names()
    found = []
    for path in _product_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and node.attr in names):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "TextIndex's private names reached from outside it:\n" + "\n".join(found)


def test_nothing_outside_the_catalogue_touches_its_index():
    """The keyword catalogue's inverted index is taken and given through Catalogue.hold_index and
    index_by_word: OpeningCatalogue and the opening cache once assigned and read its private dicts."""
    from engine.rank.catalogue import Catalogue

    catalogue_py = ROOT / "engine" / "rank" / "catalogue.py"
    tree = ast.parse(catalogue_py.read_text(encoding="utf-8"))
    holder = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "hold_index")
    names = {n.attr for n in ast.walk(holder) if isinstance(n, ast.Attribute) and n.attr.startswith("_")}
    assert {"_postings", "_phrases", "_idf", "_weights"} <= names and hasattr(Catalogue, "index_by_word")
    found = [f"{p.relative_to(ROOT)}:{n.lineno}: {ast.unparse(n)}"
             for p in _product_files() if p != catalogue_py
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(n, ast.Attribute) and n.attr in names]
    assert not found, "Catalogue's private index reached from outside it:\n" + "\n".join(found)


def test_the_pool_holds_the_idle_connections_not_the_index(tmp_path):
    """indexpool owns the idle list: a connection given back is found there, and an index has no
    field the pool writes to."""
    from engine.index import indexpool
    from engine.notes.fleet import discover

    (tmp_path / "a.md").write_text("# A\n\nsome words here\n", encoding="utf-8")
    index = TextIndex(discover([tmp_path]).bases[0])
    index.update()
    assert index.records()  # a read took a connection and gave it back
    assert not hasattr(index, "_idle")
    con = indexpool.take_idle(index)
    assert con is not None and indexpool.take_idle(index) is None
    indexpool.give_back(index, con)
    assert indexpool.drop_idle(index) == [con]
    con.close()
    index.close()


FORBIDDEN_MODULES = ("threading", "multiprocessing", "concurrent", "_thread")


def _imported(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{a.name}" if base else a.name) for a in node.names]
    return out


def test_memory_imports_no_cache_thread_or_fork():
    """Memory sees the fleet's index (FleetIndex) and nothing of how it keeps its caches, its
    threads or its forks: no *_cache module, no fleet_plans, no resident_legs, no threading."""
    memory = ROOT / "engine" / "memory.py"
    bad = []
    for line, name in _imported(memory):
        last = name.rpartition(".")[2]
        if (name.split(".")[0] in FORBIDDEN_MODULES or last.endswith("_cache") or "_cache." in name
                or last in ("fleet_plans", "resident_legs", "threading", "fork")):
            bad.append(f"engine/memory.py:{line}: imports {name}")
    tree = ast.parse(memory.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # os.fork, threading.local reached through a module imported elsewhere
        if isinstance(node, ast.Attribute) and node.attr in ("fork", "local", "Lock", "RLock", "Thread"):
            bad.append(f"engine/memory.py:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "\n".join(bad)


def test_memory_is_within_its_budget():
    """The contract stays small enough to read: under the 500-line rule, with room."""
    lines = (ROOT / "engine" / "memory.py").read_text(encoding="utf-8").count("\n")
    assert lines < 500, f"engine/memory.py is {lines} lines"

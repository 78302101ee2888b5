"""`kb serve`: the same Memory over MCP (stdio), for other people's runtimes.

Tools: kb_route, kb_retrieve, kb_remember, kb_fleet, kb_list. Every one answers through the
one Memory this process opened, so MCP cannot answer differently from `kb route` about one
question (the reference's MCP server once assembled the pipeline by hand, which is how two
surfaces drifted apart).

Nothing but protocol goes to stdout: the SDK points fd 1 at stderr while it serves, and logs
go to stderr. The server serves only the bases it was started with: a path argument is
resolved the way the filesystem resolves it (`..`, symlinks, absolute) and refused by name
when it lands outside them (engine/notes/confine).

The `mcp` SDK is imported here, inside the functions, so `kb route` never pays for it.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import time
from typing import Any

from .. import version
from ..clean import as_text
from ..notes.confine import confine
from ..errors import KbError
from ..memory import Memory
from ..query import top_limit
from dataclasses import asdict
from ..errors import os_error_line
from .rpcwire import CheckedWire
from .toolargs import argument_problem

log = logging.getLogger("kb.serve")
STALE_CHECK_SECONDS = 1.0  # a long-lived server re-reads changed notes, at most this often


class _Fresh:
    """Keeps a long-running server's index in step with notes edited while it runs."""

    def __init__(self, memory: "Memory"):
        self.memory = memory
        self.last = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> None:
        with self.lock:
            now = time.monotonic()
            if now - self.last < STALE_CHECK_SECONDS:
                return
            self.last = now
            if self.memory.stale():
                self.memory.refresh()


def fleet_json(memory: "Memory") -> dict[str, Any]:
    roster = memory.roster
    snap = memory.snapshot()
    members = []
    for m in roster.members:
        recs = snap.records.get(m.key, {}).values()
        members.append({
            "agent": m.key, "name": m.name, "role": m.role, "ends": m.ends,
            "entries": sum(1 for r in recs if r.is_entry), "unreachable": sum(1 for r in recs if not r.is_entry),
        })
    return {
        "name": roster.name, "role": roster.role, "classifier": roster.classifier,
        "classifier_timeout_ms": roster.classifier_timeout_ms, "agents": members, "problems": list(roster.problems),
    }


def list_notes(memory: "Memory", path: str | None = None) -> dict[str, Any]:
    """The notes under `path` (a base, or a folder or note inside one); every base when None."""
    snap = memory.snapshot()
    if path is None:
        scopes = [(b.name, "") for b in memory.bases]
    else:
        inside = confine(memory.bases, path)
        scopes = [(inside.base.name, inside.rel)]
    notes = []
    for base, rel in scopes:
        for r in sorted(snap.records.get(base, {}).values(), key=lambda r: r.path):
            if rel and r.path != rel and not r.path.startswith(rel.rstrip("/") + "/"):
                continue
            notes.append({
                "id": f"{base}/{r.path}", "agent": base, "path": r.path, "title": r.title, "purpose": r.purpose,
                "keys": list(r.keys), "species": r.species, "entry": r.is_entry,
            })
    return {"path": path, "notes": notes}


def _text_values(value):
    """Every string in a tool's result as text MCP can send: a base or fleet folder named by
    bytes that are not UTF-8 (a lone surrogate to Python) failed the reply's encoding, and
    with it every tool, and the greeting that lists the bases. Escaped (clean.as_text), as
    every text surface shows it; `kb_list` and the paths a tool takes accept it back."""
    if isinstance(value, str):
        return as_text(value)
    if isinstance(value, dict):
        return {as_text(k) if isinstance(k, str) else k: _text_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_text_values(v) for v in value]
    return value


def build_server(memory: "Memory"):
    """The MCP server over one Memory. Separate from `serve` so it can be built without running."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    fresh = _Fresh(memory)
    names = ", ".join(as_text(b.name) for b in memory.bases)
    server = MCPServer(
        "kb",
        version=version(),  # the initialize reply's serverInfo.version: the package's, as `kb --version`
        instructions=(
            f"A fleet of agents kept as markdown notes ({names}). kb_route says which note answers a question, "
            "which agent owns it and whether to trust it (verdict hit, guess or nothing); kb_retrieve hands over "
            "the passages to read; kb_remember measures a claim against the notes (ADD, UPDATE or NOOP) and can "
            "write a new note; kb_fleet is the roster; kb_list lists the notes. Paths are agent/path "
            "(zed/knowledge/deploy-checklist.md) or absolute, and must stay inside these bases."
        ),
        log_level="WARNING",
    )

    server.middleware.append(_typed_arguments(server))
    _add_tools(server, memory, _guarded_by(fresh, ToolError))
    return server


def _guarded_by(fresh, ToolError):
    """The wrapper every tool runs in: the index brought up to date first, a refusal turned into
    an error the caller reads (ToolError, the SDK's)."""

    def guarded(fn):
        # A refusal is an answer the caller should read, not a crash: one line, marked as an error.
        @functools.wraps(fn)  # the SDK reads the tool's signature through __wrapped__
        def call(*a, **kw):
            try:
                fresh()
                return _text_values(fn(*a, **kw))
            except KbError as e:
                log.info("refused: %s", e)
                raise ToolError(as_text(str(e))) from None
            except OSError as e:
                # Not a bare "Error executing tool": the caller gets the file and the reason.
                log.warning("%s failed: %s", fn.__name__, os_error_line(e))
                raise ToolError(as_text(os_error_line(e))) from None

        return call

    return guarded


def _add_tools(server, memory: "Memory", guarded) -> None:
    """kb's five tools on `server`, each run through `guarded`."""

    @server.tool(name="kb_route")
    @guarded
    def kb_route(question: str, top: int = 5) -> dict[str, Any]:
        """Which note answers the question, which agent owns it, the verdict (hit, guess, nothing), the reading list
        (top rows; no limit below what the question's candidates hold, and top_limit says when top asked past it)."""
        answer = memory.route(question, top=max(1, top)).to_json()
        return {**answer, **_past(top, len(answer["results"]))}

    @server.tool(name="kb_retrieve")
    @guarded
    def kb_retrieve(question: str, top: int = 5) -> dict[str, Any]:
        """The fused reading list alone: the passages to read for a question, best first (top rows; no limit below
        what the question's candidates hold, and top_limit says when top asked past it)."""
        rows = memory.retrieve(question, top=max(1, top))
        return {"question": question, "results": [dict(asdict(r), id=r.id) for r in rows], **_past(top, len(rows))}

    @server.tool(name="kb_remember")
    @guarded
    def kb_remember(claim: str, path: str | None = None, write: bool = False, keys: list[str] | None = None,
                    title: str | None = None, purpose: str | None = None) -> dict[str, Any]:
        """Measure a claim against the notes: ADD, UPDATE or NOOP, with the passage as evidence (never DELETE).

        With write=true, path (a new .md note inside a base) and at least one key, writes the note with its
        Search for: and Exists to: lines, never over an existing file, and indexes it.
        """
        return memory.remember(claim, path, write=write, keys=keys or (), title=title, purpose=purpose).to_json()

    @server.tool(name="kb_fleet")
    @guarded
    def kb_fleet() -> dict[str, Any]:
        """The roster: every agent, what it does, where it stops, how many notes it has; and the classifier."""
        return fleet_json(memory)

    @server.tool(name="kb_list")
    @guarded
    def kb_list(path: str | None = None) -> dict[str, Any]:
        """The notes of a base, or of a folder inside one (agent/folder), or of every base when no path is given."""
        return list_notes(memory, path)


def _past(top: int, rows: int) -> dict[str, Any]:
    """`top_limit` when a call asks past the default for more rows than the question's candidates
    hold, as `kb route --json` says it (engine/cli/route.top_limit: the one rule)."""
    past = top_limit(top, rows)
    return {"top_limit": past} if past else {}


def _typed_arguments(server):
    """A middleware (the library's public hook, run before its own lax validation) that
    answers a tools/call whose arguments do not fit the tool's schema with JSON-RPC's
    invalid params, naming the argument (engine/serve/toolargs)."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    schemas: dict[str, dict[str, Any]] = {}

    async def check(ctx, call_next):
        params = ctx.params if ctx.method == "tools/call" and isinstance(ctx.params, dict) else {}
        name = params.get("name")
        if isinstance(name, str):
            if not schemas:
                schemas.update((t.name, t.input_schema) for t in await server.list_tools())
            problem = argument_problem(name, schemas[name], params.get("arguments")) if name in schemas else None
            if problem:
                log.info("refused: %s", problem)
                raise MCPError(INVALID_PARAMS, f"Invalid params: {problem}")
        return await call_next(ctx)

    return check


def serve(paths: list[str], *, coverage_rule: bool | None = None, record: bool = True) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kb serve: %(message)s")
    memory = Memory(paths, resident=True, coverage_rule=coverage_rule, record_misses=record)  # a bad path is refused here, before any protocol starts
    snap = memory.snapshot()  # indexed before the first request, not during it
    log.warning("serving %d entries across %d agents (%s)", snap.catalogue.n, len(memory.bases),
                ", ".join(b.name for b in memory.bases))
    server = build_server(memory)
    wire = CheckedWire()  # a line the library cannot read gets its JSON-RPC error reply
    try:
        server.run("stdio")
    finally:
        wire.close()
    return 0

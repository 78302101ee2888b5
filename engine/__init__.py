"""kbtui's ranking engine: pure Python and stdlib sqlite3. Never imports textual.

    from engine import Memory
    answer = Memory("examples/demo").ask("how much protein per meal")
    answer.verdict, answer.agent.name, answer.results[0].path
"""

from __future__ import annotations

from .answer import Answer, Result
from .errors import KbError
from .memory import Memory
from .query import Query

__all__ = ["Answer", "KbError", "Memory", "Query", "Result"]

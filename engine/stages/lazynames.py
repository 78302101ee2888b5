"""A package's names imported when first asked for (PEP 562's module `__getattr__`).

The optional stages (engine.stages.purpose, engine.stages.rerank) name their classes and constants at the
package, but a process that never uses a stage must not import it: `kb route` and `kb boot`
import neither, and `import engine.stages.rerank.model` does not import the rest of its package.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_names(package: str, where: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: `where` maps a module to the names it provides."""
    module_of = {name: module for module, names in where.items() for name in names}

    def __getattr__(name: str) -> Any:
        try:
            module = module_of[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(module), name)

    return __getattr__

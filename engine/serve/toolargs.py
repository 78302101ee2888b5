"""An MCP tool's arguments read strictly against the JSON Schema its signature declares.

The MCP library validates arguments with pydantic in lax mode: `"write": "yes"` became
True, `"top": "5"` became 5, `"top": true` a top of 1, and a misspelt argument (`wirte`) was
dropped without a word, so a caller's mistake changed what happened. A wrong argument is the
caller's error, not the tool's: `kb serve` answers it as JSON-RPC's invalid params, in one
line naming the tool and the argument (never echoing the value: it is the caller's data).

Only what the tools' schemas use is read: string, integer, boolean, null, array of items,
and anyOf of those. A JSON number with a fraction is not an integer; true is not an integer.
"""

from __future__ import annotations

from typing import Any

# A JSON value's type, as JSON Schema names it (bool before int: True is an int to Python).
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    (list, "array"), (dict, "object"), (type(None), "null"),
)


def json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def _fits(schema: dict[str, Any], value: Any) -> bool:
    if "anyOf" in schema:
        return any(_fits(s, value) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind is None:  # a schema that says nothing accepts anything
        return True
    if json_type(value) != kind:
        return False
    return kind != "array" or all(_fits(schema.get("items", {}), v) for v in value)


def _described(schema: dict[str, Any]) -> str:
    """What a schema expects, as a person says it: "a string or null", "an array of strings"."""
    if "anyOf" in schema:
        return " or ".join(_described(s) for s in schema["anyOf"])
    kind = schema.get("type", "anything")
    if kind == "array" and "items" in schema:
        return f"an array of {_described(schema['items']).split(' ', 1)[1]}s"
    if kind == "boolean":
        return "a boolean (true or false)"
    return _article(kind)


def _article(kind: str) -> str:
    """ "a string", "an integer"; null and anything stand alone."""
    return kind if kind in ("null", "anything") else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def argument_problem(tool: str, schema: dict[str, Any], arguments: Any) -> str | None:
    """The one line saying what is wrong with `arguments` for `tool`, or None when they fit."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return f"{tool}: arguments must be an object, not {_article(json_type(arguments))}"
    properties: dict[str, Any] = schema.get("properties", {})
    for name in arguments:
        if name not in properties:
            takes = ", ".join(properties) or "none"
            return f"{tool}: no argument named {name} (it takes {takes})"
    for name in schema.get("required", ()):
        if name not in arguments:
            return f"{tool}: {name} is required"
    for name, value in arguments.items():
        expected = properties[name]
        if _fits(expected, value):
            continue
        array = next((s for s in expected.get("anyOf", [expected]) if s.get("type") == "array"), None)
        if array is not None and isinstance(value, list):  # an array, one of whose items is wrong: name it
            items = array.get("items", {})
            at = next(i for i, v in enumerate(value) if not _fits(items, v))
            return f"{tool}: {name}[{at}] must be {_described(items)}, not {_article(json_type(value[at]))}"
        return f"{tool}: {name} must be {_described(expected)}, not {_article(json_type(value))}"
    return None

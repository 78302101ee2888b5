"""kbtui: the reading room, a Textual app over engine.Memory."""

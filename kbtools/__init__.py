"""Tooling around kbtui that is not the product: benches and measurement scripts."""

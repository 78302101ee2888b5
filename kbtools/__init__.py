"""Tooling beside the runtime packages: benchmarks and generators, never imported by kb or kbtui."""

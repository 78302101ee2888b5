"""Cutting a note's sections into the chunks the text index holds.

Chunks split at headings; a section over about CHUNK_CHARS characters is cut into windows
that overlap by CHUNK_OVERLAP, each cut made at a blank line when one is near, so a
sentence is rarely split. The last window ends at the section's end and starts CHUNK_CHARS
before it, so it overlaps the one before by more: every window is a full one. The heading
path travels with every chunk: it carries context the chunk itself rarely repeats.

Why the last window is full: BM25 weighs a match by the length of the chunk that holds it,
and a file ranks at its best chunk. Cut where the windows before it stopped, the last one
was whatever was left, often a few hundred characters with the 300 repeated from the window
before, and a word said once in passing at the end of a long section scored there as in a
short note about it. Measured on Cranfield and NFCorpus (docs/quality.md), it was the chunk
rule's whole cost against ranking documents whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from .note import Section

CHUNK_CHARS = 1800  # "How the Catalogue Ranks": sections over ~1800 chars are windowed
CHUNK_OVERLAP = 300  # and each window repeats the last 300 chars of the one before
# A cut looks back this far for a blank line before it settles for a hard cut.
_CUT_SLACK = 600


@dataclass(frozen=True)
class Chunk:
    """A piece of a note the text index holds, with where it starts."""

    heading_path: str
    text: str
    line: int


def chunk_sections(sections: tuple[Section, ...] | list[Section]) -> list[Chunk]:
    chunks: list[Chunk] = []
    for s in sections:
        for piece in windows(s.text):
            chunks.append(Chunk(heading_path=s.heading_path, text=piece, line=s.line))
    return chunks


def windows(text: str, size: int = CHUNK_CHARS, overlap: int = CHUNK_OVERLAP) -> list[str]:
    if len(text) <= size:
        return [text] if text.strip() else []
    out = []
    start = 0
    n = len(text)
    while n - start > size:  # the text runs past this window: cut it
        end = start + size
        blank = text.rfind("\n\n", end - _CUT_SLACK, end)
        if blank > start + overlap:
            end = blank
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        # Overlap, but always move forward.
        start = max(end - overlap, start + 1)
    # The rest fits in one window: a full one, ending at the section's end (see above).
    piece = text[n - size:].strip()
    if piece:
        out.append(piece)
    return out

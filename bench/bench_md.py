"""One benchmark's section of BENCHMARKS.md: the text between its begin and end markers,
replaced in place (or appended the first time), written atomically."""

from __future__ import annotations

from pathlib import Path

PATH = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def write_section(begin: str, end: str, section: str) -> Path:
    """Replaces everything from `begin` to `end` (markers included) with `section`, which
    starts with `begin` and ends with `end`."""
    old = PATH.read_text() if PATH.exists() else "# Benchmarks\n"
    section = section.strip("\n")
    if begin in old and end in old:
        new = old[: old.index(begin)] + section + old[old.index(end) + len(end) :]
    else:
        new = old.rstrip("\n") + "\n\n" + section + "\n"
    tmp = PATH.with_suffix(".md.tmp")
    tmp.write_text(new)
    tmp.replace(PATH)
    return PATH

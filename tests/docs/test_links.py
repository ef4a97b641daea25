"""Every relative link in the README and docs/ names a file that exists, and its #anchor a heading there.

The reference moved from the README into docs/; a link left pointing at an old section, or at a
heading renamed since, would send a reader nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in FENCE.sub("", markdown).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def links(document: Path) -> list[str]:
    return [target for target in LINK.findall(FENCE.sub("", document.read_text())) if "://" not in target]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(REPO).as_posix())
def test_relative_links_resolve(document: Path) -> None:
    broken = []
    for target in links(document):
        path, _, anchor = target.partition("#")
        file = (document.parent / path).resolve() if path else document
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert not broken, broken


def test_readme_links_every_document() -> None:
    linked = {(REPO / target.partition("#")[0]).resolve() for target in links(REPO / "README.md")}
    unlinked = [doc.name for doc in DOCUMENTS[1:] if doc.resolve() not in linked]
    assert not unlinked, f"docs not linked from the README: {unlinked}"

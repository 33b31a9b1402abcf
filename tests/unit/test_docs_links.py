"""The README and docs point only at what the repository holds: every relative Markdown link
resolves (its `#anchor` too, for links into Markdown pages), and no page names a design document
or specification file the repository does not ship (DESIGN.md, spec/...)."""

from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
ABSENT = re.compile(r"\bDESIGN\.md\b|`spec/[^`]*`")


def _pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces -> -)."""
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_every_relative_link_resolves(project_root):
    broken = []
    for page in _pages(project_root):
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_no_page_names_a_file_the_repository_lacks(project_root):
    named = []
    for page in _pages(project_root):
        for hit in ABSENT.findall(page.read_text(encoding="utf-8")):
            named.append(f"{page.name}: {hit}")
    for ref in ("LICENSE",):
        assert (project_root / ref).is_file(), ref
    assert not named, named


def test_the_default_configs_reference_comment_names_the_bundled_file(project_root):
    import json

    line = next(
        x for x in (project_root / "config" / "config.yaml").read_text().splitlines() if x.startswith("reference:")
    )
    named = re.search(r"references/(\w+)\.json, id (\S+)", line)
    assert named, line
    data = json.loads((project_root / "references" / f"{named.group(1)}.json").read_text())
    assert data["reference_id"] == named.group(2), line

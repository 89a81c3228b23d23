"""`make screenshots` (issue 17, done when): the README's images come from the app driven over
the demo data, including search with qualifiers, the bulk edit in the editor as its preview,
and the command palette."""

from __future__ import annotations

import html
import re
from pathlib import Path

from demo.screenshots import SEARCH, make_screenshots


def svg_text(path: Path) -> str:
    """The characters an SVG screenshot draws, row by row."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in re.findall(
        r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', path.read_text()
    ):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text)))
    lines = ("".join(t for _x, t in sorted(rows[y])) for y in sorted(rows))
    return "\n".join(line.replace("\xa0", " ") for line in lines)


async def test_the_screenshots_show_search_palette_and_the_editors_preview(
    tmp_path: Path,
) -> None:
    made = {path.name for path in await make_screenshots(tmp_path)}
    assert {"search.svg", "palette.svg", "bulk_editor_preview.svg", "settings_usage.svg"} <= made
    search = svg_text(tmp_path / "search.svg")
    assert SEARCH in search
    assert "status: todo" in search and "label: bug" in search, "the chips show the qualifiers"
    palette = svg_text(tmp_path / "palette.svg")
    assert "sort by" in palette and "key: o" in palette
    preview = svg_text(tmp_path / "bulk_editor_preview.svg")
    assert "Bulk change: preview" in preview
    assert "→ Speed up the export of large projects" in preview
    assert "not changed: #" in preview, "the move the workflow refuses is named"
    assert "Usage" in svg_text(tmp_path / "settings_usage.svg")

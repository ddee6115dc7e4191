"""MkDocs hooks (loaded from mkdocs.yml): put the repository's CHANGELOG.md on the site.

The Markdown pages are written to read well on GitHub too, so they link to the changelog as
``../CHANGELOG.md``, a file outside ``docs/``. The site gets a generated page ``changelog.md`` with
its content, and those links are pointed at it (links inside the changelog to ``docs/X`` become ``X``).
"""

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT_PAGES = {"CHANGELOG.md": "changelog.md"}  # repository file -> page of the site


def _root(config) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def on_files(files, config):
    for name, uri in ROOT_PAGES.items():
        src = _root(config) / name
        if src.exists():
            text = re.sub(r"\]\(docs/", "](", src.read_text(encoding="utf-8"))
            files.append(File.generated(config, uri, content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    here = posixpath.dirname(page.file.src_uri)
    for name, uri in ROOT_PAGES.items():
        if files.get_file_from_path(uri) is None:
            continue
        target = posixpath.relpath(uri, here or ".")
        markdown = re.sub(
            rf"\]\((?:\.\./)+{re.escape(name)}(#[^)\s]*)?\)", lambda m: f"]({target}{m[1] or ''})", markdown
        )
    return markdown

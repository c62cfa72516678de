"""Sphinx configuration of the skdptune site (``make docs``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the package, when it is not installed

import skdptune  # noqa: E402

project = "skdptune"
author = "the skdptune developers"
copyright = "the skdptune developers"  # noqa: A001 (Sphinx's name)
release = skdptune.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

# Markdown pages stay Markdown (MyST); the API reference and the gallery are reStructuredText.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3  # the pages link to their own sections by GitHub-style anchors
exclude_patterns = ["_build", "_templates", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json"]
templates_path = ["_templates"]
# The user guide's toctree names pages that are still being written by glob (OPTIONAL_PAGES), so
# that the site builds before and after they land; see setup() below.
OPTIONAL_PAGES = ("gibo*", "pareto*")

# API reference: one page per public name, numpydoc docstrings.
autosummary_generate = True
autodoc_typehints = "none"  # numpydoc's Parameters sections say it
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# Gallery: every examples/plot_*.py is executed (``-D plot_gallery=0`` skips that); the other
# scripts (quickstart.py) are shown, not run.
sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("skdptune",),
    "reference_url": {"skdptune": None},
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "show_memory": False,
}

html_theme = "pydata_sphinx_theme"
html_title = f"skdptune {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 8,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "changelog": []}
html_show_sourcelink = False


class _OptionalPagesFilter(logging.Filter):
    """Drop Sphinx's "toctree glob pattern didn't match" warning for OPTIONAL_PAGES only."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("toctree glob pattern")
                    and any(repr(pattern) in message for pattern in OPTIONAL_PAGES))


def setup(app):
    # Sphinx names its loggers "sphinx." + module; the warning comes from sphinx.directives.other
    logging.getLogger("sphinx.sphinx.directives.other").addFilter(_OptionalPagesFilter())

"""Sphinx configuration of the compendium's book (``make book``).

The sources are assembled by ``book/build.py`` (the README as the front page, one chapter per
committed notebook, the gathered ledgers); the notebooks are rendered from their committed
outputs and never re-executed.
"""

from pathlib import Path

project = "dpclust"
author = "The dpclust authors"
copyright = "the dpclust authors (MIT)"

extensions = ["myst_nb"]
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

nb_execution_mode = "off"  # the committed paper-profile outputs are the book's content
nb_merge_streams = True
nb_render_markdown_format = "myst"  # Markdown outputs (IPython's display(Markdown(...))) with their math, as JupyterLab
myst_enable_extensions = ["dollarmath", "amsmath"]
# $$...$$ inside a paragraph (no blank line around it) is display math, as JupyterLab renders it; without this, myst
# reads the two dollars as two inline delimiters and garbles the formula and the text after it.
myst_dmath_double_inline = True
myst_heading_anchors = 3  # so that links to a section of another page resolve

# MathJax comes with the build (copied by build.py into _static/mathjax): the book reads offline.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
# That MathJax ships only the STIX-Web fonts: say so, or it waits for fonts it does not have.
# myst-nb marks the page to be ignored and its math to be processed; MathJax 2 is told the same.
mathjax2_config = {
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None, "preferredFont": None},
    "tex2jax": {
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
        "ignoreClass": "tex2jax_ignore|mathjax_ignore",
    },
}

html_theme = "sphinx_book_theme"
html_title = "dpclust: executable papers on DP clustering"
html_show_sourcelink = False
html_css_files = ["book.css"]  # CJK fonts named, wide tables and outputs scroll (copied by build.py)


def repository_url(pyproject):
    """The repository's URL from ``[project.urls]`` of pyproject.toml (Repository, else Source), or None."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    urls = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("urls", {})
    return urls.get("Repository") or urls.get("Source")


def theme_options(url):
    """The theme's options: with a repository URL, its button and Binder's launch button; without one, neither
    (a launch button needs a repository to launch, and the book loads no image from the network)."""
    options = {"show_toc_level": 2, "home_page_in_toc": True}
    if url:
        options |= {
            "repository_url": url,
            "use_repository_button": True,
            "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
        }
    return options


html_theme_options = theme_options(repository_url(Path(__file__).resolve().parents[1] / "pyproject.toml"))


def setup(app):
    # The static folder sits in the assembled sources, not beside this file.
    app.connect("config-inited", lambda app, config: config.html_static_path.append(str(app.srcdir / "_static")))

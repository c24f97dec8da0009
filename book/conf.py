"""Sphinx configuration of the compendium's book (``make book``).

The sources are assembled by ``book/build.py`` (the README as the front page, one chapter per
committed notebook, the gathered ledgers); the notebooks are rendered from their committed
outputs and never re-executed.
"""

project = "dpclust"
author = "The dpclust authors"
copyright = "the dpclust authors (MIT)"

extensions = ["myst_nb"]
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

nb_execution_mode = "off"  # the committed paper-profile outputs are the book's content
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
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
html_theme_options = {"show_toc_level": 2, "home_page_in_toc": True}
html_show_sourcelink = False


def setup(app):
    # The static folder sits in the assembled sources, not beside this file.
    app.connect("config-inited", lambda app, config: config.html_static_path.append(str(app.srcdir / "_static")))

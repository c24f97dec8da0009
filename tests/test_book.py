"""The compendium as a book: it builds from the committed notebooks, its links hold, and a
browser shows its equations and figures."""

import importlib.util
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from . import discover

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")
spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
book = importlib.util.module_from_spec(spec)
spec.loader.exec_module(book)
NOTEBOOKS = [path.stem for path in discover.notebooks()]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return book.build(tmp_path_factory.mktemp("book") / "html")


def test_every_notebook_is_a_chapter_and_the_ledgers_a_page(site):
    for stem in NOTEBOOKS:
        assert (site / "notebooks" / f"{stem}.html").is_file(), stem
    front = (site / "index.html").read_text()
    assert "What the reproductions found" in front  # the README is the front page
    ledgers = (site / "ledgers.html").read_text()
    for stem in NOTEBOOKS:
        if (ROOT / "data" / "results" / stem / "ledger.csv").is_file():
            assert f"notebooks/{stem}.html" in ledgers, stem


def test_search_index_covers_the_chapters(site):
    assert (site / "search.html").is_file()
    index = (site / "searchindex.js").read_text()
    assert "birch" in index.lower() and "ldpk" in index.lower()


def test_the_chapters_carry_their_figures_and_equations(site):
    chapter = (site / "notebooks" / "05_dp_birch.html").read_text()
    assert "<img" in chapter and 'class="math' in chapter
    assert (site / "_static" / "mathjax" / "MathJax.js").is_file()  # typeset offline


class _Math(HTMLParser):
    """The text of a page's math elements, and its text outside math and code."""

    SKIP = {"pre", "code", "script", "style"}
    VOID = {"br", "img", "hr", "input", "meta", "link", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.math, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        kind = "math" if "math" in (dict(attrs).get("class") or "").split() else "skip" * (tag in self.SKIP)
        self.stack.append((tag, kind))
        if kind == "math":
            self.math.append("")

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        kinds = {kind for _, kind in self.stack}
        if "math" in kinds:
            self.math[-1] += data
        elif "skip" not in kinds:
            self.text.append(data)


def untypeset_formulas(markdown, html):
    """The display formulas ($$...$$) of a chapter's Markdown that its HTML does not show as display math, and any
    dollar sign left in its text outside math and code (a formula read as text)."""
    parser = _Math()
    parser.feed(html)
    shown = {re.sub(r"\s+", "", math) for math in parser.math}
    formulas = re.findall(r"\$\$(.+?)\$\$", markdown, re.S)
    missing = [f.strip() for f in formulas if "\\[" + re.sub(r"\s+", "", f) + "\\]" not in shown]
    text = "".join(parser.text)
    return missing + [text[max(0, m.start() - 30) : m.start() + 30] for m in re.finditer(r"\$", text)]


def test_the_formula_check_finds_a_formula_read_as_text():
    # What the book made of notebook 02's Theorem 1 when $$...$$ inside a paragraph was not display math.
    garbled = (
        '<p>two factors change:\n$<span class="math notranslate nohighlight">\\(\\frac{p}{q}\\)</span>'
        '<span class="math notranslate nohighlight">\\(\nand with \\)</span>p=\\tfrac12$ (Eq. 7).</p>'
    )
    markdown = "two factors change:\n$$\\frac{p}{q}$$\nand with $p=\\tfrac12$ (Eq. 7)."
    assert untypeset_formulas(markdown, garbled)
    typeset = '<p>two factors change:</p><div class="math notranslate nohighlight">\\[\\frac{p}{q}\\]</div>'
    assert untypeset_formulas(markdown, typeset + '<p>and with <span class="math">\\(p=\\tfrac12\\)</span></p>') == []


def test_every_display_formula_is_typeset_as_math_as_jupyterlab_shows_it(site):
    """$$...$$ inside a paragraph (notebook 02's Theorem 1, 04's definition of DP) is display math in JupyterLab, and
    must be in the book too; so is the math of a Markdown output."""
    import nbformat

    counted = 0
    for path in book._notebooks():
        cells = nbformat.read(path, as_version=4).cells
        markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        counted += markdown.count("$$") // 2
        html = (site / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")
        assert untypeset_formulas(markdown, html) == [], path.stem
    assert counted >= 10


def test_the_sweeps_page_shows_each_point_folder_as_named():
    from dpclust.sweep import point_label

    names = [point_label({"threshold": 0.3, "branching_factor": 10}), point_label({"epsilons": [0.5, 1]})]
    text = (ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in text for name in names), "docs/sweeps.md names the point folders otherwise"


def test_every_page_names_cjk_fonts_and_lets_wide_tables_scroll(site):
    css = (site / "_static" / "book.css").read_text()
    assert '"Noto Sans CJK SC"' in css and "overflow-x: auto" in css
    for page in _pages(site):
        assert "_static/book.css" in page.read_text(encoding="utf-8"), page.name


def _pages(site):
    return [p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts]


def test_every_page_has_a_title_of_its_own(site):
    titles = {}
    for page in _pages(site):
        match = re.search(r"<title>(.*?)</title>", page.read_text(), re.S)
        titles.setdefault(match.group(1).strip(), []).append(page.relative_to(site).as_posix())
    shared = {title: pages for title, pages in titles.items() if len(pages) > 1}
    assert not shared, f"pages that share a title: {shared}"
    chapters = [book._title(nb) for nb in book._notebooks()]
    front = (ROOT / "README.md").read_text().splitlines()[0].removeprefix("# ")
    assert len(set(chapters + [front])) == len(chapters) + 1, "a chapter is titled as the front page or another one"


def test_no_page_loads_from_the_network_nor_launches_without_a_repository(site):
    # The book reads offline: no image from elsewhere; and no launch button while no repository URL is configured.
    conf = _conf()
    assert conf.repository_url(ROOT / "pyproject.toml") is None
    for page in _pages(site):
        html = page.read_text()
        assert not re.search(r"<img[^>]+src=\"https?:", html), page.name
        assert not re.search(r"href=\"https?://mybinder", html) and "launch-buttons" not in html, page.name
    with_url = conf.theme_options("https://example.org/dpclust")
    assert with_url["launch_buttons"]["binderhub_url"] and with_url["repository_url"] == "https://example.org/dpclust"
    assert "launch_buttons" not in conf.theme_options(None)


def _conf():
    spec = importlib.util.spec_from_file_location("book_conf", ROOT / "book" / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_link_check_finds_a_broken_link_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.html").write_text(
        '<a id="top" href="b.html#nowhere">x</a><img src="gone.png">'
        '<a href="a.html#top">ok</a><a href="https://example.org/x">ext</a>'
    )
    (tmp_path / "b.html").write_text('<p id="here">b</p>')
    found = {(link, why) for _, link, why in book.broken_links(tmp_path)}
    assert found == {("b.html#nowhere", "no such anchor"), ("gone.png", "no such file")}


def test_the_built_book_has_no_broken_internal_link(site):
    assert book.broken_links(site) == []


def _browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip(
            "no chromium and chromedriver on PATH; to run the browser test, install them "
            "(Debian: sudo apt-get install chromium chromium-driver)"
        )
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver))


# Typeset when every math element holds MathJax's rendering (or MathJax reports an error); until then null.
TYPESET = """const math = Array.from(document.querySelectorAll('.math.notranslate'));
    const typeset = math.filter(m => m.querySelector('.MathJax, .MathJax_Display')).length;
    const errors = document.querySelectorAll('.MathJax_Error, merror').length;
    return math.length && (typeset === math.length || errors) ? [math.length, typeset, errors] : null;"""
IMAGES = """return Array.from(document.images).filter(i => !/^https?:/.test(i.getAttribute('src')))
    .map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0]);"""


# Tables, code and outputs that reach past the article's column with no scrolling box around them inside it, and
# display formulas and outputs that cut off what does not fit in them rather than scroll it.
SPILLED = """const article = document.querySelector('article.bd-article');
    const box = article.getBoundingClientRect();
    const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
    const past = Array.from(article.querySelectorAll('table, pre, .output')).filter(el => {
      const r = el.getBoundingClientRect();
      if (!r.width || (r.left >= box.left - 1 && r.right <= box.right + 1)) return false;
      for (let e = el.parentElement; e && e !== article; e = e.parentElement) if (scrolls(e)) return false;
      return !scrolls(el);
    });
    const cut = Array.from(article.querySelectorAll('div.math, .output'))
      .filter(el => el.scrollWidth > el.clientWidth + 1 && !scrolls(el));
    return past.concat(cut).map(el => el.tagName + '.' + el.className);"""
# The font families of the element that holds the papers' Chinese titles (notebook 02's first paragraph).
CJK_FONT = """const walker = document.createTreeWalker(document.querySelector('article'), NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) if (/[\\u4e00-\\u9fff]/.test(walker.currentNode.data))
      return getComputedStyle(walker.currentNode.parentElement).fontFamily;
    return null;"""
PAGES = [
    ("index.html", "book_front.png"),
    ("notebooks/05_dp_birch.html", "book_chapter.png"),
    ("notebooks/02_ldp_kmodes_sampling.html", "book_chapter_02.png"),
    ("ledgers.html", "book_ledgers.png"),
]


def test_a_browser_shows_typeset_equations_and_decoded_figures(site):
    """Figures decoded, every equation typeset (notebook 02 holds display math inside paragraphs), wide tables
    scrolling inside the column, and the Chinese titles in a CJK font the page names."""
    from selenium.webdriver.support.ui import WebDriverWait

    shots = ROOT / "data" / "results" / "smoke"
    shots.mkdir(parents=True, exist_ok=True)
    browser = _browser()
    try:
        for page, shot in PAGES:
            browser.get((site / page).as_uri())
            [images] = WebDriverWait(browser, 30).until(
                lambda b: (lambda imgs: [imgs] if all(ok for _, ok in imgs) else None)(b.execute_script(IMAGES))
            )
            assert images or page == "ledgers.html", f"{page} shows no figure"
            if page.startswith("notebooks/"):
                n_math, typeset, errors = WebDriverWait(browser, 60).until(lambda b: b.execute_script(TYPESET))
                assert n_math > 10 and typeset == n_math and errors == 0, (page, n_math, typeset, errors)
            assert browser.execute_script(SPILLED) == [], page
            if "02_" in page:
                assert "Noto Sans CJK SC" in browser.execute_script(CJK_FONT), page
            browser.save_screenshot(str(shots / shot))
    finally:
        browser.quit()

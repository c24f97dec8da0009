# dpclust: every target creates .venv and installs what it needs on first use.
#   make reproduce   all notebooks, paper profile (papermill): each run staged, then its notebook, tables and
#                    figures replace the committed ones together; a failed run changes nothing
#   make verify      rerun all notebooks (paper profile) in a temporary folder; compare every result table
#   make test        ruff, unit tests (incl. the wheel check and the book) + every notebook in the smoke
#                    profile (nbval)
#   make sweep       a papermill parameter sweep (NOTEBOOK=..., GRID=name=v1,v2,..., OUT=...,
#                    SCHEDULER=tcp://host:8786 to run it on a Dask cluster)
#   make bench       benchmarks
#   make data        fetch missing data files and report what is present
#   make lab         JupyterLab on the notebooks
#   make assignments the paper notebooks as an nbgrader course in assignments/ (source/<stem>/<stem>.ipynb,
#                    nbgrader_config.py); refuses to overwrite a notebook. Plain student versions:
#                    python -m dpclust assignments --student --out DIR
#   make book        the compendium as a static HTML site in _build/html/ (notebooks not re-executed)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
JOBS   ?= 2
NOTEBOOK ?= 00_overview
GRID   ?= epsilon=0.5,1,2
OUT    ?= data/results/sweeps/$(NOTEBOOK)
SCHEDULER ?=

export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: install reproduce verify test sweep bench data lab assignments book browser clean-venv

# The exact versions of requirements.lock, then the two packages of this repository (the algorithms in lib/,
# the compendium's tooling at the root) without resolving anything again.
$(VENV)/.installed: requirements.lock pyproject.toml lib/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e ./lib -e .
	touch $@

$(VENV)/.bench-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ./lib -e ".[test,bench]"
	touch $@

install: $(VENV)/.installed

reproduce: $(VENV)/.installed
	$(BIN)/python -m dpclust reproduce --profile paper --jobs $(JOBS)

verify: $(VENV)/.installed
	$(BIN)/python -m dpclust verify --jobs $(JOBS)

test: $(VENV)/.installed browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests
	DPCLUST_PROFILE=smoke $(BIN)/python -m pytest --nbval-lax --nbval-current-env notebooks

sweep: $(VENV)/.installed
	$(BIN)/python -m dpclust sweep $(NOTEBOOK) --grid $(GRID) --jobs $(JOBS) --out $(OUT) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

bench: $(VENV)/.bench-installed
	$(BIN)/python benchmarks/run.py

data: $(VENV)/.installed
	$(BIN)/python -m dpclust data --fetch

lab: $(VENV)/.installed
	$(BIN)/jupyter lab notebooks

assignments: $(VENV)/.installed
	$(BIN)/python -m dpclust assignments

book: $(VENV)/.installed
	$(BIN)/python book/build.py _build/html

# The book's browser test needs a headless Chromium and its driver (Debian packages); without
# them it is skipped with a message.
browser:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } \
	  >/dev/null 2>&1 || echo "no Chromium could be installed here: the book's browser test will be skipped"

clean-venv:
	rm -rf $(VENV)

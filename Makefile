# dpclust: every target creates .venv and installs what it needs on first use.
#   make reproduce   all notebooks, paper profile (papermill): each run staged, then its notebook, tables and
#                    figures replace the committed ones together; a failed run changes nothing
#   make verify      rerun all notebooks (paper profile) in a temporary folder; compare every result table
#                    (SEED=S: rerun at another root seed; check that every headline verdict survives)
#   make stability   rerun the paper notebooks at root seeds 1-4, commit their draws beside each ledger
#                    (replicates.csv), then reproduce them and the overview with those replicates
#   make test        ruff, unit tests (incl. the wheel check and the book) + every notebook in the smoke
#                    profile (nbval)
#   make test-minimum  the unit tests on the lowest versions pyproject.toml allows (.venv-minimum, Python 3.10)
#   make sweep       a papermill parameter sweep, by default 04_idp_kmeans at epsilons 0.5, 1 and 2 (one run each):
#                    NOTEBOOK=..., GRID='name=v1,v2,...' or GRID_FILE=grid.yaml, PARAMS='name=value ...', PROFILE=smoke,
#                    JOBS=2, TIMEOUT=1800, OUT=...; SCHEDULER=tcp://host:8786 or SCHEDULER_FILE=... on a Dask cluster
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
# The Pythons the compendium is tested on, each with the lock `make` installs for it. requirements.lock holds
# the versions that produced the committed outputs (Python 3.11); they install unchanged on 3.12 and 3.13.
SUPPORTED := 3.10 3.11 3.12 3.13
LOCK_3.10 := requirements/py3.10.lock
LOCK_3.11 := requirements.lock
LOCK_3.12 := requirements.lock
LOCK_3.13 := requirements.lock
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
LOCK   := $(LOCK_$(PY_VERSION))
# .venv follows $(PYTHON): built with another supported Python version, it is built again (a Python that is refused
# changes nothing on disk).
ifneq ($(LOCK),)
ifneq ($(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null),$(PY_VERSION))
  $(shell rm -f $(VENV)/.installed)
endif
endif
JOBS   ?= 2
# make sweep: one papermill run of NOTEBOOK per value of each grid parameter (see the sweep target)
NOTEBOOK ?= 04_idp_kmeans
GRID   ?= epsilons=0.5,1,2
GRID_FILE ?=
PARAMS ?=
PROFILE ?=
TIMEOUT ?= 1800
OUT    ?= data/results/sweeps/$(NOTEBOOK)
SCHEDULER ?=
SCHEDULER_FILE ?=

export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: install unsupported-python reproduce verify stability test test-minimum sweep bench data lab assignments book clean-venv

# The exact versions of the lock for this Python (requirements.lock for 3.11), then the two packages of this
# repository (the algorithms in dpclust_lib/, the compendium's tooling at the root) without resolving anything again.
$(VENV)/.installed: $(or $(LOCK),unsupported-python) pyproject.toml dpclust_lib/pyproject.toml
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e ./dpclust_lib -e .
	touch $@

$(VENV)/.bench-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ./dpclust_lib -e ".[test,bench]"
	touch $@

unsupported-python:
	@echo "$(PYTHON) is $(if $(PY_VERSION),Python $(PY_VERSION),not a Python that runs): the compendium supports Python\
	 $(SUPPORTED) (one lock each). Give one: make $(MAKECMDGOALS) PYTHON=/path/to/python3.11" >&2; exit 1

install: $(VENV)/.installed

reproduce: $(VENV)/.installed
	$(BIN)/python -m dpclust reproduce --profile paper --jobs $(JOBS)

verify: $(VENV)/.installed
	$(BIN)/python -m dpclust verify --jobs $(JOBS)$(if $(SEED), --seed $(SEED))

stability: $(VENV)/.installed
	$(BIN)/python -m dpclust stability --jobs $(JOBS)

test: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests
	DPCLUST_PROFILE=smoke $(BIN)/python -m pytest --nbval-lax --nbval-current-env notebooks

# The lower bounds of pyproject.toml and dpclust_lib/pyproject.toml installed together (requirements/minimum.lock, on
# the oldest supported Python) and the unit tests run on them; lint, the book and the notebooks are left out.
MINIMUM := .venv-minimum
test-minimum: $(MINIMUM)/.installed
	$(MINIMUM)/bin/python -m pytest tests

$(MINIMUM)/.installed: requirements/minimum.lock pyproject.toml dpclust_lib/pyproject.toml
	@test "$(PY_VERSION)" = 3.10 || { echo "make test-minimum needs Python 3.10 (the oldest supported):\
	 make test-minimum PYTHON=/path/to/python3.10; $(PYTHON) is $(if $(PY_VERSION),Python $(PY_VERSION),not a Python that runs)" >&2; exit 1; }
	$(PYTHON) -m venv --clear $(MINIMUM)
	echo '*' > $(MINIMUM)/.gitignore
	$(MINIMUM)/bin/python -m pip install --quiet --upgrade pip
	$(MINIMUM)/bin/python -m pip install --quiet -r requirements/minimum.lock
	$(MINIMUM)/bin/python -m pip install --quiet --no-deps -e ./dpclust_lib -e .
	touch $@

# GRID='a=1,2 b=[3,4],[5]' (one grid per word) or GRID_FILE=grid.yaml; PARAMS='seed=1 max_iter=3' (fixed values);
# PROFILE=smoke (default: $$DPCLUST_PROFILE, else paper); SCHEDULER=tcp://host:8786 or SCHEDULER_FILE=scheduler.json.
SWEEP_GRID = $(if $(GRID_FILE),--grid-file '$(GRID_FILE)',$(foreach g,$(GRID),--grid '$(g)'))
SWEEP_PARAMS = $(foreach p,$(PARAMS),-p $(firstword $(subst =, ,$(p))) '$(patsubst $(firstword $(subst =, ,$(p)))=%,%,$(p))')
SWEEP_WHERE = $(if $(SCHEDULER),--scheduler $(SCHEDULER))$(if $(SCHEDULER_FILE),--scheduler-file '$(SCHEDULER_FILE)')
sweep: $(VENV)/.installed
	$(BIN)/python -m dpclust sweep $(NOTEBOOK) $(SWEEP_GRID)$(if $(PARAMS), $(SWEEP_PARAMS))$(if $(PROFILE), --profile $(PROFILE)) --jobs $(JOBS) --timeout $(TIMEOUT) --out '$(OUT)'$(if $(SWEEP_WHERE), $(SWEEP_WHERE))

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

clean-venv:
	rm -rf $(VENV) $(MINIMUM)

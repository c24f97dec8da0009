# dpclust: every target installs the locked set of packages it needs (uv.lock) into .venv on first use.
#   make reproduce   all notebooks, paper profile (papermill, each run a doit task): each run staged, then its
#                    notebook, tables and figures replace the committed ones together; a failed run changes nothing
#                    (RESUME=1: skip the notebooks whose last committed run read the same notebook, code, packages
#                    and data; after an interrupted or failed batch, only what did not finish runs)
#   make verify      rerun all notebooks (paper profile) in a temporary folder; compare every result table
#                    (SEED=S: rerun at another root seed; check that every headline verdict survives)
#   make stability   rerun the paper notebooks at root seeds 1-4, commit their draws beside each ledger
#                    (replicates.csv), then reproduce them and the overview with those replicates
#   make test        ruff, then every test but the slow ones over $(JOBS) cores (pytest-xdist): unit, privacy,
#                    audit, doctest, packaging, lock, wheel and book tests, and each notebook run once in the
#                    smoke profile (with its data in the reader's set, .venv-reader; and without its data) and
#                    graded through its assignment
#   make test-full   make test's tests and the slow ones: full-size statistical tests, a fresh install of the
#                    reader's set running a notebook (make test runs them too under CI=true, as .ci/run sets it)
#   make test-minimum  the unit tests on the lowest versions pyproject.toml allows (.venv-minimum, Python 3.10)
#   make sweep       a papermill parameter sweep, by default 04_idp_kmeans at epsilons 0.5, 1 and 2 (one run each):
#                    NOTEBOOK=..., GRID='name=v1,v2,...' or GRID_FILE=grid.yaml, PARAMS='name=value ...', PROFILE=smoke,
#                    JOBS=2, TIMEOUT=1800, OUT=...; SCHEDULER=tcp://host:8786 or SCHEDULER_FILE=... on a Dask cluster
#                    (make install-dask installs Dask: .venv/bin/dask scheduler, .venv/bin/dask worker)
#   make bench       benchmarks
#   make data        fetch missing data files and report what is present; fails if one the committed results used is absent
#   make lab         JupyterLab on the notebooks, with the reader's set only (no teaching extensions)
#   make lab-teach   JupyterLab on the course (COURSE=assignments), with the teacher's set: nbgrader's Formgrader
#   make assignments the paper notebooks as an nbgrader course in assignments/ (source/<stem>/<stem>.ipynb,
#                    nbgrader_config.py); refuses to overwrite a notebook. Plain student versions:
#                    python -m dpclust assignments --student --out DIR
#   make book        the compendium as a static HTML site in _build/html/ (notebooks not re-executed)
#   make lock        re-resolve uv.lock after a change to a pyproject.toml; then environment.yml from it

PYTHON ?= python3
VENV   := .venv
ifeq ($(OS),Windows_NT)
  SCRIPTS := Scripts
  EXE     := .exe
else
  SCRIPTS := bin
  EXE     :=
endif
BIN    := $(VENV)/$(SCRIPTS)
# The Pythons the compendium is tested on; uv.lock resolves each of them on Linux, macOS and Windows.
SUPPORTED := 3.10 3.11 3.12 3.13
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_EXE := $(shell $(PYTHON) -c 'import sys; print(sys.executable)' 2>/dev/null)
# uv installs the locked sets. make takes it from PyPI into a small environment of its own (.uv/), unless UV names
# one already installed (make test UV=uv).
UV_VERSION := 0.13.9
UV_BOOT := .uv/$(SCRIPTS)/uv$(EXE)
UV     ?= $(UV_BOOT)
export UV_PYTHON_DOWNLOADS := never
# Byte-compiled at install, not by the first processes of a test run (each of which would compile them again).
export UV_COMPILE_BYTECODE := 1
# uv keeps .venv on $(PYTHON): made with another Python version, it is made again.
SYNC    = $(UV) sync --locked --python "$(PY_EXE)" --quiet
JOBS   ?= 2
RESUME ?=
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

.PHONY: install install-test install-reader-test install-lab install-teach install-book install-dask install-bench unsupported-python reproduce \
	verify stability test test-full test-minimum sweep bench data lab lab-teach assignments book lock clean-venv

# Installs by purpose, each a set of extras of pyproject.toml, exactly as uv.lock pins them (with hashes):
#   reading and reproducing  notebooks         make reproduce, verify, sweep, data
#   reading in JupyterLab    lab               make lab
#   sweeps on a Dask cluster notebooks, dask   make install-dask
#   teaching                 teach             make assignments
#   building the book        book              make book
#   testing                  test (all above)  make test, test-full
# A target adds its set to .venv and leaves what is there (make reproduce after make test keeps the test tools),
# except make lab, which syncs .venv to the reader's set exactly: JupyterLab loads no teaching extension.
# Checking a set that is in place takes uv a fraction of a second, so every target checks its own.
INSTALL_DEPS := $(if $(filter $(PY_VERSION),$(SUPPORTED)),$(filter $(UV_BOOT),$(UV)) uv.lock,unsupported-python)

$(UV_BOOT):
	$(PYTHON) -m venv --clear .uv
	.uv/$(SCRIPTS)/python -m pip install --quiet uv==$(UV_VERSION)

# A .venv made by pip (before uv.lock) holds the whole former stack: it is made again.
define sync
	$(if $(wildcard $(VENV)/pyvenv.cfg),$(if $(shell grep -s '^uv = ' $(VENV)/pyvenv.cfg),,rm -rf $(VENV)))
	$(SYNC) $(1)
endef

# The reader's set (the notebooks extra, and the peers extra: the other libraries' methods notebook 06 runs beside
# the papers'); .installed is kept for whoever checks that .venv is ready.
.PHONY: $(VENV)/.installed
$(VENV)/.installed: $(INSTALL_DEPS)
	$(call sync,--inexact --extra notebooks --extra peers)
	touch $@

# A contributor's install: every set (the test set holds the others), as make test needs it.
install: install-test

install-test: $(INSTALL_DEPS)
	$(call sync,--inexact --extra test)
	touch $(VENV)/.installed

install-lab: $(INSTALL_DEPS)
	$(call sync,--extra lab)

install-teach: $(INSTALL_DEPS)
	$(call sync,--inexact --extra teach)

install-book: $(INSTALL_DEPS)
	$(call sync,--inexact --extra book)

# The reader's set and Dask (dask scheduler, dask worker): sweeps on a cluster (docs/cluster.md).
install-dask: $(INSTALL_DEPS)
	$(call sync,--inexact --extra notebooks --extra dask)
	touch $(VENV)/.installed

install-bench: $(INSTALL_DEPS)
	$(call sync,--inexact --extra test --extra bench)

unsupported-python:
	@echo "$(PYTHON) is $(if $(PY_VERSION),Python $(PY_VERSION),not a Python that runs): the compendium supports Python\
	 $(SUPPORTED) (uv.lock resolves each). Give one: make $(MAKECMDGOALS) PYTHON=/path/to/python3.11" >&2; exit 1

reproduce: $(VENV)/.installed
	$(BIN)/python -m dpclust reproduce --profile paper --jobs $(JOBS)$(if $(RESUME), --resume)

verify: $(VENV)/.installed
	$(BIN)/python -m dpclust verify --jobs $(JOBS)$(if $(SEED), --seed $(SEED))

stability: $(VENV)/.installed
	$(BIN)/python -m dpclust stability --jobs $(JOBS)

# One pytest run over $(JOBS) workers. The tests of one file stay on one worker (its fixtures are set up once), the
# notebook runs spread over the workers, the heaviest first (tests/conftest.py).
PYTEST = $(BIN)/python -m pytest -n $(JOBS) --dist loadscope

# CI (.ci/run) runs the README's test command, make test, with CI=true: the slow tests then run too, as in test-full.
SLOW = $(if $(filter true,$(CI)),,-m "not slow")

# The notebooks' smoke runs of make test run in the reader's set alone (tests/conftest.py), in an environment of its
# own made as .venv is made for make reproduce.
READER_VENV := .venv-reader
install-reader-test: $(INSTALL_DEPS)
	UV_PROJECT_ENVIRONMENT=$(READER_VENV) $(SYNC) --extra notebooks --extra peers

test: install-test install-reader-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST) $(SLOW) tests

test-full: install-test install-reader-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST) tests

# The lower bounds of pyproject.toml and dpclust_lib/pyproject.toml installed together (requirements/minimum.lock, on
# the oldest supported Python) and the unit tests run on them; lint, the book and the notebooks are left out.
MINIMUM := .venv-minimum
test-minimum: $(MINIMUM)/.installed
	$(MINIMUM)/$(SCRIPTS)/python -m pytest -m "not slow" tests

$(MINIMUM)/.installed: requirements/minimum.lock pyproject.toml dpclust_lib/pyproject.toml $(filter $(UV_BOOT),$(UV))
	@test "$(PY_VERSION)" = 3.10 || { echo "make test-minimum needs Python 3.10 (the oldest supported):\
	 make test-minimum PYTHON=/path/to/python3.10; $(PYTHON) is $(if $(PY_VERSION),Python $(PY_VERSION),not a Python that runs)" >&2; exit 1; }
	$(UV) venv --quiet --python "$(PY_EXE)" $(MINIMUM)
	echo '*' > $(MINIMUM)/.gitignore
	$(UV) pip install --quiet --python $(MINIMUM) -r requirements/minimum.lock
	$(UV) pip install --quiet --python $(MINIMUM) --no-deps -e ./dpclust_lib -e .
	touch $@

# GRID='a=1,2 b=[3,4],[5]' (one grid per word) or GRID_FILE=grid.yaml; PARAMS='seed=1 max_iter=3' (fixed values);
# PROFILE=smoke (default: $$DPCLUST_PROFILE, else paper); SCHEDULER=tcp://host:8786 or SCHEDULER_FILE=scheduler.json.
SWEEP_GRID = $(if $(GRID_FILE),--grid-file '$(GRID_FILE)',$(foreach g,$(GRID),--grid '$(g)'))
SWEEP_PARAMS = $(foreach p,$(PARAMS),-p $(firstword $(subst =, ,$(p))) '$(patsubst $(firstword $(subst =, ,$(p)))=%,%,$(p))')
SWEEP_WHERE = $(if $(SCHEDULER),--scheduler $(SCHEDULER))$(if $(SCHEDULER_FILE),--scheduler-file '$(SCHEDULER_FILE)')
sweep: $(VENV)/.installed
	$(BIN)/python -m dpclust sweep $(NOTEBOOK) $(SWEEP_GRID)$(if $(PARAMS), $(SWEEP_PARAMS))$(if $(PROFILE), --profile $(PROFILE)) --jobs $(JOBS) --timeout $(TIMEOUT) --out '$(OUT)'$(if $(SWEEP_WHERE), $(SWEEP_WHERE))

bench: install-bench
	$(BIN)/python benchmarks/run.py

data: $(VENV)/.installed
	$(BIN)/python -m dpclust data --fetch

lab: install-lab
	$(BIN)/jupyter lab notebooks

# The teacher's Lab: the course folder open (formgrader reads nbgrader_config.py from the folder Jupyter starts in),
# nbgrader's extensions kept (install-teach adds its set and removes nothing), the compendium's nbgrader on PATH.
COURSE ?= assignments
lab-teach: install-teach
	@test -f "$(COURSE)/nbgrader_config.py" || { echo "no course in $(COURSE)/: make assignments first, or COURSE=DIR" >&2; exit 1; }
	cd "$(COURSE)" && PATH="$(abspath $(BIN)):$$PATH" "$(abspath $(BIN))/jupyter" lab

assignments: install-teach
	$(BIN)/python -m dpclust assignments

book: install-book
	$(BIN)/python book/build.py _build/html

# After a change to a pyproject.toml: uv.lock again (versions already locked are kept where they still fit), and
# environment.yml from it.
lock: $(filter $(UV_BOOT),$(UV))
	$(UV) lock
	$(MAKE) install
	$(BIN)/python requirements/conda.py > environment.yml

clean-venv:
	rm -rf $(VENV) $(MINIMUM) .uv

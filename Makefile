# The two commands of the README (`make demo`, `make test`) do all the set-up themselves:
# they create .venv when missing and (re)install only when pyproject.toml changed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ADULT ?= ../shared/data/adult.csv

.PHONY: demo test test-slow test-slow-ci test-min test-latest lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.installed-base

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@ $(VENV)/.installed-base

demo: $(VENV)/.installed-base
	$(BIN)/python examples/quickstart.py

# The default suite (make test: about 4 minutes on two idle cores, scikit-learn 1.9) leaves out
# the tests marked `slow` -- long statistical audits, the examples' full runs, the benchmarks'
# smoke runs --, and make test-slow runs exactly those (about an hour). make test-slow-ci, which
# CI runs, leaves out the slow tests also marked `slowest` (diffprivlib's own intercept fit as a
# broken twin, the whole grid and GIBO searches' intercept audits, the benchmark suite's smoke
# run): 27-36 minutes on a loaded two-core machine.
test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

test-slow: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -m slow

test-slow-ci: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -m "slow and not slowest"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check skdptune tests examples benchmarks

bench: $(VENV)/.installed-dev
	$(BIN)/python -m benchmarks.run --data $(ADULT)

# The site, into docs/_build/html; warnings are errors. The gallery examples run during the build
# (about a minute on two idle cores; sphinx-gallery re-runs only the examples that changed).
# A quick build without running them: make docs SPHINXOPTS="-D plot_gallery=0"
SPHINXOPTS ?=
DOCS_OUT := docs/_build/html

docs: $(VENV)/.installed-docs
	MPLBACKEND=Agg $(BIN)/sphinx-build -W --keep-going -q -b html -D plot_gallery=1 $(SPHINXOPTS) docs $(DOCS_OUT)
	@echo "site: $(DOCS_OUT)/index.html"

clean:
	rm -rf $(VENV) $(MIN_VENV) $(LATEST_VENV) build dist *.egg-info .pytest_cache .ruff_cache
	rm -rf docs/_build docs/generated docs/auto_examples docs/gen_modules docs/sg_execution_times.rst

# The lowest supported versions together, in a venv of its own: every floor of pyproject.toml's
# dependencies that bounds what the code calls (scikit-learn, diffprivlib, dp-accounting, and the
# numpy / scipy / joblib / threadpoolctl floors), and the test extra's pandas, matplotlib and
# dask[distributed] floors (the tests, the pandas input path, plot() and the dask backend use
# them). Keep MIN_PINS in step with those floors.
MIN_VENV ?= .venv-min
MIN_PINS := "scikit-learn==1.4.2" "diffprivlib==0.6.6" "dp-accounting==0.6.0" \
	"numpy==2.0.*" "scipy==1.13.*" "joblib==1.2.*" "threadpoolctl==3.1.*" "pandas==2.2.2" \
	"matplotlib==3.8.4" "dask[distributed]==2022.12.1"
$(MIN_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MIN_VENV)/bin/python -m pip install --quiet -e ".[test]" $(MIN_PINS)
	touch $@

test-min: $(MIN_VENV)/.installed
	$(MIN_VENV)/bin/python -m pip list 2>/dev/null | grep -iE "^(scikit-learn|diffprivlib|dp-accounting|numpy|scipy|joblib|threadpoolctl|pandas|matplotlib|dask|distributed) "
	$(MIN_VENV)/bin/python -m pytest -q -p no:cacheprovider

# The default suite on the newest releases that pyproject.toml allows -- scikit-learn 1.9.x
# while the cap is <1.10, where diffprivlib 0.6.6 runs on skdptune/_compat.py's repairs --, in a
# venv of its own. Every run upgrades that venv to the newest releases within pyproject.toml's
# pins and never past them (pip's resolver keeps every cap), so what it tests is decided by our
# pins: a release past a cap cannot turn it red; a new release inside them can, as it would for
# a user. Moving a cap is a change to pyproject.toml, and this target tests it before it lands.
# The venv is made once; on a re-run the upgrade takes about 10 seconds when nothing is new,
# then the default suite runs (its time: see make test).
LATEST_VENV ?= .venv-latest
$(LATEST_VENV)/bin/python:
	$(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/python -m pip install --quiet --upgrade pip

test-latest: | $(LATEST_VENV)/bin/python
	$(LATEST_VENV)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[test]"
	$(LATEST_VENV)/bin/python -m pip list 2>/dev/null | grep -iE "^(scikit-learn|diffprivlib|dp-accounting|numpy|scipy) "
	$(LATEST_VENV)/bin/python -m pytest -q -p no:cacheprovider

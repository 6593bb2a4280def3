# symbody: the two commands for a newcomer are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-latest venv bench lint docs clean mutants

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/symbody demo --out demo-output

test: $(STAMP)
	$(PY) -m pytest -q

# the suite against the newest releases of every dependency, ignoring the upper bounds of
# pyproject.toml, in a separate venv (.venv-latest); a failure in tests/compat/ names the
# third-party internal that changed (src/symbody/compat/)
LATEST := .venv-latest
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --no-deps -e .
	$(LATEST)/bin/python -m pip install --quiet --upgrade sympy numpy scipy symengine \
		scikit-sundae matplotlib pytest hypothesis pandas "dask[distributed]" tqdm playwright \
		import-linter ruff
	$(LATEST)/bin/python -m pip list --format=freeze | grep -iE '^(sympy|numpy|scipy|symengine|matplotlib|scikit-sundae)=='
	$(LATEST)/bin/python -m pytest -q

# ruff, and the layer contract of docs/design.md ([tool.importlinter] in pyproject.toml)
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,bench]"
	$(PY) benchmarks/run_all.py

# the documentation site: executes every tutorial (docs/tutorials/) and builds the API
# reference; fails on a tutorial error and on warnings outside library docstrings
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	rm -rf docs/_build docs/generated
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "documentation: docs/_build/html/index.html"

clean:
	rm -rf $(VENV) $(LATEST) build *.egg-info src/*.egg-info .pytest_cache docs/_build docs/generated

# mutation testing of the numeric core (docs/testing.md): the dependent-speed solve, the
# augmented solve and its multipliers, projection, Baumgarte, the dependent-set switch, the
# linearity check of the constraints and the linearization, against the fast test subset of
# [tool.mutmut] in pyproject.toml.  One worker (tens of minutes on two cores): run it before
# a release, not in CI.  `mutmut results` lists the survivors, `mutmut show NAME` shows one.
NM := symbody.compilation.numeric_model
SIM := symbody.analysis.simulation
MUTANT_FUNCTIONS := \
	'symbody.compilation.arguments.x_solve_dependent_speeds__mutmut_*' \
	'symbody.compilation.batch.x_solve_dependent_speeds_many__mutmut_*' \
	'symbody.compilation.solves.x_solve_dependent__mutmut_*' \
	'symbody.compilation.solves.x_solve_dynamics__mutmut_*' \
	'$(NM).xǁNumericModelǁrhs_at__mutmut_*' \
	'symbody.compilation.batch.x_rhs_many_at__mutmut_*' \
	'$(NM).xǁNumericModelǁaccelerations__mutmut_*' \
	'symbody.compilation.batch.x_evaluate_samples__mutmut_*' \
	'symbody.compilation.coordinate_projection.x_project_arguments__mutmut_*' \
	'$(NM).xǁNumericModelǁholonomic__mutmut_*' \
	'$(NM).xǁNumericModelǁvelocity_residual__mutmut_*' \
	'symbody.compilation.linear_algebra.x_solve__mutmut_*' \
	'symbody.compilation.linear_algebra.x_solve_symmetric__mutmut_*' \
	'symbody.compilation.linear_algebra.x_determinant__mutmut_*' \
	'symbody.compilation.linear_algebra.x_pivoted_columns__mutmut_*' \
	'symbody.dependent_columns.x_pivot_columns__mutmut_*' \
	'$(SIM).projection.xǁProjectionǁaccept__mutmut_*' \
	'$(SIM).projection.xǁProjectionǁ_tolerance__mutmut_*' \
	'$(SIM).projection.xǁProjectionǁoutput__mutmut_*' \
	'$(SIM).strategy.x_project_state__mutmut_*' \
	'$(SIM).baumgarte.xǁBaumgarteǁrhs__mutmut_*' \
	'$(SIM).dependent_set.xǁDependentSetMonitorǁgauge__mutmut_*' \
	'$(SIM).dependent_set.x_locate_root__mutmut_*' \
	'$(SIM).dependent_set.x_remap__mutmut_*' \
	'symbody.analysis.linearization.x_linearize__mutmut_*' \
	'symbody.formulation._linear_equations.x_linear_coefficients__mutmut_*'

mutants: $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,mutation]"
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 1 $(MUTANT_FUNCTIONS)
	$(VENV)/bin/mutmut results | grep -v ': not checked$$' || true

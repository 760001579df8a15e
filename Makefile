# proofs-by-example. `make help` lists the targets. Everything builds from nothing: the first target that
# needs Python creates .venv with python3 and installs the package with its test extras.
SHELL := bash
PYTHON3 ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCALE ?= quick
# make verify SEED_OFFSET=N: replicate on fresh seeds (every root seed + N) in results/$(SCALE)/seed-offset-N/.
SEED_OFFSET ?= 0
REPORTS := reports/$(SCALE)$(if $(filter-out 0,$(SEED_OFFSET)),/seed-offset-$(SEED_OFFSET))
export PYTHONUNBUFFERED := 1
# Bytecode is cached (__pycache__/, git-ignored) even where the environment turns it off: with
# PYTHONDONTWRITEBYTECODE set, each pytest-xdist worker re-rewrote every test module's asserts and each
# Python process recompiled the project's modules.
unexport PYTHONDONTWRITEBYTECODE

ifeq ($(filter $(SCALE),quick paper),)
$(error SCALE must be quick or paper, got '$(SCALE)')
endif

# One simulation module (or package) per paper in sims/: the ones that define EXPERIMENTS (the rule of
# sims.cli.simulation_modules). A config paper_configs/<paper>_<figure>.yaml is run by sims/<paper>.
# Results and figures live per scale (results/<scale>/, figures/out/<scale>/): one scale never
# overwrites the other.
PAPERS := $(sort $(patsubst sims/%.py,%,$(patsubst sims/%/__init__.py,%,$(shell grep -l '^EXPERIMENTS\b' sims/*.py sims/*/__init__.py 2>/dev/null))))
sim_files = $(wildcard sims/$(1).py sims/$(1)/*.py)
NAMES := $(basename $(notdir $(wildcard paper_configs/*.yaml)))
paper_of = $(firstword $(foreach p,$(PAPERS),$(if $(filter $(p)_%,$(1)),$(p))))
# Every theory file: a result's precise code hash (sims/cli.py) decides whether the sim really reruns.
THEORY := $(wildcard theory/*.py theory/*/*.py)

.PHONY: help env test test-slow figures figures-papers verify report plan bench mutate clean
help:
	@echo "make env       create .venv and install the package with its test extras (every target does it first)"
	@echo "make test      run the test suite (creates .venv if missing); make test-slow: the cases marked slow"
	@echo "make figures   run every simulation at SCALE=$(SCALE) -> results/$(SCALE)/, figures/out/$(SCALE)/"
	@echo "               one process per paper, as many side by side as cores at quick scale on a CPU-only"
	@echo "               machine, else one at a time (FIGURE_JOBS=N, or make -jN, sets it); make figures-PAPER: one paper"
	@echo "make fig-NAME  one figure, e.g. make fig-seesaw_lm (SCALE=paper for the paper scale)"
	@echo "make verify    run the claims ledger at SCALE -> reports/$(SCALE)/claims.md, claims.json"
	@echo "               SEED_OFFSET=N replicates on fresh seeds -> reports/$(SCALE)/seed-offset-N/"
	@echo "               PAPER=p: only that paper's claims (make report then shows that paper)"
	@echo "make report    the ledger of make verify as a static site -> reports/$(SCALE)/site/index.html (runs nothing)"
	@echo "make plan      compile every config at SCALE (default paper) on 8 simulated devices: FLOPs, memory,"
	@echo "               estimated H200 time, unrunnable configs -> reports/SCALE/plan.json; SMOKE=1 also runs"
	@echo "               each config with its loops truncated -> results/paper-smoke/"
	@echo "make bench     benchmarks, ratios measured side by side"
	@echo "make mutate PAPER=p [SAMPLE=k SEED=s]  mutation score of one paper's tests (mutmut; slow, not part of make test)"
	@echo "make clean     remove results/, reports/ and figures/out/ (the .venv stays)"
	@echo "figures: python -m figures lists them"

env: $(STAMP)
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

# The suite in TEST_JOBS processes (pytest-xdist; default: the cores, at most 4; TEST_JOBS=1: one).
# Work stealing keeps both busy to the end (5.4 min from nothing on 2 cores, against 6.0 with a module per
# process); a module's module-scoped fixtures are then built once per process that runs its tests.
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))
test: $(STAMP)
	$(PY) -m pytest -q $(if $(filter-out 0 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist worksteal)

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

verify: $(STAMP)
	$(PY) -m claims verify --scale $(SCALE) --seed-offset $(SEED_OFFSET)$(if $(PAPER), --paper $(PAPER)) --json $(REPORTS)/claims.json --markdown $(REPORTS)/claims.md

# The site of the last `make verify` at SCALE (and SEED_OFFSET): pages, copied figures, a screenshot.
report: $(STAMP)
	@$(PY) -m claims report --scale $(SCALE) --seed-offset $(SEED_OFFSET)

# The paper-scale plan (sims/plan.py): nothing of the real run is executed (SMOKE=1: truncated runs too).
PLAN_SCALE := $(if $(filter command line,$(origin SCALE)),$(SCALE),paper)
plan: $(STAMP)
	@$(PY) -m sims plan --scale $(PLAN_SCALE) $(if $(SMOKE),--smoke)

# The peers a benchmark compares with (boofun), installed apart from the project's environment, in
# build/peer/: the benchmark appends it to the end of sys.path, so the project's numpy and scipy win.
# A failed install is not fatal: the peer's rows then say why.
PEER := build/peer
$(PEER)/.installed: $(STAMP)
	@$(PY) -m pip install -q --disable-pip-version-check --target $(PEER) boofun \
		&& touch $@ || echo "make bench: boofun could not be installed into $(PEER); its rows will say why"

bench: $(STAMP) $(PEER)/.installed
	PBE_PEER_PATH=$(PEER) $(PY) -m benchmarks

# Mutation testing (tests/mutation.py): plants one-line bugs in theory/$(PAPER) and theory/numerics.py and
# counts those the paper's tests catch. Tens of minutes per paper on 2 cores; works in build/mutate/.
MUTATE_STAMP := $(VENV)/.mutate-installed
$(MUTATE_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test,mutate]'
	touch $@
mutate: $(MUTATE_STAMP)
	@test -n "$(PAPER)" || { echo "make mutate: set PAPER to one of: $(PAPERS)" >&2; exit 2; }
	$(PY) -m tests.mutation $(PAPER) $(if $(SAMPLE),--sample $(SAMPLE)) $(if $(SEED),--seed $(SEED))

define figure_rules
results/$(SCALE)/$(1).npz: paper_configs/$(1).yaml $(call sim_files,$(2)) $(THEORY) sims/runtime.py sims/xla.py sims/data.py | $(STAMP)
	$(PY) -m sims.$(2) --config $$< --scale $(SCALE)
	@touch $$@ results/$(SCALE)/$(1).json
figures/out/$(SCALE)/$(1).png figures/out/$(SCALE)/$(1).pdf &: results/$(SCALE)/$(1).npz figures/$(2).py figures/__main__.py | $(STAMP)
	@# A damaged result (the sidecar check fails) is recomputed by the sim, then rendered.
	$(PY) -m figures $(1) --scale $(SCALE) || { $(PY) -m sims.$(2) --config paper_configs/$(1).yaml --scale $(SCALE) && $(PY) -m figures $(1) --scale $(SCALE); }
fig-$(1): figures/out/$(SCALE)/$(1).png figures/out/$(SCALE)/$(1).pdf
.PHONY: fig-$(1)
endef
$(foreach n,$(NAMES),$(eval $(call figure_rules,$(n),$(call paper_of,$(n)))))

# make figures: one process per paper (python -m figures.build), each running what is not current and
# rendering what is not current. Papers write disjoint files, so at quick scale on a CPU-only machine they
# run side by side, as many at a time as the cores; on an accelerator and at paper scale one at a time (a
# JAX process takes most of an accelerator's memory): figures.build.default_jobs. FIGURE_JOBS=N sets it;
# a -j given to make itself is kept (make -j2 figures).
FIGURE_JOBS ?=
# Papers start longest first, so that the last ones to run are short and the cores stay busy to the end
# (quick scale, 2 cores, fresh clone, 2026-12-05: lif_snn 330 s, nc_forgetting 170, seesaw 130, mdm_variance
# 85, social_choice 70, relu_dag 40, neuromanifold 35; in name order seesaw started last and ran alone for
# its last minute). A paper not named here starts after these.
LONGEST_FIRST := lif_snn nc_forgetting seesaw mdm_variance social_choice relu_dag neuromanifold
FIGURE_PAPERS := $(filter $(PAPERS),$(LONGEST_FIRST)) $(filter-out $(LONGEST_FIRST),$(PAPERS))
figures: | $(STAMP)
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(or $(FIGURE_JOBS),$$($(PY) -m figures.build --default-jobs --scale $(SCALE)))) figures-papers
figures-papers: $(foreach p,$(FIGURE_PAPERS),figures-$(p))
define paper_rules
figures-$(1): | $(STAMP)
	@$(PY) -m figures.build $(1) --scale $(SCALE)
.PHONY: figures-$(1)
endef
$(foreach p,$(PAPERS),$(eval $(call paper_rules,$(p))))

clean:
	rm -rf results reports figures/out

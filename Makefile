# proofs-by-example. `make help` lists the targets. Everything builds from nothing: the first target that
# needs Python creates .venv with python3 and installs the package with its test extras.
SHELL := bash
PYTHON3 ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCALE ?= quick
export PYTHONUNBUFFERED := 1

# One module per paper in sims/; a config paper_configs/<paper>_<figure>.yaml is run by sims/<paper>.py.
SIM_INFRA := __init__ runtime config results cli
PAPERS := $(filter-out $(SIM_INFRA),$(basename $(notdir $(wildcard sims/*.py))))
NAMES := $(basename $(notdir $(wildcard paper_configs/*.yaml)))
paper_of = $(firstword $(foreach p,$(PAPERS),$(if $(filter $(p)_%,$(1)),$(p))))

.PHONY: help env test test-slow figures verify bench clean FORCE
help:
	@echo "make test      run the test suite (creates .venv if missing)"
	@echo "make figures   run every simulation at SCALE=$(SCALE) and render figures/out/*.png|pdf"
	@echo "make fig-NAME  one figure, e.g. make fig-seesaw_lm"
	@echo "make verify    run the claims ledger -> reports/claims.md, reports/claims.json"
	@echo "make bench     benchmarks, ratios measured side by side"
	@echo "figures: $(NAMES)"

env: $(STAMP)
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

test: $(STAMP)
	$(PY) -m pytest -q

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

verify: $(STAMP)
	$(PY) -m theory verify --json reports/claims.json --markdown reports/claims.md

bench: $(STAMP)
	$(PY) -m benchmarks

# Results are rebuilt when SCALE changes: .scale-stamp is rewritten only then.
.scale-stamp: FORCE
	@if [ "$$(cat $@ 2>/dev/null)" != "$(SCALE)" ]; then echo $(SCALE) > $@; fi

define figure_rules
results/$(1).npz: paper_configs/$(1).yaml sims/$(2).py $(wildcard theory/$(2).py) sims/runtime.py .scale-stamp | $(STAMP)
	$(PY) -m sims.$(2) --config $$< --scale $(SCALE)
	@touch $$@ results/$(1).json
figures/out/$(1).png figures/out/$(1).pdf &: results/$(1).npz figures/$(2).py figures/__main__.py | $(STAMP)
	$(PY) -m figures $(1)
fig-$(1): figures/out/$(1).png figures/out/$(1).pdf
.PHONY: fig-$(1)
endef
$(foreach n,$(NAMES),$(eval $(call figure_rules,$(n),$(call paper_of,$(n)))))

figures: $(foreach n,$(NAMES),figures/out/$(n).png figures/out/$(n).pdf)

clean:
	rm -rf results reports figures/out .scale-stamp

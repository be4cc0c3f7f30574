# One target per user action; `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Every target runs for every assignment of the course (each a folder of assignments/),
# or for one: make autograde ASSIGNMENT=transformer_fundamentals
ASSIGNMENT ?=
VENV := .venv
PY := $(VENV)/bin/python
# The venv is made from the system's Python, which every account can run (the hub's accounts run the venv too;
# a Python in root's home is out of their reach).
BASE_PYTHON := $(or $(wildcard /usr/bin/python3),python3)
STAMP := $(VENV)/.installed

# Keep every run's state inside the repository's build area, nothing in $HOME.
export COURSE_BUILD_DIR := $(CURDIR)/build
export JUPYTER_CONFIG_DIR := $(COURSE_BUILD_DIR)/jupyter/config
export JUPYTER_DATA_DIR := $(COURSE_BUILD_DIR)/jupyter/data
export JUPYTER_RUNTIME_DIR := $(COURSE_BUILD_DIR)/jupyter/runtime
export IPYTHONDIR := $(COURSE_BUILD_DIR)/ipython
export MPLCONFIGDIR := $(COURSE_BUILD_DIR)/matplotlib
export PYTHONPATH := $(CURDIR)
export PYTHONDONTWRITEBYTECODE := 1
# nbgrader calls the `alembic` of the venv when it creates a gradebook.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help venv all source reference release samples autograde report grades hub-tools course-owner hub hub-release collect return-feedback hub-clean gradescope check-submission formgrader grader-report bench bench-grading bench-gradescope bench-similarity bench-report bench-hardening hostile-class bench-sandbox sandbox-tools browser-tools test clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

venv: $(STAMP) ## install pinned requirements into .venv

$(STAMP): requirements.txt
	rm -rf $(VENV)
	$(BASE_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt 2>&1 | grep -v "^WARNING: Location" || true
	$(VENV)/bin/pip check --disable-pip-version-check  # requirements.txt pins every dependency: fail if one is missing
	$(PY) -c "import torch, nbgrader"  # fail here if the install did not work
	touch $@

all: release samples autograde report ## the main job: release, grade the sample class, write grades and report

source: $(STAMP) ## rebuild source/<assignment>/ and docs/rubrics/<assignment>.md from assignments/<assignment>/
	$(PY) -m course.build_source $(ASSIGNMENT)
	$(PY) -m course.rubrics $(ASSIGNMENT)

reference: $(STAMP) ## rebuild the checks' reference data from the instructor solution
	$(PY) -m course.reference $(ASSIGNMENT)

release: $(STAMP) ## generate release/ from source/ with nbgrader (and record it in the gradebook)
	@mkdir -p $(COURSE_BUILD_DIR)
	$(PY) -m course.release $(ASSIGNMENT)

samples: $(STAMP) ## write and run the sample submissions (perfect, blank, partly wrong) in submitted/
	$(PY) -m course.samples $(ASSIGNMENT)

STUDENTS ?= 20
REPEAT ?= 1
bench-grading: $(STAMP) sandbox-tools ## grade a class of STUDENTS serially, 2 at a time and on a 2-worker LocalCluster: throughput, speedups, overhead
	$(PY) scripts/benchmark_grading.py $(ASSIGNMENT) --students $(STUDENTS) --repeat $(REPEAT)

bench-gradescope: $(STAMP) sandbox-tools ## seconds from upload to results.json in Gradescope's container, each assignment's partial sample
	$(PY) scripts/benchmark_gradescope.py $(ASSIGNMENT)

CLASS_SIZE ?= 300
COPIES ?= 15
bench-similarity: $(STAMP) ## similar-submission detection on a synthetic class of CLASS_SIZE students with COPIES planted copies
	$(PY) scripts/benchmark_similarity.py $(ASSIGNMENT) --students $(CLASS_SIZE) --copies $(COPIES)

bench-report: $(STAMP) ## seconds to summarize a synthetic class of CLASS_SIZE and write its class report, per assignment
	$(PY) scripts/benchmark_report.py $(ASSIGNMENT) --students $(CLASS_SIZE)

hostile-class: $(STAMP) sandbox-tools ## grade a class of hostile students beside honest ones on every path; print what got through (as root)
	$(PY) scripts/hostile_class.py $(HOSTILE_PATHS)

bench-hardening: $(STAMP) sandbox-tools ## what running student code as the jail's user costs per graded submission (as root)
	$(PY) scripts/benchmark_hardening.py $(ASSIGNMENT)

STUDENT ?= blank
bench-sandbox: $(STAMP) sandbox-tools ## seconds per grading step with and without the sandbox (after make samples)
	$(PY) scripts/benchmark_sandbox.py $(STUDENT) $(ASSIGNMENT)

check-submission: $(STAMP) sandbox-tools ## ASSIGNMENT's hidden checks as pytest tests on STUDENT's submission (PYTEST_ARGS="-k ... -x --tb=short")
	@test -n "$(ASSIGNMENT)" || { echo "name the assignment: make check-submission STUDENT=<id> ASSIGNMENT=<name>" >&2; exit 2; }
	$(PY) -m pytest assignments/$(ASSIGNMENT)/checks.py --submission submitted/$(STUDENT)/$(ASSIGNMENT) $(PYTEST_ARGS)

sandbox-tools: ## install bubblewrap and libseccomp (isolate student code) if they are missing
	@{ command -v bwrap && /sbin/ldconfig -p | grep -q libseccomp.so.2; } >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2; }

browser-tools: ## install headless Chromium and chromedriver (the browser tests: formgrader, class report) if they are missing
	@{ command -v chromium && command -v chromedriver; } >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq chromium chromium-driver; }

autograde: $(STAMP) sandbox-tools ## grade every submission in submitted/: sandboxed probe, judge, nbgrader (REGRADE=1: also those graded before)
	$(PY) -m course.grading.batch $(ASSIGNMENT) $(if $(REGRADE),--regrade)

report: $(STAMP) ## print the class report of each assignment (with plots: grades/<assignment>/report.html, grades/index.html)
	@cat grades/$(or $(ASSIGNMENT),*)/report.md

grades: $(STAMP) ## final grades: the judge's points + hand grades -> grades/final_grades.csv (and Canvas's import with CANVAS_ROSTER=<export>), feedback again
	$(PY) -m course.grading.final_grades $(ASSIGNMENT) $(if $(CANVAS_ROSTER),--canvas-roster $(CANVAS_ROSTER))

HUB_PROXY := $(COURSE_BUILD_DIR)/hub/node/node_modules/.bin/configurable-http-proxy
hub-tools: ## install configurable-http-proxy (JupyterHub's proxy, pinned) into the build area with npm, if missing
	@test -x $(HUB_PROXY) || npm install --silent --no-audit --no-fund --prefix $(COURSE_BUILD_DIR)/hub/node configurable-http-proxy@5.3.0

course-owner: $(STAMP) ## (as root) create the account OWNER if missing and give it the course directory: the instructor's JupyterLab on the hub runs as it
	@test -n "$(OWNER)" || { echo "say which account: make course-owner OWNER=teacher"; exit 2; }
	$(PY) -m course.hub.owner $(OWNER)

hub: $(STAMP) sandbox-tools hub-tools ## serve the course on a JupyterHub (roster.csv's students as Unix accounts; Ctrl-C stops it)
	$(PY) -m course.hub.serve

hub-release: $(STAMP) ## release ASSIGNMENT into the hub's exchange (students then fetch it)
	$(PY) -m course.hub.exchange release $(ASSIGNMENT)

collect: $(STAMP) ## collect the students' newest submissions of ASSIGNMENT from the hub's exchange into submitted/
	$(PY) -m course.hub.exchange collect $(ASSIGNMENT)

return-feedback: $(STAMP) ## put the feedback of ASSIGNMENT in the hub's exchange (students then fetch it)
	$(PY) -m course.hub.exchange feedback $(ASSIGNMENT)

hub-clean: $(STAMP) ## stop the hub, remove the course's accounts and the hub's state (keeps submitted/, the gradebook, backups, the exchange)
	$(PY) -m course.hub.clean

HIDDEN_CHECKS ?= after_due_date
gradescope: $(STAMP) ## build/gradescope/ASSIGNMENT.zip, the assignment's Gradescope autograder (HIDDEN_CHECKS: when students see the checks)
	@test -n "$(ASSIGNMENT)" || { echo "name the assignment: make gradescope ASSIGNMENT=<name>" >&2; exit 2; }
	$(PY) -m course.gradescope.build $(ASSIGNMENT) --hidden-checks $(HIDDEN_CHECKS)

FORMGRADER_PORT ?= 8888
formgrader: $(STAMP) ## start nbgrader's formgrader on http://127.0.0.1:FORMGRADER_PORT/formgrader (8888) to grade written answers (Ctrl-C stops it)
	$(PY) -m course.formgrader --port $(FORMGRADER_PORT)

grader-report: $(STAMP) ## mutants caught and diagnosed, alternatives accepted, per piece
	$(PY) -m course.measuring.grader_accuracy $(ASSIGNMENT)

bench: $(STAMP) ## print run time, training time, accuracy vs baseline, seconds per graded submission
	$(PY) scripts/benchmark.py $(ASSIGNMENT)

test: $(STAMP) sandbox-tools browser-tools hub-tools ## run every test of the repository
	$(PY) -m pytest -q -n auto

clean: $(STAMP) ## remove build/ (but the exchange and the hub's state), autograded/, feedback/, grades/ (keeps submitted/, gradebook.db, backups/, .venv)
	$(PY) -m course.clean

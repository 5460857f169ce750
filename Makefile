# One command per job. `make demo` and `make test` create .venv on first use and are quick after.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PYRUN := $(BIN)/python
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
export HF_HUB_OFFLINE ?= 1
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False

.PHONY: demo test test-fast browser-deps venv clean kernels \
	data-codeprm data-guardrail train-codeprm train-guardrail figures-dueling \
	bench-watermark bench-guardrail bench-codeprm bench-codeprm-apps bench-dueling bench-batch bench-hardening \
	figures-bandits bench-bandits

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(RUN_STAMP): requirements.txt requirements-nodeps.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -r requirements-nodeps.txt
	$(BIN)/pip install -q --no-deps -e .
	$(MAKE) --no-print-directory kernels
	touch $@

# The dueling simulator's kernel compiled ahead of time into the cache folder (engines/dueling/aot.py):
# processes then start without numba. Without a C compiler the simulator uses numba's JIT kernel.
kernels: | $(BIN)/python
	-nice -n 10 $(BIN)/python -m engines.dueling.aot

$(DEV_STAMP): requirements-dev.txt $(RUN_STAMP)
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

venv: $(RUN_STAMP)

demo: $(RUN_STAMP)
	$(BIN)/python app.py

# Debian's chromium for the browser tests (never `playwright install`). Needs root; without it
# the browser tests skip with a visible reason.
browser-deps:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
		|| echo "browser-deps: could not install chromium; browser tests will be skipped"; \
	else echo "browser-deps: not root, chromium not installed; browser tests will be skipped"; fi

test: $(DEV_STAMP) browser-deps
	@start=$$(date +%s); \
	$(BIN)/python -m pytest -ra --durations=15 tests; rc=$$?; \
	echo "make test: pytest finished in $$(( $$(date +%s) - start )) s (exit $$rc)"; exit $$rc

# Everything but the tests marked slow or browser, for quick local loops.
test-fast: $(DEV_STAMP)
	$(BIN)/python -m pytest -q -m "not slow and not browser" tests

# ---- one target per job. Data pipelines write data/ (git-ignored), training scripts write
# assets/<engine>/, benchmarks write benchmarks/results/<name>.json (tables: benchmarks/RESULTS.md).
# the real-code corpus (installed packages; then the fix-pair repositories' snapshots, fetched
# beside the checkout as MIRRORS) with analyser labels, the fix pairs (evals/codeprm/FIX_PAIRS.md)
# and the application-code family (evals/codeprm/data/app_repos.csv)
MIRRORS ?= ../mirrors
data-codeprm: $(RUN_STAMP)
	nice -n 10 $(PYRUN) -m evals.codeprm.corpus
	nice -n 10 $(PYRUN) -m evals.codeprm.fix_pairs_build --mirrors $(MIRRORS)
	nice -n 10 $(PYRUN) -m evals.codeprm.corpus --repos $(MIRRORS)
	nice -n 10 $(PYRUN) -m evals.codeprm.apps --mirrors $(MIRRORS)
	nice -n 10 $(PYRUN) -m evals.codeprm.app_labels --analysers taint settings

# the content-labelled build (data/guardrail_v2): replies + taps, the committed content labels, train-split refusals,
# the attack views, the contrast requests' replies, the written materials lists, every human-labelled row
# (data/guardrail_all), the request corpus v2 with the judge's features, and the replies to its benign requests
data-guardrail: $(RUN_STAMP)
	nice -n 10 $(PYRUN) -m evals.guardrail.content_data
	$(PYRUN) -m evals.guardrail.labels content --apply
	nice -n 10 $(PYRUN) -m evals.guardrail.refusal_aug
	nice -n 10 $(PYRUN) -m evals.guardrail.attack_replies
	nice -n 10 $(PYRUN) -m evals.guardrail.contrast
	nice -n 10 $(PYRUN) -m evals.guardrail.materials
	nice -n 10 $(PYRUN) -m evals.guardrail.data --all-rows --views human
	nice -n 10 $(PYRUN) -m evals.guardrail.requests
	nice -n 10 $(PYRUN) -m evals.guardrail.request_replies

# the step model on analyser step labels of real code and the train fix pairs' diff labels; fusion chosen on dev
# (the experimental model with user-input marks: scripts/codeprm_train_marks.py, not shipped)
train-codeprm: $(RUN_STAMP)
	nice -n 10 $(PYRUN) scripts/codeprm_train.py

# the shipped head: the request judge (strict), part 4's strict members, loose members retrained (assets/guardrail/DATA_CARD.md)
GUARD_OUT ?= assets/guardrail
train-guardrail: $(RUN_STAMP)
	mkdir -p data/guardrail_v2/part4 && git show 1667e8e:assets/guardrail/sld_head.pt > data/guardrail_v2/part4/sld_head.pt
	nice -n 10 $(PYRUN) scripts/guardrail_train.py --seeds 0,1,2 --epochs 12 --lam-pol 0.5 --proj-bits 4 --pooled-dev \
		--policy-heads --judge --judge-gate replies --strict-members-from data/guardrail_v2/part4/sld_head.pt --strict-target goes-along \
		--strict-patiences 1,2,3 --loose-views model,human,forced,prefill,sampled,contrast,materials,requests \
		--loose-cap-by family --loose-max-false-stop 0.03 --cap-by family --max-false-stop 0.03 \
		--human-all data/guardrail_all --members-dir data/guardrail_v2/members_p5 --out $(GUARD_OUT)

figures-dueling: $(RUN_STAMP)
	nice -n 10 $(PYRUN) scripts/dueling_theory.py

bench-watermark: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/watermark_eval.py --rotations 100
	$(PYRUN) benchmarks/watermark_report.py --plot benchmarks/results/watermark_sweep.png
	$(PYRUN) benchmarks/watermark_speed.py --repeats 7

bench-guardrail: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/guardrail_speed.py
	nice -n 10 $(PYRUN) benchmarks/guardrail_baselines.py
	nice -n 10 $(PYRUN) benchmarks/guardrail_policies.py

bench-codeprm: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/codeprm_families.py
	nice -n 10 $(PYRUN) benchmarks/codeprm_speed.py

# the hand-labelled application spots (needs the labelled repositories' snapshots under MIRRORS)
bench-codeprm-apps: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/codeprm_apps.py --mirrors $(MIRRORS) --splits dev test

bench-dueling: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/dueling_vs_reference.py

# Former names of figures-dueling and bench-dueling, kept for one release.
figures-bandits: figures-dueling
bench-bandits: bench-dueling

# --ray with 2 workers against one process on a 200-file verify job (docs/batch.md).
bench-batch: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/batch_ray.py

# The hardening probes of issue #24 (bad inputs, oversized work) against the app in-process.
bench-hardening: $(RUN_STAMP)
	nice -n 10 $(PYRUN) benchmarks/hardening_probes.py

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts

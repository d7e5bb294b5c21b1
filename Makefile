# throttle — make targets. `make test` is what CI runs.
GO ?= go

# Nested modules: vegeta's adapter and its example have their own go.mod so
# that the core module never depends on vegeta's dependency tree.
NESTED := adapters/vegeta examples/vegeta-adaptive

.PHONY: all build test agents faults stress check-k6-reporter compat compat-real fmt vet bench bench-gate bench-report bench-metrics bench-controllers bench-engine fuzz report-golden demo

all: build test

build:
	$(GO) build ./...
	for m in $(NESTED); do (cd $$m && $(GO) build ./...) || exit 1; done

vet:
	$(GO) vet ./...
	for m in $(NESTED); do (cd $$m && $(GO) vet ./...) || exit 1; done

# test: formatting, vet, and every test of every module with the race detector,
# but internal/sim: its sweeps (every capacity from 20 to 9000, the governor
# read five times a tick) are one goroutine's arithmetic, where the race
# detector has nothing to find and makes them ten times slower (245 s against
# 22 s). The governor they drive is tested with the race detector in its own
# package. The engine's test that a VU's request fits an 8 KiB stack, and
# the script's that a GC halves the stack of a VU asleep, run once more
# without it: the race detector's frames are deeper
# (internal/engine/rawstack_norace_test.go,
# internal/script/vustack_norace_test.go).
test: vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/internal/sim$$')
	$(GO) test -count=1 ./internal/sim
	$(GO) test -count=1 -run 'FitsVUStack$$' ./internal/engine
	$(GO) test -count=1 -run 'VUAsleepHalves$$|VUFirstIterationFitsReserve$$' ./internal/script
	for m in $(NESTED); do (cd $$m && $(GO) test -race -count=1 ./...) || exit 1; done

# agents: a run over real agent processes (cmd/throttle, build tag agents):
# three `throttle agent` children of a controller against a shedding
# target, one killed with SIGKILL mid-run. About 20 s, so not in `make test`
# (internal/agent's own tests, in-process agents, are).
agents:
	$(GO) test -tags agents -race -count=1 -v -run Agents ./cmd/throttle

# faults: the fault-injection suite (internal/faults): latency, refused
# connections, resets mid-body, half-open connections, slow-loris, endless
# and 2 GiB bodies, a failed TLS handshake and a name that does not
# resolve; latency spikes, jitter and a bandwidth limit through a toxiproxy
# proxy; a redirect loop (URL run and k6 script). Each run through a
# session at 200 arrivals/s with class counts, accounting, the written
# report and heap peak asserted. About 25 s, so `make test` runs it too.
faults:
	$(GO) test -race -count=1 -v ./internal/faults

# stress: is the suite reliable under load? `make test` in two fresh clones of
# the committed HEAD at once, two rounds in a row; prints "N/4 passed" and
# fails unless all four passed. Run it before submitting a change that
# touches timing (real clocks, servers, tests that wait).
stress:
	bash scripts/stress.sh

# check-k6-reporter: a third-party reader of k6's summary (the npm package
# k6-html-reporter) renders a throttle run's handleSummary data; needs node.
check-k6-reporter:
	bash scripts/k6-html-reporter.sh

# compat: the k6 compatibility suite (compat/): every script in
# compat/scripts run by `throttle run` against one loopback server, checked
# against what k6's documentation implies; a PASS/FAIL line per script, then
# "N passed, N failed"; fails if any failed. Not part of `make test`: it
# measures how far throttle is from k6 (COMPAT_RUN=regexp picks scripts).
COMPAT_RUN ?=
compat:
	$(GO) test -tags compat -count=1 ./compat/...
	@dir=$$(mktemp -d) && $(GO) build -o $$dir/compat ./compat/run && \
		$$dir/compat -run '$(COMPAT_RUN)'; status=$$?; rm -rf $$dir; exit $$status

# compat-real: the same harness on a folder of k6 scripts written by other
# people (REAL=DIR; not in this repository: third-party code is not
# committed here), each with the harness's expectation header, aimed at the
# loopback server's httpbin-like routes and bounded as a user would (-d, -u,
# -s); also fails a script on any "not supported" line or a crash. About
# 90 s for 42 scripts; not in `make test`. COMPAT_RUN=regexp picks scripts.
compat-real:
	@if [ -z "$(REAL)" ]; then echo "make compat-real: set REAL=DIR, a folder of k6 scripts with expectation headers (see compat/run)"; exit 2; fi
	@dir=$$(mktemp -d) && $(GO) build -o $$dir/compat ./compat/run && \
		$$dir/compat -real -scripts '$(REAL)' -timeout 45s -run '$(COMPAT_RUN)'; status=$$?; rm -rf $$dir; exit $$status

fmt:
	gofmt -w .

# bench: every Go benchmark, briefly. The focused targets below are what the
# README's figures come from.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./...
	cd adapters/vegeta && $(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./...

# bench-gate: the gate beside x/time/rate and a channel semaphore, one run.
bench-gate:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms -count 3 ./gate

# bench-report: the latency recorder and the built-in target's hot paths.
bench-report:
	$(GO) test -run '^$$' -bench 'Record|Observe|Recent' -benchtime=200ms -cpu 1,2 ./internal/report
	$(GO) test -run '^$$' -bench . -benchtime=200ms ./internal/target

# bench-metrics: the engine with --metrics off and on, alternated, and one
# scrape's cost (loopback only; about a minute and a half).
bench-metrics:
	$(GO) test -run '^$$' -bench 'EngineMetrics|Scrape' -benchtime 20x ./internal/metrics

# fuzz: a short run of each fuzz target (longer: FUZZTIME=5m make fuzz):
# the governor, and every parser a user feeds — targets files and -H
# headers, the built-in target's model, --fail-on, script options (the
# whole options object, durations, threshold expressions and keys, k6 flags
# and K6_* variables) and k6 flags through the command line's flag set.
# Their seeds and every crasher found (testdata/fuzz) run in `make test`.
FUZZTIME ?= 15s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecide -fuzztime $(FUZZTIME) ./governor
	$(GO) test -run '^$$' -fuzz 'FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/targets
	$(GO) test -run '^$$' -fuzz FuzzParseHeader -fuzztime $(FUZZTIME) ./internal/targets
	$(GO) test -run '^$$' -fuzz FuzzParseModel -fuzztime $(FUZZTIME) ./internal/target
	$(GO) test -run '^$$' -fuzz FuzzBuild -fuzztime $(FUZZTIME) ./internal/report
	$(GO) test -run '^$$' -fuzz FuzzParseFailOn -fuzztime $(FUZZTIME) ./internal/engine
	for f in FuzzResolve FuzzParseDuration FuzzDurationJSON FuzzThreshold FuzzFlags; do \
		$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) ./internal/script/options || exit 1; done
	$(GO) test -run '^$$' -fuzz FuzzK6Flags -fuzztime $(FUZZTIME) ./cmd/throttle

# report-golden: regenerate internal/report's golden files after an intended
# schema or text change (review the diff).
report-golden:
	$(GO) test ./internal/report -run Golden -update

# bench-engine: throttle's engine beside bombardier, wrk, hey and vegeta against one
# loopback nginx, alternating runs (real processes; not part of CI).
bench-engine:
	bash bench/engine.sh

# bench-controllers: throttle beside AIMD, a linear ramp and fixed load on the
# simulator's model targets (deterministic, a few seconds): Markdown on stdout
# and a chart.
CONTROLLERS_CHART ?= controllers.svg
bench-controllers:
	$(GO) run ./bench/controllers -chart $(CONTROLLERS_CHART)

# demo: the governor finds a built-in target's capacity; prints found vs true.
demo:
	$(GO) run ./cmd/throttle demo

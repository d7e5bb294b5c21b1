# throttle — make targets. `make test` is what CI runs.
GO ?= go

.PHONY: all build test fmt vet bench fuzz

all: build test

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

# test: formatting, vet, and every test with the race detector.
test: vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -race -count=1 ./...

fmt:
	gofmt -w .

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# fuzz: a short run of each fuzz target (longer: FUZZTIME=5m make fuzz).
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecide -fuzztime $(FUZZTIME) ./governor

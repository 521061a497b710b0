# Drover's build. `make test` is the one test command (CI runs it through .ci/run).
GO ?= go

.PHONY: all build test test-netlib vet fmt-check bench bench-serve fuzz-smoke clean proto

all: build

build:
	$(GO) build -o drover ./cmd/drover

# The project's checks: formatting, vet, and the whole suite under the race detector.
test: fmt-check vet
	$(GO) test -race -count=1 ./...

# The NN package on OpenBLAS (cgo; Debian's libopenblas-dev), not part of CI.
test-netlib:
	OPENBLAS_NUM_THREADS=1 $(GO) test -tags netlib -count=1 ./agents/...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Benchmarks; compare runs with benchstat (go install golang.org/x/perf/cmd/benchstat@latest).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./env/... ./datasets/... | tee bench.txt

# Place's cost in process (core, and gRPC over bufconn); the load test on
# loopback is scripts/load_ghz.sh (docs/results/serving.md).
bench-serve:
	$(GO) test -run '^$$' -bench Place -benchmem -count 6 ./serve | tee bench-serve.txt

# Every fuzz target (go test -fuzz runs one per call) for FUZZTIME each.
FUZZTIME ?= 10s
fuzz-smoke:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
		d=./$$(dirname $${f#./}); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/p' $$f); do \
			echo "== $$d $$t"; $(GO) test $$d -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME); \
		done; \
	done

clean:
	rm -f drover bench.txt

# Regenerate serve/proto's Go code (committed, so a build needs no protoc). Needs
# protoc 3.21+ (Debian protobuf-compiler) and the plugins:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.1
proto:
	cd serve/proto && PATH="$$PATH:$$($(GO) env GOPATH)/bin" protoc --go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative drover.proto

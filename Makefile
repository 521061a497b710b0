# Drover's build. `make test` is the one test command (CI runs it through .ci/run).
GO ?= go

.PHONY: all build build-torch test test-long test-netlib test-torch bench-torch vet fmt-check bench bench-serve fuzz-smoke clean proto

all: build

build:
	$(GO) build -o drover ./cmd/drover

# The project's checks (CI's one command): gofmt, go vet, the whole suite
# under the race detector, then the libtorch backend's tests (test-torch,
# -short), which skip cleanly where libtorch is absent. The long tests
# (internal/longtest) run a cheap version here: one refit model instead of
# all, a sample of an equivalence run's seeds. No test here may depend on
# a wall-clock budget a loaded machine can reach.
TEST_TORCHFLAGS ?= -short
test: fmt-check vet
	$(GO) test -race -count=1 ./...
	@$(MAKE) --no-print-directory test-torch TORCHFLAGS=$(TEST_TORCHFLAGS)

# The long tests in full, with the rest of the suite, without the race
# detector (most are single-goroutine arithmetic, which it slows about
# tenfold and has nothing to check in): refits of the embedded
# models compared with the embedded files byte for byte, regenerations of
# embedded data, every seed of the equivalence runs, every float32 input
# of the tanh kernels (DROVER_EXHAUSTIVE), DQN learning CartPole, and the
# live cluster end to end (processes on the wall clock). Run it before
# committing a regenerated model or file, and after a change to what they
# are fitted from (../shared/traces, a fitter, the simulator's reference
# paths) or to a learner.
test-long:
	DROVER_LONG=1 DROVER_EXHAUSTIVE=1 $(GO) test -count=1 -timeout 60m ./...

# The NN package on OpenBLAS (cgo; Debian's libopenblas-dev), not part of CI.
test-netlib:
	OPENBLAS_NUM_THREADS=1 $(GO) test -tags netlib -count=1 ./agents/...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The libtorch backend of agents/nn (agents/nn/torch: cgo over libtorch's
# C++ API; Debian's libtorch-dev, CPU only). test-torch runs its equality
# tests, and PPO's and DQN's tests on it (CartPole's 475 with PPO: about
# 30 s; TORCHFLAGS=-short skips it, as make test does), and skips cleanly
# where libtorch is absent, so make test needs no cgo there. The first build
# compiles the shim against libtorch's headers (about a minute).
TORCHFLAGS ?=
TORCH_HEADER ?= /usr/include/torch/csrc/api/include/torch/torch.h
have-torch = test -f $(TORCH_HEADER) && { ldconfig -p 2>/dev/null | grep -q 'libtorch\.so' || test -e /usr/lib/x86_64-linux-gnu/libtorch.so; }

test-torch:
	@if ! { $(have-torch); }; then echo "test-torch: libtorch not found ($(TORCH_HEADER); Debian: apt-get install libtorch-dev): skipped"; exit 0; fi; \
	set -e; $(GO) vet -tags torch ./agents/... ./cmd/drover; \
	$(GO) test -tags torch -count=1 $(TORCHFLAGS) ./agents/nn/... ./agents/ppo ./agents/dqn

build-torch:
	$(GO) build -tags torch -o drover ./cmd/drover

# The speed table of docs/results/learning.md (both backends, one run).
bench-torch:
	$(GO) test -tags torch -run '^$$' -bench 'Step|Update' -count 6 ./agents/nn/torch ./agents/ppo | tee bench-torch.txt

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

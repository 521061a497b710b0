//go:build netlib

package nn

// #cgo LDFLAGS: -lopenblas
import "C"

import "gonum.org/v1/netlib/blas/netlib"

// With the netlib build tag the matrix products run on the system's
// OpenBLAS through cgo (Debian: libopenblas-dev):
//
//	go test -tags netlib ./agents/...
//	OPENBLAS_NUM_THREADS=1 go run -tags netlib ./cmd/drover train
//
// Results are deterministic on one machine but not bit-identical to the
// pure-Go default (the BLAS sums in another order).
func init() { SetBLAS(openblas()) }

// openblas returns the OpenBLAS implementation.
func openblas() netlib.Implementation { return netlib.Implementation{} }

// BLAS names the BLAS in use, for reports.
const BLAS = "openblas (netlib tag)"

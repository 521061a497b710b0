//go:build !netlib

package nn

// BLAS names the BLAS in use, for reports: gonum's pure Go unless the
// binary is built with the netlib tag (OpenBLAS through cgo).
const BLAS = "gonum (pure Go)"

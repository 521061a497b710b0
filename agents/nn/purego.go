//go:build !netlib

package nn

// Backend names the BLAS in use, for reports: gonum's pure Go unless the
// binary is built with the netlib tag (OpenBLAS through cgo).
const Backend = "gonum (pure Go)"

// Package infer is Drover's simulator of LLM inference serving: a pure,
// deterministic, request-level discrete-event model of prefill and decode
// instances on typed GPUs, the links between them and the requests of a
// replayed trace (issue 34). Like package env it has no goroutines, reads
// no clock and does no I/O.
//
// This file set is the start of the package: the request a trace gives
// (Request). The instances, the event loop, the performance model and the
// policies' view are being built.
package infer

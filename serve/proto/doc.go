// Package droverpb holds the generated Go code of drover.proto, the
// drover.v1 Scheduler service. Do not edit the generated files; change
// drover.proto and run `make proto` (or `go generate ./serve/proto`), which
// needs protoc and the protoc-gen-go / protoc-gen-go-grpc plugins named in
// the Makefile.
package droverpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative drover.proto

//go:build torch

package main

// A torch build (make build-torch) links the libtorch backend, so that
// drover train --backend torch can select it.
import _ "github.com/drover-sched/drover/agents/nn/torch"

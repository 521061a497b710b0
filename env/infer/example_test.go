package infer_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/infer"
)

func ExampleRequest_Validate() {
	r := infer.Request{ID: 7, Arrival: 0.25, Prompt: 0, Output: 32}
	fmt.Println(r.Validate())
	// Output: llm: bad request: request 7: prompt tokens 0, want 1..16777216
}

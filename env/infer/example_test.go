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

// first routes every request to instance 0, both phases.
type first struct{}

func (first) Route(*infer.View, infer.Request) (infer.Decision, error) { return infer.Decision{}, nil }

func ExampleSim_Run() {
	perf, _ := infer.ParsePerfTable([]byte(`model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel
m,h100-80gb,100,1,10,20,8
m,h100-80gb,1100,1,110,30,8
`))
	cfg := infer.Config{
		Model:     infer.Model{Name: "m", WeightBytes: 1 << 30, KVBytesPerToken: 1 << 20},
		Instances: []infer.InstanceConfig{{GPU: "h100-80gb", TP: 8, MaxBatchSize: 64, MaxBatchTokens: 2048, MaxPreemptions: 4}},
		Perf:      perf,
		Link:      infer.LinkConfig{BytesPerSec: 25e9},
	}
	s, _ := infer.New(cfg, []infer.Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 11}})
	sum, _ := s.Run(first{})
	fmt.Printf("TTFT %.4f s, end-to-end %.4f s\n", sum.TTFT.Mean, sum.E2E.Mean)
	// Output: TTFT 0.1000 s, end-to-end 0.2901 s
}

package llm_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/drover-sched/drover/datasets/llm"
)

// Read an Azure trace, replay it at twice its rate from 1 s on, and write
// it in Drover's request table.
func Example() {
	data := []byte("TIMESTAMP,ContextTokens,GeneratedTokens\r\n" +
		"2023-11-16 18:17:03.9799600,4808,10\r\n" +
		"2023-11-16 18:17:04.0319600,3180,8\r\n" +
		"2023-11-16 18:17:05.9799601,110,27")
	tr, err := llm.DecodeAzure(data, llm.Options{Source: "code.csv"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tr.Origin.Format("2006-01-02 15:04:05.0000000"), tr.Requests[2].Arrival)
	reqs, err := llm.Replay{GapScale: 0.5, Shift: 1}.Apply(tr.Requests)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := llm.Encode(reqs, nil)
	fmt.Print(string(out))
	// Output:
	// 2023-11-16 18:17:03.9799600 2.0000001
	// arrival,prompt_tokens,output_tokens
	// 1,4808,10
	// 1.026,3180,8
	// 2.0000000499999997,110,27
}

// Give request lengths Poisson arrivals at 2 requests/s from a seed.
func ExampleSynth() {
	ls, err := llm.DecodeVidur([]byte("num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n"+
		"3772,54,3826,69.85\n1,5,6,0.2\n2015,156,2171,12.92\n"), llm.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	reqs, skips, err := llm.Synth{Process: llm.Poisson, Rate: 2, MinPrompt: 2}.Generate(ls.Rows, rand.NewPCG(1, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range reqs {
		fmt.Printf("%d %.3f %d %d\n", r.ID, r.Arrival, r.Prompt, r.Output)
	}
	fmt.Println(skips.SkipReasons)
	// Output:
	// 0 0.441 3772 54
	// 1 0.512 2015 156
	// map[short prompt:1]
}

// A bad row names the file, line, column and field.
func ExampleDecodeAzure_error() {
	_, err := llm.DecodeAzure([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2023-11-16 18:17:03.9799600,4808,10\n"+
		"2023-11-16 18:17:04.0319600,3180,-8\n"), llm.Options{Source: "code.csv"})
	fmt.Println(err)
	// Output:
	// code.csv:3:34: field GeneratedTokens: llm: bad request: -8 tokens, want 1..16777216
}

// Generate the first hour of the synthetic multimodal week and measure
// its fit to the figures' token curves.
func ExampleLMMSynth() {
	s := llm.LMMSynth{Minutes: 60}
	reqs, err := s.Generate(rand.NewPCG(1, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	images := 0
	for _, r := range reqs {
		if r.Images > 0 {
			images++
		}
	}
	fmt.Printf("%d requests, %d with images, the first at %.3f s\n", len(reqs), images, reqs[0].Arrival)
	fits, _ := s.Fit(reqs)
	for _, f := range fits[:3] {
		fmt.Printf("%s: KS %.2f\n", f.Curve, f.KS)
	}
	// Output:
	// 5400 requests, 2940 with images, the first at 0.241 s
	// images_per_request: KS 0.02
	// input_tokens_image: KS 0.02
	// input_tokens_text: KS 0.01
}

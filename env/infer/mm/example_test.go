package mm_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/infer/mm"
)

// spread sends each image to the next image instance in turn and the text
// to the text instance with the fewest pending tokens.
type spread struct{ next int }

func (r *spread) Route(v *mm.View, req *mm.Request, d *mm.Decision) error {
	var img, txt []int
	for i, x := range v.Instances {
		if x.State != mm.Active {
			continue
		}
		switch x.Pool {
		case mm.Image:
			img = append(img, i)
		case mm.Text, mm.Mono:
			txt = append(txt, i)
		}
	}
	d.Instance = txt[0]
	for _, i := range txt {
		if v.Instances[i].PendingTokens < v.Instances[d.Instance].PendingTokens {
			d.Instance = i
		}
	}
	for j := range d.Images {
		d.Images[j] = img[r.next%len(img)]
		r.next++
	}
	return nil
}

func ExampleSim_Run() {
	reqs := []mm.Request{
		{ID: 0, Arrival: 0, Prompt: 200, Output: 50, Images: 2},
		{ID: 1, Arrival: 0.01, Prompt: 100, Output: 20},
	}
	s, _ := mm.New(mm.Decoupled(mm.Llama32_11BVision, 2, 1), reqs)
	sum, _ := s.Run(&spread{})
	r0, r1 := s.Result(0), s.Result(1)
	fmt.Printf("image request: TTFT %.1f ms, text request: TTFT %.1f ms\n", 1000*r0.TTFT(), 1000*r1.TTFT())
	fmt.Printf("finished %d, GPUs %d\n", sum.Finished, s.Config().GPUs())
	// Output:
	// image request: TTFT 143.8 ms, text request: TTFT 6.0 ms
	// finished 2, GPUs 6
}

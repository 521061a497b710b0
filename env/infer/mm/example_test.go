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
	for _, i := range v.Live() { // the instances not gone
		x := &v.Instances[i]
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
	// image request: TTFT 132.2 ms, text request: TTFT 6.0 ms
	// finished 2, GPUs 6
}

// An autoscaler drives the clock itself: every period it reads the
// pools, adds or removes instances, and runs on.
func ExampleSim_AddInstance() {
	var reqs []mm.Request
	for i := range 600 { // a burst of one-image requests, 20 a second
		reqs = append(reqs, mm.Request{ID: i, Arrival: float64(i) / 20, Prompt: 500, Output: 50, Images: 1})
	}
	s, _ := mm.New(mm.Decoupled(mm.InternVL25_26B, 4, 1), reqs)
	r := &spread{}
	for t := 10.0; !s.Done(); t += 10 {
		if err := s.RunUntil(t, r); err != nil {
			fmt.Println(err)
			return
		}
		v := s.View()
		pending := 0
		for _, i := range v.Live() {
			if x := &v.Instances[i]; x.Pool == mm.Image {
				pending += x.PendingImages
			}
		}
		// A crude rule: one more image instance while images queue.
		if pending > 8 && s.PoolSize(mm.Image) < 12 {
			s.AddInstance(mm.Image) // active after Config.StartupSec
		}
	}
	sum := s.Summary()
	fmt.Printf("image instances %d, finished %d, GPU-hours %.2f\n", s.PoolSize(mm.Image), sum.Finished, sum.GPUHours)
	// Output: image instances 12, finished 600, GPU-hours 0.39
}

// Images are drawn per image (Config.Images) and cut into tiles by each
// model's own rule; their tokens follow.
func ExampleModel_Tiles() {
	for _, m := range []mm.Model{mm.Llama32_11BVision, mm.InternVL25_26B} {
		for _, sz := range [][2]int{{500, 500}, {800, 600}, {896, 896}} {
			k := m.Tiles(sz[0], sz[1])
			fmt.Printf("%s %dx%d: %d tiles, %d tokens\n", m.Name, sz[0], sz[1], k, m.ImageTokensTiles(k))
		}
	}
	// Output:
	// llama-3.2-11b-vision 500x500: 1 tiles, 1601 tokens
	// llama-3.2-11b-vision 800x600: 4 tiles, 6404 tokens
	// llama-3.2-11b-vision 896x896: 4 tiles, 6404 tokens
	// internvl-2.5-26b 500x500: 1 tiles, 256 tokens
	// internvl-2.5-26b 800x600: 13 tiles, 3328 tokens
	// internvl-2.5-26b 896x896: 5 tiles, 1280 tokens
}

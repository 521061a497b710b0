package mmscale

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets/llm"
)

// prof is a profile with round numbers: an Image Instance encodes 10,000
// image tokens a second, a Text Instance serves 5,000 prompt tokens a
// second, a monolithic instance 2 requests a second; an image takes 0.25 s.
var prof = Profile{ImageTokensPerSec: 10000, TextTokensPerSec: 5000, MonoRequestsPerSec: 2, EncodeSeconds: 0.25}

// TestInitialSizesByHand works ModServe's initial sizing out by hand on a
// three-minute history. Images a minute: 600, 1,200 and 3,000 (median
// 1,200: 20 images a second). Image requests: 300 of 1 image, 500 of 3,
// 600 of 5; the 700th and 701st of the 1,400 sorted are 3 images: the
// median is 3. N_i = ceil(20 x 0.25) = 5, N_t = ceil(5 / 3) = 2. Requests a
// minute: 300, 600, 900 (median 10 a second), so the monolith starts with
// ceil(10 / 2) = 5 instances.
func TestInitialSizesByHand(t *testing.T) {
	var reqs []llm.Request
	add := func(minute, n, images int) {
		for i := 0; i < n; i++ {
			reqs = append(reqs, llm.Request{ID: len(reqs), Arrival: float64(minute)*60 + float64(i)*59/float64(n), Prompt: 10, Output: 1, Images: images})
		}
	}
	add(0, 200, 3) // minute 0: 600 images, 300 requests
	add(0, 100, 0)
	add(1, 300, 3) // minute 1: 1,200 images, 600 requests
	add(1, 300, 1)
	add(2, 600, 5) // minute 2: 3,000 images, 900 requests
	add(2, 300, 0)
	h, err := HistoryOf(reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := History{ImageQPS: 1200.0 / 60, RequestQPS: 600.0 / 60, ImagesPerRequest: 3}
	if d := cmp.Diff(want, h); d != "" {
		t.Fatalf("history (-want,+got):\n%s", d)
	}
	// With the median 3: N_i = ceil(20 x 0.25) = 5, N_t = ceil(5/3) = 2.
	if d := cmp.Diff(Sizes{Image: 5, Text: 2}, InitialSizes(h, prof)); d != "" {
		t.Errorf("initial sizes (-want,+got):\n%s", d)
	}
	if got := InitialMono(h, prof); got != 5 {
		t.Errorf("initial monolith instances %d, want ceil(10/2) = 5", got)
	}
	// Median 2 images a request: N_t = ceil(5/2) = 3, as the doc works it.
	h.ImagesPerRequest = 2
	if d := cmp.Diff(Sizes{Image: 5, Text: 3}, InitialSizes(h, prof)); d != "" {
		t.Errorf("initial sizes, median 2 images (-want,+got):\n%s", d)
	}
	// A history too quiet to keep one encoder busy still starts one of each.
	if d := cmp.Diff(Sizes{Image: 1, Text: 1}, InitialSizes(History{ImageQPS: 0.01, ImagesPerRequest: 1}, prof)); d != "" {
		t.Errorf("quiet history (-want,+got):\n%s", d)
	}
}

func TestObjective(t *testing.T) {
	o := Objective{Factor: 5, Text: 0.1, Image: 0.4}
	tests := []struct {
		iso    float64
		images int
		want   float64
	}{
		{0.02, 0, 0.5}, // a short text request: the reference's objective
		{0.3, 0, 1.5},  // a long one: its own, scaled
		{0.2, 1, 2},    // an image request below the one-image reference
		{1.0, 16, 5},   // sixteen images: its own
	}
	for _, tt := range tests {
		if got := o.Of(tt.iso, tt.images); got != tt.want {
			t.Errorf("Of(%v, %d) = %v, want %v", tt.iso, tt.images, got, tt.want)
		}
	}
	if got := (Objective{Factor: 3}).Of(0.25, 2); got != 0.75 {
		t.Errorf("per-request objective %v, want 0.75", got)
	}
}

func TestHistoryErrors(t *testing.T) {
	if _, err := HistoryOf(nil); !errors.Is(err, ErrBadConfig) {
		t.Errorf("empty trace: %v, want ErrBadConfig", err)
	}
	if _, err := HistoryOf([]llm.Request{{Arrival: 1, Prompt: 1, Output: 1}}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("trace without images: %v, want ErrBadConfig", err)
	}
}

// TestModServeTick checks the periodic rule ceil(ML / MC) per pool, on a
// window's mean load and on a period's busiest window.
func TestModServeTick(t *testing.T) {
	s, err := NewModServe(DefaultConfig(), prof, Sizes{Image: 2, Text: 2})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		w    Window
		want Sizes
	}{
		// 300 s of 10,500 image tokens a second: ceil(1.05) = 2; 4,000
		// text tokens a second: 1.
		{"just over one encoder", Window{Seconds: 300, ImageTokens: 300 * 10500, TextLoad: 300 * 4000}, Sizes{Image: 2, Text: 1}},
		{"exactly one of each", Window{Seconds: 300, ImageTokens: 300 * 10000, TextLoad: 300 * 5000}, Sizes{Image: 1, Text: 1}},
		{"burst", Window{Seconds: 300, ImageTokens: 300 * 95000, TextLoad: 300 * 12000}, Sizes{Image: 10, Text: 3}},
		// No load: the pools keep Min (1) instances, never empty.
		{"idle", Window{Seconds: 300}, Sizes{Image: 1, Text: 1}},
		// A tick follows the load down even after misses: the trigger is
		// the monitoring windows' business.
		{"tick ignores attainment", Window{Seconds: 300, TextLoad: 300 * 5000, Finished: 10, Met: 5}, Sizes{Image: 1, Text: 1}},
		// A period's peak minute sizes it, not its mean.
		{"peak", Window{Seconds: 300, ImageTokens: 300 * 10000, TextLoad: 300 * 5000, Peak: Rates{ImageTokens: 35000, TextLoad: 5001}}, Sizes{Image: 4, Text: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, s.Decide(tt.w, Sizes{Image: 4, Text: 4}, true)); d != "" {
				t.Errorf("(-want,+got):\n%s", d)
			}
		})
	}
}

// TestModServeTrigger checks the monitoring windows: nothing happens at
// or above 0.99 attainment; below it, the pools grow to the window's load
// plus its backlog, and by one instance at least.
func TestModServeTrigger(t *testing.T) {
	s, err := NewModServe(DefaultConfig(), prof, Sizes{Image: 1, Text: 1})
	if err != nil {
		t.Fatal(err)
	}
	cur := Sizes{Image: 3, Text: 2}
	tests := []struct {
		name string
		w    Window
		want Sizes
	}{
		{"met", Window{Seconds: 60, ImageTokens: 60 * 90000, Finished: 100, Met: 99}, cur},
		{"nothing finished", Window{Seconds: 60, ImageTokens: 60 * 90000}, cur},
		// 60 s with 45,000 image tokens a second and 15,000 pending a
		// second's worth (900,000): ceil(3.6e6/60/1e4) = 6 Image
		// Instances; text below capacity stays at 2 (never scaled down).
		{"image burst", Window{Seconds: 60, ImageTokens: 60 * 45000, PendingImageTokens: 900000, TextLoad: 60 * 100, Finished: 100, Met: 90}, Sizes{Image: 6, Text: 2}},
		// The load fits the current sizes, but requests miss: one more
		// instance in the pool the misses waited on longer.
		{"text wait", Window{Seconds: 60, ImageTokens: 60 * 1000, TextLoad: 60 * 1000, PendingImageTokens: 10000, PendingTextLoad: 50000, Finished: 100, Met: 97, ImageWait: 1, TextWait: 4}, Sizes{Image: 3, Text: 3}},
		{"image wait", Window{Seconds: 60, PendingImageTokens: 200000, Finished: 10, Met: 0, ImageWait: 30, TextWait: 2}, Sizes{Image: 4, Text: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, s.Decide(tt.w, cur, false)); d != "" {
				t.Errorf("(-want,+got):\n%s", d)
			}
		})
	}
}

// TestStabilize checks the scale-in window: with 3 periods, a pool
// follows the load up at once and down only after three lower ticks.
func TestStabilize(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Stabilize = 3
	m, err := NewMonolith(cfg, prof, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, rps := range []int{2, 10, 4, 4, 4, 4, 12} { // requests a second: need rps/2
		got = append(got, m.Decide(Window{Seconds: 300, Requests: 300 * rps}, Sizes{}, true).Mono)
	}
	if d := cmp.Diff([]int{1, 5, 5, 5, 2, 2, 6}, got); d != "" {
		t.Errorf("instances (-want,+got):\n%s", d)
	}
}

func TestMonolith(t *testing.T) {
	m, err := NewMonolith(DefaultConfig(), prof, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Sizes{Mono: 1}, m.Initial()); d != "" {
		t.Errorf("initial (-want,+got):\n%s", d)
	}
	tests := []struct {
		name string
		w    Window
		tick bool
		cur  int
		want int
	}{
		// 7 requests a second over 2 a second an instance: 4.
		{"tick", Window{Seconds: 300, Requests: 2100}, true, 9, 4},
		{"idle tick keeps one", Window{Seconds: 300}, true, 3, 1},
		{"monitor, met", Window{Seconds: 60, Requests: 6000, Finished: 100, Met: 100}, false, 3, 3},
		// 100 requests a second plus 60 pending: ceil(160/60/2) = 2 < 3: one more.
		{"monitor, missed, load fits", Window{Seconds: 60, Requests: 100, PendingRequests: 60, Finished: 100, Met: 50}, false, 3, 4},
		{"monitor, missed, burst", Window{Seconds: 60, Requests: 1200, Finished: 100, Met: 50}, false, 3, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Decide(tt.w, Sizes{Mono: tt.cur}, tt.tick); got != (Sizes{Mono: tt.want}) {
				t.Errorf("got %+v, want %d instances", got, tt.want)
			}
		})
	}
}

// TestNeverEmptyWithPendingWork drives both scalers with random windows
// (any load, any backlog, any attainment, ticks and monitoring windows)
// and checks that no pool ever drops below one instance, so pending work
// always has an instance to run on, and that Max bounds every pool.
func TestNeverEmptyWithPendingWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cfg := DefaultConfig()
	cfg.Max = 40
	ms, err := NewModServe(cfg, prof, Sizes{})
	if err != nil {
		t.Fatal(err)
	}
	mono, err := NewMonolith(cfg, prof, 0)
	if err != nil {
		t.Fatal(err)
	}
	cur, curM := ms.Initial(), mono.Initial()
	for i := 0; i < 20000; i++ {
		tick := i%5 == 4
		secs := 60.0
		if tick {
			secs = 300
		}
		fin := rng.IntN(50)
		w := Window{
			Seconds:            secs,
			Requests:           rng.IntN(3) * rng.IntN(2000),
			ImageTokens:        float64(rng.IntN(3)) * rng.Float64() * 1e7,
			TextLoad:           float64(rng.IntN(3)) * rng.Float64() * 1e6,
			Finished:           fin,
			Met:                rng.IntN(fin + 1),
			PendingImageTokens: float64(rng.IntN(2)) * rng.Float64() * 1e6,
			PendingTextLoad:    float64(rng.IntN(2)) * rng.Float64() * 1e5,
			PendingRequests:    rng.IntN(2) * rng.IntN(100),
		}
		cur = ms.Decide(w, cur, tick)
		curM = mono.Decide(w, curM, tick)
		if cur.Image < 1 || cur.Text < 1 || curM.Mono < 1 {
			t.Fatalf("window %d (%+v): sizes %+v and %+v leave a pool empty", i, w, cur, curM)
		}
		if cur.Image > 40 || cur.Text > 40 || curM.Mono > 40 {
			t.Fatalf("window %d: sizes %+v and %+v past Max 40", i, cur, curM)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	slo := Objective{Factor: 5}
	bad := []Config{
		{Period: 0, Monitor: 60, Threshold: 0.99, Min: 1, SLO: slo, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 600, Threshold: 0.99, Min: 1, SLO: slo, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 60, Threshold: 1.5, Min: 1, SLO: slo, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 60, Threshold: 0.99, Min: 0, SLO: slo, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 60, Threshold: 0.99, Min: 2, Max: 1, SLO: slo, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 60, Threshold: 0.99, Min: 1, SLO: Objective{Factor: 0.5}, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 60, Threshold: 0.99, Min: 1, SLO: Objective{Factor: 5, Text: -1}, Target: 1, Stabilize: 1},
		{Period: 300, Monitor: 60, Threshold: 0.99, Min: 1, SLO: slo, Target: 0},
		{Period: 300, Monitor: 60, Threshold: 0.99, Min: 1, SLO: slo, Target: 1, Stabilize: 0},
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, c := range bad {
		if _, err := NewModServe(c, prof, Sizes{}); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: %v, want ErrBadConfig", c, err)
		}
	}
	// A target of half the capacity doubles the instances.
	half := DefaultConfig()
	half.Target = 0.5
	m, err := NewMonolith(half, prof, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Decide(Window{Seconds: 300, Requests: 2100}, Sizes{Mono: 1}, true); got.Mono != 7 {
		t.Errorf("7 requests a second at half of 2 a second: %d instances, want 7", got.Mono)
	}
	p := prof
	p.TextTokensPerSec = 0
	if _, err := NewMonolith(DefaultConfig(), p, 1); !errors.Is(err, ErrBadConfig) {
		t.Errorf("zero capacity: %v, want ErrBadConfig", err)
	}
}

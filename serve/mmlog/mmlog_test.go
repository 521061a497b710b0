package mmlog_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve/mmlog"
)

func scale(id string, period int64) mmlog.Scale {
	return mmlog.Scale{V: mmlog.Version, ID: id, UnixNanos: 1767225600000000000 + period*300e9, Deployment: "day1", Model: "llama-3.2-11b-vision",
		PeriodEnd: true, Period: period, Current: mmlog.Sizes{Image: 2, Text: 2},
		Window: &mmlog.Window{Seconds: 300, Requests: 420, ImageTokens: 2.1e6, TextLoad: 9e5, Finished: 410, Met: 409, PendingImageTokens: 6404,
			PendingTextLoad: 1200, PendingRequests: 3, ImageWait: 0.4, TextWait: 0.1, PeakRequests: 1.6, PeakImageTokens: 8000, PeakTextLoad: 3500},
		Sizes: mmlog.Sizes{Image: 1, Text: 1}, Source: mmlog.SourceHeuristic, Policy: "heuristic:modserve", ModelVersion: "v1", Fallback: "not-converged",
		Shadow: &mmlog.ShadowSizes{Policy: "learned:mm-rl@v1", Sizes: mmlog.Sizes{Image: 2, Text: 1}}, LatencyNanos: 12000}
}

func route(id string) mmlog.Route {
	return mmlog.Route{V: mmlog.Version, ID: id, UnixNanos: 1767225600000000000, Request: "7", Arrival: 12.5, Images: 2, Prompt: 900, Output: 60,
		Model: "internvl-2.5-26b", Instances: []mmlog.Instance{
			{ID: "0", Pool: "image", State: "active", TP: 1, PendingImages: 1, PendingImageTokens: 1280},
			{ID: "1", Pool: "image", State: "starting", TP: 1},
			{ID: "2", Pool: "text", State: "active", TP: 4, PendingTokens: 4000, PendingPrefillTokens: 3000, Outstanding: 2, Waiting: 1, Running: 1}},
		Instance: 2, ImageInstances: []int{0, 0}, Priority: 13.1, Source: mmlog.SourceHeuristic, Policy: "heuristic:modserve", Fallback: "no-model", LatencyNanos: 30000}
}

func ptr[T any](x T) *T { return &x }

// TestRoundTrip writes records of both logs and reads them back equal.
func TestRoundTrip(t *testing.T) {
	var sb, rb bytes.Buffer
	var scales []mmlog.Scale
	var routes []mmlog.Route
	for i := range 3 {
		s := scale(string(rune('a'+i)), int64(i))
		if i == 0 {
			s.Initial, s.PeriodEnd, s.Window = true, false, nil
		}
		r := route(string(rune('a' + i)))
		if i == 2 { // a request listing only the live instances, numbered
			r.Deployed = 9
			for k := range r.Instances {
				r.Instances[k].Number = 3 + 2*k
			}
		}
		for _, v := range []interface{ Validate() error }{&s, &r} {
			if err := v.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		scales, routes = append(scales, s), append(routes, r)
		sb.Write(mmlog.EncodeScale(nil, &s))
		rb.Write(mmlog.EncodeRoute(nil, &r))
	}
	gs, partial, err := mmlog.ReadScales(&sb)
	if err != nil || partial != 0 {
		t.Fatal(partial, err)
	}
	if d := cmp.Diff(scales, gs); d != "" {
		t.Fatalf("scales (-want,+got)\n%s", d)
	}
	gr, partial, err := mmlog.ReadRoutes(&rb)
	if err != nil || partial != 0 {
		t.Fatal(partial, err)
	}
	if d := cmp.Diff(routes, gr); d != "" {
		t.Fatalf("routes (-want,+got)\n%s", d)
	}
}

// TestCorrupt checks that a bad line is refused naming its line number
// and field, and that a last line a crash cut short is left out and
// counted.
func TestCorrupt(t *testing.T) {
	good := string(mmlog.EncodeScale(nil, ptr(scale("a", 1))))
	tests := []struct {
		name, log, want string
	}{
		{"not json", good + "{oops\n" + good, "line 2"},
		{"unknown key", good + good + strings.Replace(good, `"v":1`, `"v":1,"extra":2`, 1), "line 3"},
		{"met above finished", strings.Replace(good, `"met":409`, `"met":411`, 1), "line 1: mmlog: bad record: window.met"},
		{"negative size", good + strings.Replace(good, `"sizes":{"image":1`, `"sizes":{"image":-1`, 1), "line 2: mmlog: bad record: sizes.image"},
		{"window on the initial call", strings.Replace(good, `"period_end":true`, `"initial":true`, 1), "line 1: mmlog: bad record: window"},
		{"unknown model", strings.Replace(good, "llama-3.2-11b-vision", "gpt-9", 1), "line 1: mmlog: bad record: model"},
		{"version 2", strings.Replace(good, `"v":1`, `"v":2`, 1), "line 1: mmlog: bad record: v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mmlog.ReadScales(strings.NewReader(tt.log))
			if err == nil || !errors.Is(err, mmlog.ErrBadRecord) && !strings.Contains(err.Error(), "bad record") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
	goodRoute := string(mmlog.EncodeRoute(nil, ptr(route("a"))))
	n := route("a")
	n.Deployed = 9
	for k := range n.Instances {
		n.Instances[k].Number = 3 + 2*k
	}
	numbered := string(mmlog.EncodeRoute(nil, &n))
	if !strings.Contains(numbered, `"deployed":9`) || !strings.Contains(numbered, `"number":5`) {
		t.Fatalf("numbered line %s", numbered)
	}
	for _, tt := range []struct {
		name, log, want string
	}{
		{"image to a text instance", goodRoute + strings.Replace(goodRoute, `"image_instances":[0,0]`, `"image_instances":[0,2]`, 1), "line 2: mmlog: bad record: image_instances[1]"},
		{"text to an image instance", strings.Replace(goodRoute, `"instance":2`, `"instance":1`, 1), "line 1: mmlog: bad record: instance"},
		{"more placements than images", strings.Replace(goodRoute, `"images":2`, `"images":1`, 1), "line 1: mmlog: bad record: image_instances"},
		{"bad state", strings.Replace(goodRoute, `"starting"`, `"asleep"`, 1), "line 1: mmlog: bad record: instances[1].state"},
		{"number without deployed", strings.Replace(numbered, `"deployed":9,`, ``, 1), "line 1: mmlog: bad record: instances[0].number"},
		{"number past deployed", strings.Replace(numbered, `"deployed":9`, `"deployed":7`, 1), "line 1: mmlog: bad record: instances[2].number"},
		{"numbers not increasing", strings.Replace(numbered, `"number":5`, `"number":3`, 1), "line 1: mmlog: bad record: instances[1].number"},
		{"deployed below the list", strings.Replace(numbered, `"deployed":9`, `"deployed":2`, 1), "line 1: mmlog: bad record: deployed"},
		{"negative deployed", strings.Replace(numbered, `"deployed":9`, `"deployed":-1`, 1), "line 1: mmlog: bad record: deployed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mmlog.ReadRoutes(strings.NewReader(tt.log))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
	recs, partial, err := mmlog.ReadScales(strings.NewReader(good + good[:len(good)/2]))
	if err != nil || len(recs) != 1 || partial != 1 {
		t.Fatalf("cut last line: %d records, %d partial, %v; want 1, 1, nil", len(recs), partial, err)
	}
}

// FuzzDecodeScale checks that DecodeScale never panics and that what it
// accepts encodes to a line it decodes to the same record.
func FuzzDecodeScale(f *testing.F) {
	f.Add(mmlog.EncodeScale(nil, ptr(scale("a", 1))), uint64(1))
	f.Add([]byte(`{"v":1,"id":"x","model":"internvl-2.5-26b","initial":true,"period":0,"current":{"image":0,"text":0,"mono":0},"sizes":{"image":1,"text":1,"mono":0},"source":"heuristic","policy":"p","latency_ns":0}`), uint64(2))
	f.Add([]byte(`{"v":1}`), uint64(3))
	f.Fuzz(func(t *testing.T, line []byte, seed uint64) {
		flip(line, seed)
		r, err := mmlog.DecodeScale(line)
		if err != nil {
			return
		}
		again, err := mmlog.DecodeScale(bytes.TrimSuffix(mmlog.EncodeScale(nil, &r), []byte("\n")))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if d := cmp.Diff(r, again); d != "" {
			t.Fatalf("(-first,+again)\n%s", d)
		}
	})
}

// FuzzDecodeRoute is FuzzDecodeScale for the multimodal route log.
func FuzzDecodeRoute(f *testing.F) {
	f.Add(mmlog.EncodeRoute(nil, ptr(route("a"))), uint64(1))
	n := route("n")
	n.Deployed = 9
	for k := range n.Instances {
		n.Instances[k].Number = 3 + 2*k
	}
	f.Add(mmlog.EncodeRoute(nil, &n), uint64(3))
	f.Add([]byte(`{"v":1,"id":"x","arrival":0,"images":0,"prompt_tokens":1,"output_tokens":1,"model":"llama-3.2-11b-vision","instances":[{"id":"","pool":"mono","state":"active","tp":4}],"instance":0,"priority":0,"source":"learned","policy":"p","latency_ns":0}`), uint64(2))
	f.Fuzz(func(t *testing.T, line []byte, seed uint64) {
		flip(line, seed)
		r, err := mmlog.DecodeRoute(line)
		if err != nil {
			return
		}
		again, err := mmlog.DecodeRoute(bytes.TrimSuffix(mmlog.EncodeRoute(nil, &r), []byte("\n")))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if d := cmp.Diff(r, again); d != "" {
			t.Fatalf("(-first,+again)\n%s", d)
		}
	})
}

// flip flips up to two bits of line, as the seed says.
func flip(line []byte, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	if len(line) > 0 {
		for range rng.IntN(3) {
			line[rng.IntN(len(line))] ^= byte(1 << rng.IntN(8))
		}
	}
}

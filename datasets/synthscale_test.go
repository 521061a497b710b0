package datasets

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGenerateScaledIsSynthetic checks that the streamed, load-scaled
// workload is Synthetic's at the rate it solved for, job for job, and
// that the file WriteScaled writes is what Encode writes for it.
func TestGenerateScaledIsSynthetic(t *testing.T) {
	for _, tt := range []struct {
		jobs, gpus int
		load       float64
	}{{1, 0, 0}, {5000, 1000, 0.5}, {90000, 100000, 0.6}, {4096, 512, 0}, {4097, 0, 0}} {
		s := ScaleSpec{Jobs: tt.jobs, GPUs: tt.gpus, Load: tt.load, Seed: 3}
		var got []Job
		st, err := GenerateScaled(s, func(jobs []Job) error { got = append(got, jobs...); return nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := ScaleParams(tt.gpus)
		p.RateScale = st.RateScale
		want := Synthetic(p, tt.jobs, rand.NewPCG(3, 3))
		if !slices.Equal(got, want.Jobs) {
			t.Fatalf("%+v: streamed jobs differ from Synthetic's", tt)
		}
		var buf bytes.Buffer
		if _, err := WriteScaled(&buf, s, nil); err != nil {
			t.Fatal(err)
		}
		if enc := Encode(want, nil); !bytes.Equal(buf.Bytes(), enc) {
			t.Fatalf("%+v: WriteScaled wrote %d bytes, Encode %d, or different ones", tt, buf.Len(), len(enc))
		}
		if tt.gpus == 0 || tt.jobs < 2 {
			continue
		}
		load := tt.load
		if load == 0 {
			load = DefaultScaleLoad
		}
		// The solved rate meets the load up to the whole-second rounding
		// of the submit times, and OfferedLoad agrees with the stats.
		if math.Abs(st.WindowLoad/load-1) > 1e-3 {
			t.Errorf("%+v: window load %v, want %v", tt, st.WindowLoad, load)
		}
		ws := 0.0
		for _, j := range got {
			ws += float64(j.GPUs) * min(j.Duration, st.Span)
		}
		if wl := ws / (st.Span * float64(tt.gpus)); math.Abs(wl/st.WindowLoad-1) > 1e-9 {
			t.Errorf("%+v: window load %v by direct sum, stats say %v", tt, wl, st.WindowLoad)
		}
		if ol := want.OfferedLoad(tt.gpus); math.Abs(ol/st.OfferedLoad-1) > 1e-12 {
			t.Errorf("%+v: OfferedLoad %v, stats say %v", tt, ol, st.OfferedLoad)
		}
		for _, j := range got {
			if j.GPUs > min(ScaleMaxGPUs, tt.gpus) || j.Duration > ScaleMaxDuration {
				t.Fatalf("%+v: job %+v beyond the caps", tt, j)
			}
		}
	}
}

// TestGenerateScaledRejects checks the spec's bounds.
func TestGenerateScaledRejects(t *testing.T) {
	for _, s := range []ScaleSpec{{Jobs: 0, GPUs: 8}, {Jobs: 100, GPUs: 1000}, {Jobs: 10, GPUs: -1}, {Jobs: 10, GPUs: 8, Load: -1}, {Jobs: 10, GPUs: 8, Load: math.Inf(1)}} {
		if _, err := GenerateScaled(s, func([]Job) error { return nil }, nil); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

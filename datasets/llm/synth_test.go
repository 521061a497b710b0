package llm

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lengthsN returns n lengths (i+1 prompt tokens, 2 output tokens).
func lengthsN(n int) []Length {
	ls := make([]Length, n)
	for i := range ls {
		ls[i] = Length{Prompt: i + 1, Output: 2}
	}
	return ls
}

// gapStats returns the mean and coefficient of variation of the gaps of
// reqs, the first gap from 0.
func gapStats(reqs []Request) (mean, cv float64) {
	prev, sum, sq := 0.0, 0.0, 0.0
	for _, r := range reqs {
		g := r.Arrival - prev
		prev = r.Arrival
		sum += g
		sq += g * g
	}
	n := float64(len(reqs))
	mean = sum / n
	sd := math.Sqrt((sq - n*mean*mean) / (n - 1))
	return mean, sd / mean
}

// TestSynthGaps: the gaps' sample mean is 1/rate and their sample CV the
// process's (1 for Poisson), within four standard errors of n gaps, over
// several seeds. The standard error of the mean gap is cv/(rate sqrt n);
// of the sample CV about (cv/2) sqrt(2/(n-1) + kappa/n), where kappa, the
// gaps' excess kurtosis, is 6/shape = 6 cv² for a gamma law (a delta-method
// approximation, which is why the check takes four errors, not two).
func TestSynthGaps(t *testing.T) {
	const n = 20000
	ls := lengthsN(n)
	tests := []struct {
		name string
		s    Synth
		cv   float64
	}{
		{"poisson 4/s", Synth{Process: Poisson, Rate: 4}, 1},
		{"poisson 0.25/s", Synth{Process: Poisson, Rate: 0.25, CV: 1}, 1},
		{"gamma 10/s cv 2", Synth{Process: Gamma, Rate: 10, CV: 2}, 2},
		{"gamma 3/s cv 0.5", Synth{Process: Gamma, Rate: 3, CV: 0.5}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				reqs, _, err := tt.s.Generate(ls, newSource(seed))
				if err != nil {
					t.Fatal(err)
				}
				mean, cv := gapStats(reqs)
				seMean := tt.cv / tt.s.Rate / math.Sqrt(n)
				if math.Abs(mean-1/tt.s.Rate) > 4*seMean {
					t.Errorf("seed %d: mean gap %v, want %v ± %v", seed, mean, 1/tt.s.Rate, 4*seMean)
				}
				seCV := tt.cv / 2 * math.Sqrt(2.0/(n-1)+6*tt.cv*tt.cv/n)
				if math.Abs(cv-tt.cv) > 4*seCV {
					t.Errorf("seed %d: gap CV %v, want %v ± %v", seed, cv, tt.cv, 4*seCV)
				}
				if reqs[0].Arrival <= 0 {
					t.Errorf("seed %d: first arrival %v, want one gap after 0", seed, reqs[0].Arrival)
				}
			}
		})
	}
}

// TestSynthDeterministic: the same seed gives the same requests bit for
// bit; another seed others. Without Shuffle the rows keep their order;
// with it they are a permutation.
func TestSynthDeterministic(t *testing.T) {
	ls := lengthsN(1000)
	s := Synth{Process: Gamma, Rate: 2, CV: 3, Shuffle: true}
	a, _, err := s.Generate(ls, newSource(7))
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := s.Generate(ls, newSource(7))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed (-first,+second):\n%s", diff)
	}
	c, _, _ := s.Generate(ls, newSource(8))
	if cmp.Equal(a, c) {
		t.Fatal("seeds 7 and 8 gave the same requests")
	}
	seen := make([]bool, len(ls)+1)
	moved := 0
	for i, r := range a {
		if r.ID != i || seen[r.Prompt] {
			t.Fatalf("request %d: %+v (repeated or misnumbered)", i, r)
		}
		seen[r.Prompt] = true
		if r.Prompt != i+1 {
			moved++
		}
	}
	if moved < len(ls)/2 {
		t.Errorf("shuffle moved %d of %d rows", moved, len(ls))
	}
	s.Shuffle = false
	d, _, _ := s.Generate(ls, newSource(7))
	for i, r := range d {
		if r.Prompt != i+1 {
			t.Fatalf("unshuffled request %d has prompt %d, want %d", i, r.Prompt, i+1)
		}
	}
}

// TestSynthRows: N, MinPrompt and Vidur's max_tokens trim, by hand.
func TestSynthRows(t *testing.T) {
	ls := []Length{{3000, 2000}, {1, 5}, {4000, 96}, {4000, 97}, {10, 4095}, {4096, 4096}}
	reqs, sk, err := Synth{Process: Poisson, Rate: 1, MinPrompt: 2, MaxTokens: 4096}.Generate(ls, newSource(1))
	if err != nil {
		t.Fatal(err)
	}
	// {3000, 2000}: excess 904, ceil(904*3000/5000) = 543 from the prompt,
	// ceil(904*2000/5000) = 362 from the output. {4000, 97}: excess 1,
	// ceil(4000/4097) = 1 and ceil(97/4097) = 1. {10, 4095}: excess 9,
	// ceil(90/4105) = 1, ceil(36855/4105) = 9. {4096, 4096}: 2048 each.
	want := []Length{{2457, 1638}, {4000, 96}, {3999, 96}, {9, 4086}, {2048, 2048}}
	var got []Length
	for _, r := range reqs {
		got = append(got, Length{r.Prompt, r.Output})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lengths (-want,+got):\n%s", diff)
	}
	if sk.Skipped != 1 || sk.SkipReasons[ReasonShortPrompt] != 1 {
		t.Errorf("skips %+v, want one short prompt", sk)
	}
	reqs, _, err = Synth{Process: Poisson, Rate: 1, N: 2}.Generate(ls, newSource(1))
	if err != nil || len(reqs) != 2 || reqs[1].Prompt != 1 {
		t.Errorf("N 2: %+v, %v", reqs, err)
	}
}

func TestSynthErrors(t *testing.T) {
	ls := lengthsN(3)
	tests := []struct {
		name string
		s    Synth
		ls   []Length
		is   error
	}{
		{"no process", Synth{Rate: 1}, ls, ErrBadSynth},
		{"zero rate", Synth{Process: Poisson}, ls, ErrBadSynth},
		{"NaN rate", Synth{Process: Poisson, Rate: math.NaN()}, ls, ErrBadSynth},
		{"inf rate", Synth{Process: Poisson, Rate: math.Inf(1)}, ls, ErrBadSynth},
		{"poisson cv", Synth{Process: Poisson, Rate: 1, CV: 2}, ls, ErrBadSynth},
		{"gamma no cv", Synth{Process: Gamma, Rate: 1}, ls, ErrBadSynth},
		{"gamma negative cv", Synth{Process: Gamma, Rate: 1, CV: -1}, ls, ErrBadSynth},
		{"too many", Synth{Process: Poisson, Rate: 1, N: 4}, ls, ErrBadSynth},
		{"negative N", Synth{Process: Poisson, Rate: 1, N: -1}, ls, ErrBadSynth},
		{"max tokens 1", Synth{Process: Poisson, Rate: 1, MaxTokens: 1}, ls, ErrBadSynth},
		{"slow", Synth{Process: Poisson, Rate: 1e-12}, ls, ErrBadSynth},
		{"no rows", Synth{Process: Poisson, Rate: 1}, nil, ErrEmpty},
		{"all short", Synth{Process: Poisson, Rate: 1, MinPrompt: 10}, ls, ErrEmpty},
		{"bad row", Synth{Process: Poisson, Rate: 1}, []Length{{0, 1}}, ErrBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.s.Generate(tt.ls, newSource(1))
			if !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}

func TestReplayErrors(t *testing.T) {
	reqs := []Request{{ID: 0, Arrival: 0, Prompt: 1, Output: 1}, {ID: 1, Arrival: 10, Prompt: 1, Output: 1}}
	tests := []struct {
		name string
		p    Replay
		is   error
	}{
		{"negative scale", Replay{GapScale: -1}, ErrBadReplay},
		{"NaN start", Replay{Start: math.NaN()}, ErrBadReplay},
		{"inf shift", Replay{Shift: math.Inf(1)}, ErrBadReplay},
		{"negative duration", Replay{Duration: -1}, ErrBadReplay},
		{"past max", Replay{GapScale: 1e8}, ErrBadReplay},
		{"empty window", Replay{Start: 1, Duration: 5}, ErrEmpty},
		{"after the end", Replay{Start: 11}, ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.p.Apply(reqs); !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
	// The window is half-open, its lead kept and scaled.
	got, err := Replay{Start: 5, Duration: 5.0000001, GapScale: 2, Shift: 1}.Apply(reqs)
	if want := []Request{{ID: 0, Arrival: 11, Prompt: 1, Output: 1}}; err != nil || !cmp.Equal(want, got) {
		t.Errorf("window [5, 10.0000001): %+v, %v; want %+v", got, err, want)
	}
	if got, err := (Replay{Start: 5, Duration: 5}).Apply(reqs); !errors.Is(err, ErrEmpty) {
		t.Errorf("window [5, 10): %+v, %v; want ErrEmpty", got, err)
	}
}

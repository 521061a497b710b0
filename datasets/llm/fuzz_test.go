package llm

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkTrace checks what every reader promises of a trace it returns:
// requests valid, sorted by arrival, numbered in order.
func checkTrace(t *testing.T, reqs []Request) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("no requests and no error")
	}
	for i := range reqs {
		r := &reqs[i]
		if err := r.Validate(); err != nil || r.ID != i || r.Arrival > MaxArrival {
			t.Fatalf("request %d: %+v (%v)", i, *r, err)
		}
		if i > 0 && r.Arrival < reqs[i-1].Arrival {
			t.Fatalf("request %d arrives at %v, before %v", i, r.Arrival, reqs[i-1].Arrival)
		}
	}
}

// roundTrip writes reqs in Drover's CSV and Parquet forms and wants them
// back exactly.
// sameRequests is cmp.Equal(a, b) for request lists: Request is a struct
// of exported numbers with no Equal method, so cmp compares it with ==,
// and cmp tells a nil list from an empty one. cmp's reflection is slow on
// long traces under -race.
func sameRequests(a, b []Request) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// diffRequests is cmp.Diff(want, got), computed only where sameRequests
// finds a difference.
func diffRequests(want, got []Request) string {
	if sameRequests(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

func roundTrip(t *testing.T, reqs []Request) {
	t.Helper()
	b, err := Encode(reqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := DecodeRequests(b, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if diff := diffRequests(reqs, tr.Requests); diff != "" {
		t.Fatalf("CSV round trip (-want,+got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, "fuzz", reqs); err != nil {
		t.Fatal(err)
	}
	tr, err = ReadParquet(buf.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffRequests(reqs, tr.Requests); diff != "" {
		t.Fatalf("Parquet round trip (-want,+got):\n%s", diff)
	}
}

// fuzzDecode decodes data in format f with and without SkipBad and checks
// the trace that comes back, and that it survives a round trip.
func fuzzDecode(t *testing.T, f Format, data []byte) {
	for _, skip := range []bool{false, true} {
		tr, err := Decode(f, data, Options{Source: "fuzz", SkipBad: skip})
		if err != nil {
			continue
		}
		checkTrace(t, tr.Requests)
		roundTrip(t, tr.Requests)
	}
}

func FuzzDecodeAzure(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n2023-11-16 18:17:04.0319600,3180,8"))
	f.Add([]byte("\ufeffTIMESTAMP,NumImages,ContextTokens,GeneratedTokens\n2024-10-15T12:00:05.819Z,1,100,10\n2024-10-15T12:00:01Z,0,1e3,2.0\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n9999-12-31 23:59:59.999999999,1,1\n0001-01-01 00:00:00,1,1\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,NaN,-1\n2023-11-16 18:17:03,16777217,1\n"))
	f.Add([]byte("TIMESTAMP,NumImages,ContextTokens,GeneratedTokens\n2024-10-15T12:00:05.819Z,-1,100,10\n2024-10-15T12:00:06.000Z,65537,1,1\n2024-10-15T12:00:07.000Z,1.5,1,1\n2024-10-15T12:00:08.000Z,,1,1\n2024-10-15T12:00:09.000Z,65536,7,3\n"))
	f.Add(writeLMM([]Request{{Arrival: 0, Prompt: 1200, Output: 40, Images: 2}, {Arrival: 0.001, Prompt: 90, Output: 300}, {Arrival: 604799.999, Prompt: 150000, Output: 16000, Images: 9500}}))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatAzure, data) })
}

func FuzzDecodeRequests(f *testing.F) {
	f.Add([]byte(""))
	b, _ := Encode(sample, nil)
	f.Add(b)
	f.Add([]byte("arrival,prompt_tokens,output_tokens\n-0,1,1\nNaN,1,1\n1e8,1,1\n1e309,1,1\n0x1p-2,3,3\n"))
	f.Add([]byte("output_tokens,x,arrival,prompt_tokens\n\"3\",\"a,b\",2.5,30\n"))
	f.Add([]byte("arrival,prompt_tokens,output_tokens,images\n0,1,1,0\n1,2,3,65536\n2,2,3,-1\n3,2,3,1e3\n4,2,3,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatRequests, data) })
}

func FuzzDecodeSplitwise(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n0,2,0,1.0,1,4808,10\n1,2,0,1.052,1,3180,8\n"))
	f.Add([]byte("arrival_timestamp,prompt_size,token_size\n-0,1,1\n1e300,1,1\n,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, FormatSplitwise, data) })
}

// FuzzReadParquet mutates a valid file: the seed is the random seed of
// the trace written, plus byte edits chosen by the fuzzer (random bytes
// seldom reach past a Parquet footer).
func FuzzReadParquet(f *testing.F) {
	f.Add(uint64(1), uint32(0), byte(0), []byte{})
	f.Add(uint64(2), uint32(100), byte(0xff), []byte("PAR1"))
	f.Add(uint64(3), uint32(7), byte(1), []byte("\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, seed uint64, at uint32, xor byte, tail []byte) {
		r := newSource(seed)
		reqs := make([]Request, 1+r.Uint64()%20)
		for i := range reqs {
			reqs[i] = Request{ID: i, Arrival: float64(i) * 0.7, Prompt: 1 + int(r.Uint64()%MaxTokens), Output: 1 + int(r.Uint64()%4096)}
			if seed&1 == 1 { // an odd seed writes the images column
				reqs[i].Images = int((seed/2 + uint64(i)) % 4)
			}
		}
		var buf bytes.Buffer
		if err := WriteParquet(&buf, "fuzz", reqs); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		data[int(at)%len(data)] ^= xor
		if len(tail) > 0 {
			data = append(data[:max(0, len(data)-len(tail))], tail...)
		}
		for _, skip := range []bool{false, true} {
			tr, err := ReadParquet(data, Options{Source: "fuzz", SkipBad: skip})
			if err != nil {
				continue
			}
			checkTrace(t, tr.Requests)
			if xor == 0 && len(tail) == 0 && !cmp.Equal(reqs, tr.Requests) {
				t.Fatalf("unchanged file read back as %+v, want %+v", tr.Requests, reqs)
			}
		}
	})
}

func FuzzDecodeVidur(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n3772,54,3826,69.85185185185185\n1,5,6,0.2\n"))
	f.Add([]byte("num_prefill_tokens,num_decode_tokens\n-1,2\n4,0\n5,x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			ls, err := DecodeVidur(data, Options{SkipBad: skip})
			if err != nil {
				continue
			}
			reqs, _, err := Synth{Process: Poisson, Rate: 1}.Generate(ls.Rows, newSource(1))
			if err != nil {
				t.Fatal(err) // every row read is a valid length
			}
			checkTrace(t, reqs)
		}
	})
}

// FuzzSynthReplay: any config Generate and Apply accept gives a valid,
// sorted, numbered trace, the same twice for one seed; the randomness
// comes from the fuzz arguments.
func FuzzSynthReplay(f *testing.F) {
	f.Add(uint64(1), 4.0, 0.0, false, 100, 0.0, 0.0, 0.5, 1.0, 2, 0)
	f.Add(uint64(2), 0.01, 5.0, true, 10, 50.0, 100.0, 2.0, 0.0, 0, 4096)
	f.Add(uint64(3), 1e6, 0.001, true, 1000, 0.0, 1e-6, 1e-300, 1e7, 1, 2)
	f.Fuzz(func(t *testing.T, seed uint64, rate, cv float64, shuffle bool, n int, start, dur, scale, shift float64, minPrompt, maxTokens int) {
		if n < 1 || n > 2000 {
			return
		}
		ls := make([]Length, n)
		r := newSource(seed)
		for i := range ls {
			ls[i] = Length{Prompt: 1 + int(r.Uint64()%8192), Output: 1 + int(r.Uint64()%2048)}
		}
		s := Synth{Process: Poisson, Rate: rate, Shuffle: shuffle, MinPrompt: minPrompt, MaxTokens: maxTokens}
		if cv != 0 {
			s.Process, s.CV = Gamma, math.Abs(cv)
		}
		reqs, _, err := s.Generate(ls, newSource(seed))
		if err != nil {
			return
		}
		checkTrace(t, reqs)
		again, _, _ := s.Generate(ls, newSource(seed))
		if !cmp.Equal(reqs, again) {
			t.Fatal("one seed, two traces")
		}
		if maxTokens > 1 {
			for _, r := range reqs {
				if r.Prompt+r.Output > max(maxTokens, 2) {
					t.Fatalf("%+v: more than MaxTokens %d", r, maxTokens)
				}
			}
		}
		out, err := Replay{Start: start, Duration: dur, GapScale: scale, Shift: shift}.Apply(reqs)
		if err != nil {
			return
		}
		checkTrace(t, out)
		if len(out) > len(reqs) || out[0].Arrival < shift {
			t.Fatalf("replay: %d of %d requests, first at %v, shift %v", len(out), len(reqs), out[0].Arrival, shift)
		}
	})
}

// FuzzLMMSynth: any window LMMSynth accepts gives a valid, sorted,
// numbered trace within the window, the same twice for one seed, whose
// image requests have images; the randomness comes from the fuzz seed.
func FuzzLMMSynth(f *testing.F) {
	f.Add(uint64(1), 0, 60, 0)
	f.Add(uint64(2), LMM2025Minutes-1, 0, 1)
	f.Add(uint64(3), 1231, 10, 100_000_000)
	f.Add(uint64(4), -1, 5, -1)
	f.Fuzz(func(t *testing.T, seed uint64, start, minutes, requests int) {
		if minutes > 120 || minutes == 0 && start < LMM2025Minutes-120 || requests > 20*LMM2025Requests {
			return // keep each run small
		}
		s := LMMSynth{Requests: requests, Start: start, Minutes: minutes}
		reqs, err := s.Generate(newSource(seed))
		if err != nil {
			if !errors.Is(err, ErrBadLMMSynth) && !errors.Is(err, ErrEmpty) {
				t.Fatal(err)
			}
			return
		}
		checkTrace(t, reqs)
		again, _ := s.Generate(newSource(seed))
		if !cmp.Equal(reqs, again) {
			t.Fatal("one seed, two traces")
		}
		span := float64(minutes)
		if minutes == 0 {
			span = float64(LMM2025Minutes - start)
		}
		if last := reqs[len(reqs)-1].Arrival; last >= 60*span {
			t.Fatalf("arrival %v s past the window of %v minutes", last, span)
		}
		roundTrip(t, reqs)
	})
}

// FuzzParseTimestamp: a timestamp read prints back (in its layout) as what
// was read, but for the 'T', the 'Z' and the fraction's trailing zeros.
func FuzzParseTimestamp(f *testing.F) {
	f.Add("2023-11-16 18:17:03.9799600")
	f.Add("2024-10-15T12:00:05.819Z")
	f.Add("2023-02-29 00:00:00")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTimestamp(s)
		if err != nil {
			return
		}
		back, err := ParseTimestamp(ts.Format("2006-01-02 15:04:05.999999999"))
		if err != nil || !back.Equal(ts) {
			t.Fatalf("%q -> %v -> %v (%v)", s, ts, back, err)
		}
	})
}

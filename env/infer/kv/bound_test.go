package kv

import (
	"errors"
	"testing"
)

// boundFormats are the formats TestBoundMatchesFormat binds: every kind,
// both dequantizations of the 2-bit baselines, and HACK off each default.
func boundFormats(t *testing.T) []Format {
	fs := append(Formats(), KVQuantTorch(), CacheGenTorch())
	for _, name := range []string{"hack-pi16", "hack-pi32-paged", "hack-pi64-nose", "hack-pi64-nore", "hack-pi64-paged-nose-nore",
		"hack-pi64-qp", "hack-pi128-qp-paged", "hack-pi64-b4", "hack-pi64-b8-sink0", "hack-pi256-sink1-qp"} {
		f, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return fs
}

// TestBoundMatchesFormat checks that a Bound's methods give what the
// checked Format methods give for its format and architecture, bit for
// bit, for every catalogued architecture, the formats of boundFormats and
// token counts around every partition and anchor boundary; that Step is
// Work less the fields done once; and that Bind refuses what Check
// refuses, with Check's error.
func TestBoundMatchesFormat(t *testing.T) {
	tokens := []int{maxTokens}
	for n := range 300 {
		tokens = append(tokens, n)
	}
	for _, n := range []int{511, 512, 513, 4095, 4096, 4097, 12000, 16000, 100003} {
		tokens = append(tokens, n)
	}
	for _, a := range Archs() {
		for _, f := range boundFormats(t) {
			b, err := f.Bind(a)
			if cerr := f.Check(a); cerr != nil {
				if b != nil || err == nil || err.Error() != cerr.Error() {
					t.Errorf("%s on %s: Bind %v, %v; Check %v", f, a.Name, b, err, cerr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s on %s: %v", f, a.Name, err)
			}
			if b.Format() != f || b.Arch() != a || b.Name() != f.Name() {
				t.Fatalf("%s on %s: bound %s (%s) on %s", f, a.Name, b.Format(), b.Name(), b.Arch().Name)
			}
			torch := f.Kind == KVQuant || f.Kind == CacheGen
			for _, n := range tokens {
				if got, want := b.StoredBytes(n), f.StoredBytes(a, n); got != want {
					t.Fatalf("%s on %s, %d tokens: StoredBytes %d, Format's %d", f, a.Name, n, got, want)
				}
				if got, want := b.TransferBytes(n), f.TransferBytes(a, n); got != want {
					t.Fatalf("%s on %s, %d tokens: TransferBytes %d, Format's %d", f, a.Name, n, got, want)
				}
				w := f.Work(a, n)
				if got := b.Work(n); got != w {
					t.Fatalf("%s on %s, %d tokens: Work %+v, Format's %+v", f, a.Name, n, got, w)
				}
				step := StepCost{Bytes: w.StepBytes, DequantBytes: w.DequantBytes, Ops: w.Dequant + w.Approx, INT8: w.ApproxINT8}
				if got := b.Step(n); got != step || (w.Dequant != 0 && w.Approx != 0) {
					t.Fatalf("%s on %s, %d tokens: Step %+v, Work's step fields %+v", f, a.Name, n, got, step)
				}
				if torch {
					if got, want := b.TorchPasses(n), TorchPasses(a, f, n); got != want {
						t.Fatalf("%s on %s, %d tokens: TorchPasses %+v, the function's %+v", f, a.Name, n, got, want)
					}
				}
			}
		}
	}
	// Refusals: Check's error, and a panic for a token count out of range.
	bad := Arch{Name: "bad"}
	if _, err := HACKPi(64).Bind(bad); !errors.Is(err, ErrBadArch) {
		t.Errorf("Bind of an invalid arch: %v, want ErrBadArch", err)
	}
	if _, err := (Format{Kind: HACK, Partition: 24, Bits: 2}).Bind(Qwen3_8B); !errors.Is(err, ErrBadFormat) {
		t.Errorf("Bind of an invalid format: %v, want ErrBadFormat", err)
	}
	b, err := HACKPi(64).Bind(Qwen3_8B)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, maxTokens + 1} {
		for name, call := range map[string]func(){
			"StoredBytes": func() { b.StoredBytes(n) }, "TransferBytes": func() { b.TransferBytes(n) },
			"Work": func() { b.Work(n) }, "Step": func() { b.Step(n) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s(%d) did not panic", name, n)
					}
				}()
				call()
			}()
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("TorchPasses of a HACK format did not panic")
		}
	}()
	b.TorchPasses(10)
}

// BenchmarkStep prices decode steps of Llama-2-70B's cache over 12,000 to
// 16,095 tokens (the HACK paper's prompts) in each format, through a
// Bound (what the simulator calls at every iteration) and through the
// checked Format.Work. Compare two builds with
//
//	go test ./env/infer/kv -run '^$' -bench Step -count 10 | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkStep(b *testing.B) {
	for _, name := range []string{"int8", "kvquant", "cachegen", "kvquant-torch", "cachegen-torch", "hack-pi64", "hack-pi64-paged"} {
		f, err := Parse(name)
		if err != nil {
			b.Fatal(err)
		}
		bd, err := f.Bind(Llama2_70B)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/bound", func(b *testing.B) {
			var sum Work
			for i := 0; b.Loop(); i++ {
				c := bd.Step(12000 + i&4095)
				sum.StepBytes += c.Bytes
				sum.Dequant += c.Ops
			}
			benchSink = sum
		})
		b.Run(name+"/checked", func(b *testing.B) {
			var sum Work
			for i := 0; b.Loop(); i++ {
				w := f.Work(Llama2_70B, 12000+i&4095)
				sum.StepBytes += w.StepBytes
				sum.Dequant += w.Dequant + w.Approx
			}
			benchSink = sum
		})
	}
}

// benchSink keeps BenchmarkStep's sums alive.
var benchSink Work

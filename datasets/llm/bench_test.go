package llm

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

var conv struct {
	once sync.Once
	data []byte
	err  error
}

// convData returns the bytes of the Azure 2023 conversation trace, read
// once.
func convData(b *testing.B) []byte {
	path := sharedtraces.Path(b, "llm", "azure_llm_2023", "AzureLLMInferenceTrace_conv.csv")
	conv.once.Do(func() { conv.data, conv.err = os.ReadFile(path) })
	if conv.err != nil {
		b.Fatal(conv.err)
	}
	return conv.data
}

// BenchmarkDecode reads the Azure 2023 conversation trace (19,366
// requests) and the same requests in Drover's CSV and Parquet forms.
//
//	go test ./datasets/llm -run '^$' -bench Decode -count 6 | tee new.txt; benchstat old.txt new.txt
func BenchmarkDecode(b *testing.B) {
	data := convData(b)
	tr, err := DecodeAzure(data, Options{})
	if err != nil {
		b.Fatal(err)
	}
	csv, err := Encode(tr.Requests, nil)
	if err != nil {
		b.Fatal(err)
	}
	var pq bytes.Buffer
	if err := WriteParquet(&pq, "conv", tr.Requests); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		f    Format
	}{{"azure", data, FormatAzure}, {"requests-csv", csv, FormatRequests}, {"parquet", pq.Bytes(), FormatParquet}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if _, err := Decode(c.f, c.data, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tr.Requests)), "ns/request")
		})
	}
}

// BenchmarkSynth generates 100,000 Gamma arrivals (CV 2), shuffled.
func BenchmarkSynth(b *testing.B) {
	ls := lengthsN(100000)
	s := Synth{Process: Gamma, Rate: 10, CV: 2, Shuffle: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Generate(ls, newSource(1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ls)), "ns/request")
}

package fast

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/servetest"
)

// checkDecode decodes b with decodePlaceRequest and with proto.Unmarshal
// and fails when decodePlaceRequest accepted b and the two differ, or
// accepted what proto.Unmarshal refuses. It reports whether the fast
// decoder accepted b. It decodes twice, into fresh messages and into the
// reused scratch (reset after the previous call's request, so what one
// request leaves behind must not show in the next), and the two must
// agree. The scratch decodes a copy of b that is then overwritten, as
// gRPC reuses its buffers: no string of the request may point into it.
func checkDecode(t *testing.T, b []byte) bool {
	t.Helper()
	inScratch := &pb.PlaceRequest{}
	bc := bytes.Clone(b)
	okScratch := decodePlaceRequest(bc, inScratch, &testScratch)
	for i := range bc {
		bc[i] = 0xff
	}
	defer testScratch.reset()
	fast := &pb.PlaceRequest{}
	ok := decodePlaceRequest(b, fast, nil)
	if ok != okScratch || ok && !proto.Equal(fast, inScratch) && !hasNaN(fast) {
		t.Fatalf("decoding %x into fresh messages (ok %v) and into the scratch (ok %v) differ:\n %v\n %v", b, ok, okScratch, fast, inScratch)
	}
	want := &pb.PlaceRequest{}
	err := proto.Unmarshal(b, want)
	if !ok {
		if !proto.Equal(fast, &pb.PlaceRequest{}) {
			t.Fatalf("refused %x but left %v", b, fast)
		}
		return false
	}
	if err != nil {
		t.Fatalf("accepted %x, which proto.Unmarshal refuses: %v", b, err)
	}
	det := proto.MarshalOptions{Deterministic: true}
	gb, err1 := det.Marshal(fast)
	wb, err2 := det.Marshal(want)
	if err1 != nil || err2 != nil || !bytes.Equal(gb, wb) || !proto.Equal(fast, want) && !hasNaN(want) {
		t.Fatalf("decoded %x as\n %v\nproto.Unmarshal:\n %v", b, fast, want)
	}
	return true
}

// testScratch is checkDecode's reused Scratch.
var testScratch Scratch

func hasNaN(m *pb.PlaceRequest) bool {
	if math.IsNaN(m.GetJob().GetExpectedDurationS()) || math.IsNaN(m.GetCluster().GetIntraRackGbps()) || math.IsNaN(m.GetCluster().GetCrossRackGbps()) {
		return true
	}
	for _, n := range m.GetCluster().GetNodes() {
		for _, v := range []float64{n.GetSpeed(), n.GetMemoryGib(), n.GetNicGbps(), n.GetCpuUtil(), n.GetMemBwUtil(), n.GetNetUtil()} {
			if math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// decodeSeeds are encodings of requests: random ones, and ones the fast
// decoder must leave to proto.Unmarshal.
func decodeSeeds() [][]byte {
	rng := rand.New(rand.NewPCG(3, 9))
	var seeds [][]byte
	for range 200 {
		req := servetest.RandomPlaceRequest(rng)
		req.Job.Model = "m"
		req.Job.Arch, req.Job.PsShards = pb.Arch(rng.IntN(3)), int32(rng.IntN(3)-1)
		req.Job.ExpectedDurationS = math.NaN()
		req.Cluster.PendingJobs, req.Cluster.RunningJobs = int32(rng.IntN(5)-2), -1<<31
		b, err := proto.Marshal(req)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, b)
	}
	b := seeds[0]
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	node := protowire.AppendBytes(tag(1, protowire.BytesType), cat(tag(1, protowire.BytesType), []byte{2, 'x', 'y'}))
	cluster := func(body []byte) []byte { return protowire.AppendBytes(tag(2, protowire.BytesType), body) }
	job := func(body []byte) []byte { return protowire.AppendBytes(tag(1, protowire.BytesType), body) }
	seeds = append(seeds,
		nil,
		cat(b, b), // every message twice: merged
		cat(b, tag(99, protowire.VarintType), []byte{1}), // unknown field
		b[:len(b)/2], // truncated
		cluster(node),
		cluster(cat(node, node, tag(4, protowire.VarintType), []byte{0xff, 0xff, 0xff, 0xff, 0x0f})),
		cluster(cat(tag(1, protowire.BytesType), []byte{3, 0x0a, 1, 0xff})),                           // invalid UTF-8 id
		cluster(cat(tag(4, protowire.BytesType), []byte{1, 5})),                                       // a packed scalar
		cluster(cat(tag(2, protowire.Fixed32Type), []byte{0, 0, 0, 0})),                               // wrong wire type
		job(cat(tag(8, protowire.BytesType), []byte{1, 'a'}, tag(8, protowire.BytesType), []byte{0})), // exclude_nodes
		job(cat(tag(3, protowire.VarintType), []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})),
		job(cat(tag(3, protowire.VarintType), []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02})), // overflow
		job(cat(tag(3, protowire.VarintType), []byte{1}, tag(3, protowire.VarintType), []byte{2})),                 // last one wins
		job(nil), cluster(nil), cat(job(nil), cluster(nil)),
		cat(tag(0, protowire.BytesType), []byte{0}),
		cat(tag(1, protowire.StartGroupType), tag(1, protowire.EndGroupType)),
	)
	return seeds
}

func TestDecodePlaceRequest(t *testing.T) {
	accepted := 0
	for _, b := range decodeSeeds() {
		if checkDecode(t, b) {
			accepted++
		}
	}
	if accepted < 200 {
		t.Errorf("the fast decoder accepted only %d requests", accepted)
	}
	// Through the codec, from one buffer and from several.
	want := servetest.RandomPlaceRequest(rand.New(rand.NewPCG(1, 1)))
	b, _ := proto.Marshal(want)
	c := NewCodec()
	for _, data := range []mem.BufferSlice{{mem.SliceBuffer(b)}, {mem.SliceBuffer(b[:7]), mem.SliceBuffer(b[7:])}} {
		got := &pb.PlaceRequest{}
		if err := c.Unmarshal(data, got); err != nil || !proto.Equal(got, want) {
			t.Fatalf("codec: %v, %v; want %v", got, err, want)
		}
	}
	// Other messages go to gRPC's codec.
	got := &pb.ReportRequest{}
	rb, _ := proto.Marshal(&pb.ReportRequest{Outcomes: []*pb.Outcome{{JobId: "j"}}})
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(rb)}, got); err != nil || got.GetOutcomes()[0].GetJobId() != "j" {
		t.Fatalf("codec on a ReportRequest: %v, %v", got, err)
	}
	if c.Name() != "proto" {
		t.Fatalf("codec name %q", c.Name())
	}
}

// FuzzDecodePlaceRequest checks that the fast decoder agrees with
// proto.Unmarshal on whatever it accepts.
func FuzzDecodePlaceRequest(f *testing.F) {
	for _, b := range decodeSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, b) })
}

package fast

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	pb "github.com/drover-sched/drover/serve/proto"
)

// Codec is the servers' gRPC Codec (the gRPC listener's, through
// grpc.ForceServerCodecV2): gRPC's protobuf codec, except that a
// PlaceRequest is decoded by decodePlaceRequest. protobuf-go's generic
// decoder allocates every node message and every string of a request on
// its own (about 130 allocations for 64 nodes) and was a quarter of the
// server's CPU time per Place; decodePlaceRequest makes one copy of the
// payload (every string is a slice of it) and one array of nodes. It
// accepts only what it can decode exactly as proto.Unmarshal does (each
// field at most once where merging would apply, known fields with their
// own wire types, valid UTF-8); anything else, unknown fields included, it
// leaves to proto.Unmarshal. FuzzDecodePlaceRequest checks the two agree.
type Codec struct {
	base encoding.CodecV2
}

var _ encoding.CodecV2 = Codec{}

// NewCodec returns the codec.
func NewCodec() Codec { return Codec{base: encoding.GetCodecV2("proto")} }

// Name implements encoding.CodecV2.
func (Codec) Name() string { return "proto" }

// Marshal implements encoding.CodecV2.
func (c Codec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

// Unmarshal implements encoding.CodecV2. A *DecodeTarget is decoded
// into its message, and a decoding error is kept in it, not returned:
// gRPC answers a Codec error with Internal before the handler runs, and
// the server answers InvalidArgument (see withDecodeStatus).
func (c Codec) Unmarshal(data mem.BufferSlice, v any) error {
	t, ok := v.(*DecodeTarget)
	if !ok {
		return c.unmarshal(data, v, nil)
	}
	if err := c.unmarshal(data, t.M, t.Scratch); err != nil {
		t.Err = fmt.Errorf("%s: %w", malformedRequest, err)
	}
	return nil
}

func (c Codec) unmarshal(data mem.BufferSlice, v any, sc *Scratch) error {
	if m, ok := v.(*pb.PlaceRequest); ok {
		var b []byte
		if len(data) == 1 {
			b = data[0].ReadOnlyData()
		} else {
			b = data.Materialize()
		}
		if decodePlaceRequest(b, m, sc) {
			return nil
		}
	}
	return c.base.Unmarshal(data, v)
}

// DecodeTarget is a request message for the Codec to decode into M,
// with the decoding error, if any, in Err; a PlaceRequest's messages go
// in Scratch when it is set.
type DecodeTarget struct {
	// M is the message to decode into.
	M any
	// Err is the decoding error.
	Err error
	// Scratch, when set, holds a PlaceRequest's messages.
	Scratch *Scratch
}

// Scratch is reusable memory for decodePlaceRequest's messages:
// the job, the cluster and its nodes. A decoded request points into it
// until reset. Its strings are the request's own, never views of the
// payload (which gRPC reuses) and never rewritten, so they stay valid
// after a reset: node i's id and GPU type and the job's model are the
// same string as the previous request's decoded here when they are
// equal (a scheduler asks about the same cluster again and again), and
// copied from the payload when not; the job's id and excluded nodes are
// copied. The Place handlers reuse one per call (PlaceIn): a
// 64-node request's nodes (9 KB) and its payload copy (4.7 KB) were most
// of the server's garbage per Place.
type Scratch struct {
	job     pb.Job
	cluster pb.Cluster
	nodes   []pb.Node
	ptrs    []*pb.Node

	// The strings of earlier requests, by place.
	ids, gpuTypes []string
	model         string
}

// own returns v as a string of its own: the remembered *prev when equal,
// else a copy, which it remembers. Without a scratch v is returned as it
// is (it is already a slice of the request's own payload copy).
func (sc *Scratch) own(v string, prev *string) string {
	if sc == nil {
		return v
	}
	if *prev != v {
		*prev = strings.Clone(v)
	}
	return *prev
}

// clone is own for strings not remembered.
func (sc *Scratch) clone(v string) string {
	if sc == nil {
		return v
	}
	return strings.Clone(v)
}

// reset drops every reference the scratch holds into the last request
// it decoded, keeping its memory.
func (sc *Scratch) reset() {
	clear(sc.nodes)
	clear(sc.ptrs)
	sc.nodes, sc.ptrs = sc.nodes[:0], sc.ptrs[:0]
	sc.job, sc.cluster = pb.Job{}, pb.Cluster{}
}

// malformedRequest starts the message of a request the Codec cannot
// decode.
const malformedRequest = "drover: malformed protobuf request"

// decodePlaceRequest decodes b into m, which must be empty, and reports
// whether it could; when it could not, m is left empty. Without sc the
// messages are allocated and their strings share one copy of b; with sc
// (which must be reset) m's job, cluster and nodes are sc's, and its
// strings are sc's own (see Scratch), so nothing in m points into
// b.
func decodePlaceRequest(b []byte, m *pb.PlaceRequest, sc *Scratch) bool {
	var job, cluster field
	seenJob, seenCluster := false, false
	var s string
	if sc != nil {
		s = unsafe.String(unsafe.SliceData(b), len(b)) // read only while decoding
	} else {
		s = string(b) // the one copy
	}
	for s != "" {
		f, rest, ok := next(s)
		if !ok || f.typ != protowire.BytesType {
			return false
		}
		s = rest
		switch {
		case f.num == 1 && !seenJob:
			job, seenJob = f, true
		case f.num == 2 && !seenCluster:
			cluster, seenCluster = f, true
		default:
			return false // an unknown field, or a message to merge
		}
	}
	var j *pb.Job
	var c *pb.Cluster
	if seenJob {
		j = new(pb.Job)
		if sc != nil {
			j = &sc.job
		}
		if !decodeJob(job.str, j, sc) {
			return false
		}
	}
	if seenCluster {
		c = new(pb.Cluster)
		if sc != nil {
			c = &sc.cluster
		}
		if !decodeCluster(cluster.str, c, sc) {
			return false
		}
	}
	m.Job, m.Cluster = j, c
	return true
}

// field is one decoded field: its number, wire type, and value (the
// varint or fixed64 bits, or the bytes as a slice of the payload).
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	str string
}

// next decodes the field at the start of s and returns it and the rest
// of s; ok is false at a malformed field or a group.
func next(s string) (f field, rest string, ok bool) {
	num, typ, n := consumeTag(s)
	if n < 0 {
		return f, "", false
	}
	s = s[n:]
	f.num, f.typ = num, typ
	switch typ {
	case protowire.VarintType:
		v, n := consumeVarint(s)
		if n < 0 {
			return f, "", false
		}
		f.u, s = v, s[n:]
	case protowire.Fixed64Type:
		if len(s) < 8 {
			return f, "", false
		}
		f.u = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		s = s[8:]
	case protowire.BytesType:
		l, n := consumeVarint(s)
		if n < 0 || l > uint64(len(s)-n) {
			return f, "", false
		}
		f.str, s = s[n:n+int(l)], s[n+int(l):]
	default:
		return f, "", false // fixed32 and groups: no such field here
	}
	return f, s, true
}

// consumeVarint is protowire.ConsumeVarint on a string.
func consumeVarint(s string) (uint64, int) {
	var v uint64
	for i := 0; i < len(s) && i < 10; i++ {
		c := s[i]
		if i == 9 && c > 1 {
			return 0, -1 // overflows 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// consumeTag is protowire.ConsumeTag on a string.
func consumeTag(s string) (protowire.Number, protowire.Type, int) {
	v, n := consumeVarint(s)
	if n < 0 {
		return 0, 0, -1
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
		return 0, 0, -1
	}
	return num, typ, n
}

// str checks that f is a valid string field.
func str(f field) (string, bool) {
	return f.str, f.typ == protowire.BytesType && utf8.ValidString(f.str)
}

// int32Of reads f as an int32 (or enum) field, as protobuf-go does.
func int32Of(f field) (int32, bool) { return int32(f.u), f.typ == protowire.VarintType }

// doubleOf reads f as a double field.
func doubleOf(f field) (float64, bool) {
	return math.Float64frombits(f.u), f.typ == protowire.Fixed64Type
}

// decodeJob decodes s into j, which must be empty, and reports whether it
// could; its strings are sc's own when sc is set.
func decodeJob(s string, j *pb.Job, sc *Scratch) bool {
	excl := 0
	for t := s; t != ""; {
		f, rest, ok := next(t)
		if !ok {
			return false
		}
		if f.num == 8 {
			excl++
		}
		t = rest
	}
	if excl > 0 {
		j.ExcludeNodes = make([]string, 0, excl)
	}
	for s != "" {
		f, rest, ok := next(s)
		if !ok {
			return false
		}
		s = rest
		switch f.num {
		case 1:
			var v string
			v, ok = str(f)
			j.Id = sc.clone(v)
		case 2:
			var v string
			if v, ok = str(f); ok && sc != nil {
				v = sc.own(v, &sc.model)
			}
			j.Model = v
		case 3:
			j.Workers, ok = int32Of(f)
		case 4:
			var a int32
			a, ok = int32Of(f)
			j.Arch = pb.Arch(a)
		case 5:
			j.PsShards, ok = int32Of(f)
		case 6:
			j.BatchSize, ok = int32Of(f)
		case 7:
			j.ExpectedDurationS, ok = doubleOf(f)
		case 8:
			var id string
			id, ok = str(f)
			j.ExcludeNodes = append(j.ExcludeNodes, sc.clone(id))
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// decodeCluster decodes s into c, which must be empty, and reports
// whether it could; its nodes are sc's when sc is set.
func decodeCluster(s string, c *pb.Cluster, sc *Scratch) bool {
	count := 0
	for t := s; t != ""; {
		f, rest, ok := next(t)
		if !ok {
			return false
		}
		if f.num == 1 {
			count++
		}
		t = rest
	}
	var nodes []pb.Node
	switch {
	case count == 0:
	case sc != nil:
		if cap(sc.nodes) < count {
			sc.nodes, sc.ptrs = make([]pb.Node, count), make([]*pb.Node, 0, count)
		}
		if len(sc.ids) < count {
			sc.ids = append(sc.ids, make([]string, count-len(sc.ids))...)
			sc.gpuTypes = append(sc.gpuTypes, make([]string, count-len(sc.gpuTypes))...)
		}
		nodes, c.Nodes = sc.nodes[:count], sc.ptrs[:0]
		sc.nodes, sc.ptrs = nodes, sc.ptrs[:count] // what reset clears
	default:
		nodes = make([]pb.Node, count)
		c.Nodes = make([]*pb.Node, 0, count)
	}
	for s != "" {
		f, rest, ok := next(s)
		if !ok {
			return false
		}
		s = rest
		switch f.num {
		case 1:
			if f.typ != protowire.BytesType {
				return false
			}
			nd := &nodes[len(c.Nodes)]
			if !decodeNode(f.str, nd, sc, len(c.Nodes)) {
				return false
			}
			c.Nodes = append(c.Nodes, nd)
		case 2:
			c.IntraRackGbps, ok = doubleOf(f)
		case 3:
			c.CrossRackGbps, ok = doubleOf(f)
		case 4:
			c.PendingJobs, ok = int32Of(f)
		case 5:
			c.RunningJobs, ok = int32Of(f)
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// decodeNode decodes s into n, node idx of its request; its strings are
// sc's own when sc is set.
func decodeNode(s string, n *pb.Node, sc *Scratch, idx int) bool {
	// The hot loop (64 nodes a request, 12 fields each): one-byte tags
	// (every field number below 16) read directly, anything else refused.
	for i := 0; i < len(s); {
		tag := s[i]
		i++
		switch tag {
		case 1<<3 | 2, 4<<3 | 2: // id, gpu_type
			l, k := consumeVarint(s[i:])
			if k < 0 || l > uint64(len(s)-i-k) {
				return false
			}
			v := s[i+k : i+k+int(l)]
			if !utf8.ValidString(v) {
				return false
			}
			switch {
			case sc == nil && tag == 1<<3|2:
				n.Id = v
			case sc == nil:
				n.GpuType = v
			case tag == 1<<3|2:
				n.Id = sc.own(v, &sc.ids[idx])
			default:
				n.GpuType = sc.own(v, &sc.gpuTypes[idx])
			}
			i += k + int(l)
		case 2 << 3, 3 << 3, 6 << 3, 9 << 3: // gpus, free_gpus, cpus, rack
			var u uint64
			if i < len(s) && s[i] < 0x80 {
				u = uint64(s[i])
				i++
			} else {
				v, k := consumeVarint(s[i:])
				if k < 0 {
					return false
				}
				u = v
				i += k
			}
			switch tag {
			case 2 << 3:
				n.Gpus = int32(u)
			case 3 << 3:
				n.FreeGpus = int32(u)
			case 6 << 3:
				n.Cpus = int32(u)
			default:
				n.Rack = int32(u)
			}
		case 5<<3 | 1, 7<<3 | 1, 8<<3 | 1, 10<<3 | 1, 11<<3 | 1, 12<<3 | 1: // doubles
			if len(s)-i < 8 {
				return false
			}
			x := math.Float64frombits(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56)
			i += 8
			switch tag >> 3 {
			case 5:
				n.Speed = x
			case 7:
				n.MemoryGib = x
			case 8:
				n.NicGbps = x
			case 10:
				n.CpuUtil = x
			case 11:
				n.MemBwUtil = x
			default:
				n.NetUtil = x
			}
		default:
			return false // another field, wire type or tag encoding: proto.Unmarshal decides
		}
	}
	return true
}

// maxPooledNodes bounds the requests whose scratch is reused: a huge
// request's is left to the collector.
const maxPooledNodes = 1024

// PlaceIn is a Place request with its DecodeTarget and the scratch its
// messages are decoded into, reused from call to call. The Core keeps
// nothing of its request once Place returns (it converts the request
// into a snapshot first, and what it keeps, such as node ids, are
// strings, which point into the request's own copy of the payload, not
// into the scratch), so both listeners reuse a request's messages for
// the next call.
type PlaceIn struct {
	// Req is the request, Target the codec's target for it and Scratch
	// its messages' memory (set Target.M and Target.Scratch to them).
	Req     pb.PlaceRequest
	Target  DecodeTarget
	Scratch Scratch
}

// Reset empties in for the next request and reports whether it is worth
// keeping: false when a huge request grew its scratch past
// maxPooledNodes (in is then left as it is, for the collector).
func (in *PlaceIn) Reset() bool {
	if cap(in.Scratch.nodes) > maxPooledNodes {
		return false
	}
	in.Scratch.reset()
	in.Req, in.Target = pb.PlaceRequest{}, DecodeTarget{}
	return true
}

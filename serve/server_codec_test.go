package serve_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// rawCodec sends a []byte as the message's encoding, as is, and decodes
// answers with the protobuf codec: a client that sends bad bytes.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.([]byte); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return encoding.GetCodecV2("proto").Marshal(v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return encoding.GetCodecV2("proto").Unmarshal(data, v)
}

// TestMalformedProtobufIsInvalidArgument is issue 18's codec defect: a
// request whose bytes are not a valid protobuf message was answered
// Internal (the codec's error, as gRPC reports it), as if the server had
// failed. It is InvalidArgument, for every unary method and on the
// telemetry stream, and well-formed requests are unaffected.
func TestMalformedProtobufIsInvalidArgument(t *testing.T) {
	leakcheck.Check(t)
	st, err := state.New(state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := startBufconn(t, serve.ServerConfig{}, serve.WithState(st, nil))
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	good, err := proto.Marshal(makeRequest(8, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		method string
		body   []byte
		want   codes.Code
	}{
		{"truncated field", pb.Scheduler_Place_FullMethodName, []byte{0x0a, 0x7f, 0x01}, codes.InvalidArgument},
		{"invalid UTF-8 job id", pb.Scheduler_Place_FullMethodName, []byte{0x0a, 0x03, 0x0a, 0x01, 0xff}, codes.InvalidArgument},
		{"bad tag", pb.Scheduler_Place_FullMethodName, []byte{0x00}, codes.InvalidArgument},
		{"varint overflow", pb.Scheduler_Report_FullMethodName, []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, codes.InvalidArgument},
		{"status", pb.Scheduler_Status_FullMethodName, []byte{0x0a}, codes.InvalidArgument},
		{"health", healthpb.Health_Check_FullMethodName, []byte{0x0a, 0x05, 'x'}, codes.InvalidArgument},
		{"well-formed", pb.Scheduler_Place_FullMethodName, good, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out pb.PlaceResponse
			var reply proto.Message = &out
			if tt.method == healthpb.Health_Check_FullMethodName {
				reply = &healthpb.HealthCheckResponse{}
			} else if tt.method != pb.Scheduler_Place_FullMethodName {
				reply = &pb.StatusResponse{}
				if tt.method == pb.Scheduler_Report_FullMethodName {
					reply = &pb.ReportResponse{}
				}
			}
			err := h.conn.Invoke(ctx, tt.method, tt.body, reply, grpc.ForceCodecV2(rawCodec{}))
			if s := status.Convert(err); s.Code() != tt.want {
				t.Errorf("%v, want %v", err, tt.want)
			} else if tt.want == codes.InvalidArgument && s.Message() == "" {
				t.Errorf("InvalidArgument without a message")
			}
		})
	}

	// The telemetry stream: a bad message ends it with InvalidArgument.
	stream, err := h.conn.NewStream(ctx, &pb.Telemetry_ServiceDesc.Streams[0], pb.Telemetry_Stream_FullMethodName, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg([]byte{0x0a, 0x7f}); err != nil {
		t.Fatal(err)
	}
	if err := stream.RecvMsg(&pb.AgentAck{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("telemetry stream: %v, want InvalidArgument", err)
	}
}

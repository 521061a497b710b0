package soak

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/drover-sched/drover/serve/proto"
)

// agentChurn starts a fake agent every 1/rate seconds: each one opens
// its own connection to the gRPC port, opens a telemetry stream (the
// protocol of serve/agent: a hello at seq 0, then numbered messages),
// sends three samples and one iteration report spread over life, waits
// for their acknowledgement, and leaves: even sessions politely (half
// close, then wait for the server to end the stream), odd ones abruptly
// (the connection closed mid-stream, as when an agent is killed). Each
// session is a new agent (a new agent_id) of one of nodes node names,
// taken in turn, as when agents restart.
type agentChurn struct {
	addr  string
	rate  float64
	life  time.Duration
	nodes int
	run   string // distinguishes the agent ids of one soak's phases
	next  atomic.Int64

	sessions, failures atomic.Uint64
	asked              atomic.Int64
}

// churn starts sessions until ctx ends, then waits for those running.
func (a *agentChurn) churn(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(time.Duration(float64(time.Second) / a.rate))
	defer t.Stop()
	for {
		i := int(a.next.Add(1) - 1)
		a.asked.Add(1)
		wg.Go(func() {
			if err := a.session(i); err != nil {
				a.failures.Add(1)
			} else {
				a.sessions.Add(1)
			}
		})
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// session is one agent's life; its error says why it did not end with
// every message acknowledged.
func (a *agentChurn) session(i int) error {
	conn, err := grpc.NewClient(a.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), a.life+10*time.Second)
	defer cancel()
	st, err := pb.NewTelemetryClient(conn).Stream(ctx)
	if err != nil {
		return err
	}
	var acked atomic.Uint64
	recvDone := make(chan error, 1)
	go func() {
		for {
			ack, err := st.Recv()
			if err != nil {
				recvDone <- err
				return
			}
			acked.Store(max(acked.Load(), ack.GetAckedSeq()))
		}
	}()
	node := i % a.nodes
	msgs := agentMessages(nodeID(node), fmt.Sprintf("soak-%s-%d", a.run, i), node/8, a.life)
	for k, m := range msgs {
		if k > 0 {
			time.Sleep(a.life / time.Duration(len(msgs)))
		}
		m.Seq = uint64(k)
		if b := m.GetSample(); b != nil {
			b.UnixNanos = time.Now().UnixNano()
		}
		if err := st.Send(m); err != nil {
			return fmt.Errorf("send %d: %w", k, err)
		}
	}
	last := uint64(len(msgs) - 1)
	for deadline := time.Now().Add(5 * time.Second); acked.Load() < last; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("acknowledged %d of %d", acked.Load(), last)
		}
	}
	if i%2 == 0 {
		st.CloseSend()
		select {
		case <-recvDone:
		case <-time.After(5 * time.Second):
			return fmt.Errorf("the server did not end a half-closed stream in 5 s")
		}
	}
	return nil // the deferred Close ends an odd session abruptly
}

// agentMessages returns one session's messages (sequence numbers and
// sample times set when sent): hello, three samples, one iteration
// report of the node's own job.
func agentMessages(node, agentID string, rack int, life time.Duration) []*pb.AgentMessage {
	msgs := []*pb.AgentMessage{{Body: &pb.AgentMessage_Hello{Hello: &pb.AgentHello{NodeId: node, AgentId: agentID,
		Gpus: 4, Cpus: 64, MemoryGib: 256, NicGbps: 100, Rack: int32(rack), GpuTelemetry: true,
		IntervalS: life.Seconds() / 4, Version: "soak"}}}}
	for k := range 3 {
		s := &pb.NodeSample{CpuUtil: 0.3 + 0.1*float64(k), MemUsed: 0.4, NetRxBps: 1e8, NetTxBps: 1e8}
		for g := range 4 {
			s.Gpus = append(s.Gpus, &pb.GPUReading{Index: int32(g), Util: 0.9, MemUsed: 0.5})
		}
		msgs = append(msgs, &pb.AgentMessage{Body: &pb.AgentMessage_Sample{Sample: s}})
	}
	it := &pb.JobIterations{JobId: "soak-agent-job-" + node, Worker: 0, Seconds: []float64{0.10, 0.11, 0.10, 0.12}}
	return append(msgs, &pb.AgentMessage{Body: &pb.AgentMessage_Iterations{Iterations: it}})
}

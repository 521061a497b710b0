package importrules

// Rules are Drover's layers as forbidden dependencies (see the package
// doc). The import-rule test checks them over the whole module. A rule
// for a layering still being built goes in with Pending set (see Rule).
var Rules = []Rule{
	{
		Packages: []string{"./datasets/..."},
		Forbid:   []string{"./env/...", "./policies/...", "./agents/...", "./train/...", "./checkpoints/...", "./serve/...", "./cmd/..."},
		Reason:   "datasets is the first layer: workloads flow from it into env and the rest, so it imports none of them",
	},
	{
		Packages: []string{"./env/..."},
		Forbid:   []string{"./policies/...", "./agents/...", "./train/...", "./checkpoints/...", "./serve/...", "./cmd/..."},
		// env may import datasets: DESIGN.md draws datasets before env,
		// its workloads flowing into the simulator (env/trace replays
		// them; env/jitter is fitted to the PAI mini-batch data).
		Reason: "env is the simulator and its drivers: it defines what it calls (env.Scheduler, env.Proposer) and imports no policy, learner, trainer or server",
	},
	{
		Packages: []string{"./env/infer/..."},
		Forbid:   []string{"./datasets/...", "github.com/parquet-go/...", "google.golang.org/protobuf/..."},
		Reason:   "the inference simulator runs requests (internal/llmreq's type, which datasets/llm reads) and links none of the trace readers, Parquet or protobuf: a replay's whole command starts in 2 ms, not 5 (issue 34, Speed)",
	},
	{
		Packages: []string{"./policies/..."},
		Forbid:   []string{"./agents/ppo/...", "./agents/dqn/...", "./train/...", "./cmd/..."},
		Reason:   "policies decide on env's views; a learned policy runs a network (agents/nn, checkpoints) but links no learner and no trainer",
	},
	{
		Packages: []string{"./agents/..."},
		Forbid:   []string{"./policies/...", "./train/...", "./checkpoints/...", "./serve/...", "./cmd/..."},
		Reason:   "agents learn from gym environments (env/gym); train wires them to policies, checkpoints store their networks",
	},
	{
		Packages: []string{"./checkpoints/..."},
		Forbid:   []string{"./train/...", "./serve/...", "./cmd/..."},
		Reason:   "checkpoints store networks (agents) for train to write and serve to read",
	},
	{
		Packages: []string{"./..."},
		Except:   []string{"./cmd/..."},
		Forbid:   []string{"./cmd/..."},
		Reason:   "cmd only parses flags, wires and prints; what it calls is a library",
	},
	{
		Packages: []string{"./serve/..."},
		// serve/logreplay re-scores a served log offline (drover eval
		// --log) and draws its comparison's plots (policies/compare); the
		// server (serve/daemon) does not link it. The next rule holds it.
		Except: []string{"./serve/logreplay"},
		Forbid: []string{"./agents/ppo/...", "./agents/dqn/...", "./train/...", "./env/cartpole/...", "gonum.org/v1/plot/..."},
		Reason: "the server answers with policies and a gate that judges; it links no learner, trainer, CartPole or plotting",
	},
	{
		Packages: []string{"./serve/logreplay"},
		Forbid:   []string{"./agents/ppo/...", "./agents/dqn/...", "./train/...", "./env/cartpole/..."},
		Reason:   "offline evaluation of a served log replays policies and plots the comparison; it links no learner or trainer",
	},
	{
		Packages: []string{"./serve/fast"},
		Forbid:   []string{"./serve", "./serve/daemon", "./datasets/...", "./env/...", "./policies/...", "./agents/...", "./train/...", "./checkpoints/..."},
		Reason:   "the fast listener is a transport over its Backend interface: it knows the wire types (serve/proto), not the Core or any policy, so that serve imports it",
	},
	{
		Packages: []string{"./policies/gate"},
		Forbid:   []string{"./...", "gonum.org/...", "google.golang.org/..."},
		Reason:   "the gate judges and does not train: train and serve both call it, so it imports only the standard library",
	},
	{
		Packages: []string{"./internal/..."},
		Forbid:   []string{"./datasets/...", "./env/...", "./policies/...", "./agents/...", "./train/...", "./checkpoints/...", "./serve/...", "./cmd/..."},
		Reason:   "internal holds what every layer shares (the logs' Parquet encoding, plots, progress, test helpers), so it imports no layer; a client of the server lives under serve (serve/agent), not here",
	},
	{
		Packages: []string{"./policies/...", "./train/..."},
		Forbid:   []string{"./serve/..."},
		Reason:   "serve depends on policies and the gate; the log and wire types policies and train need live in a leaf package, so no folder-level cycle",
	},
	{
		Packages: []string{"./..."},
		Except:   []string{"./internal/pqlog/pqlogtest"},
		Forbid:   []string{"github.com/apache/arrow-go/v18/..."},
		Reason:   "Parquet is read with parquet-go and written by internal/pqlog; arrow-go (its compute kernels were a third of a cold build of drover and its largest init cost) is the tests' independent reader only",
	},
}

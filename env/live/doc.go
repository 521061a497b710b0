// Package live is the gym-style scheduling environment of the direct
// learned policies (strn-rl, sas-rl) over a live cluster: the observation,
// the action space and the masks of env/sched.Env for the same
// sched.Config, computed by the same sched.Encoder, on snapshots of the
// cluster's state instead of a simulation. A policy trained in simulation
// (a checkpoint's greedy actor, policies/direct.Greedy) runs on it
// unchanged, and its decisions go to the cluster.
//
// The cluster comes in through two small interfaces that an adapter over
// the server's live state implements: a Source writes a State (the
// cluster, free GPUs and telemetry per node, the pending and running jobs,
// the time on the source's clock), and an Actuator carries out a Decision
// (a job, the node of each worker, a sync strategy). A Source that can
// start over (a recording, a simulated cluster) also implements Rewinder.
// The environment reads no clock and no random source: its time is the
// snapshots' Now, so a recorded run replays exactly.
//
// # Correspondence with the simulated environment
//
// One Step decides one pending job, taken in order of submission with
// backfilling (a job that does not fit the GPUs left is skipped), exactly
// as sched.Env takes them; a new snapshot is taken when the current one
// has no job left that fits, as sched.Env moves to the simulator's next
// decision point. The encoder reads telemetry at every snapshot, as
// sched.Env's does at every decision point, through the snapshot's
// per-node Load (the encoder keeps the history behind GroupLoad's moving
// P90 itself), and books each decision in its copies of the free GPUs
// and loads. Within a snapshot, a decided job shows as running on its
// GPUs in the view, as the simulator's view shows it after Sim.Apply, so
// the next job's observation counts it as sched.Env's does. Hold and
// invalid actions are handled as sched.Env handles them: hold leaves the
// job pending until the next snapshot, and an action the mask rules out
// panics (a programmer error; policies/direct.Policy falls back to the
// first valid action instead). Fed the views of a simulation (see the
// tests), the observations, masks and rewards are sched.Env's bit for
// bit.
//
// policies/direct.Policy, the deployed form of the same checkpoints, sees
// a decision point as sched.Env (and so this package) does: it reads
// telemetry at every decision point, and the Encoder's Commit counts a job
// decided earlier at the same decision point as running in the later
// jobs' observations and hold masks, though the Policy returns its
// decisions together at the end (policies/direct's
// TestPolicySeesWhatEnvSees).
//
// The reward is sched.Env's: minus the time elapsed between two
// snapshots, in hours, times the jobs running over it (plus
// Config.WaitWeight times the pending ones), counted from the earlier
// snapshot with this snapshot's decisions applied. It is a job count
// times time, not GPUs times time, as in sched.Env. In the simulator a
// decision point comes at every arrival and finish, so the count is exact
// and an episode's return is minus the jobs' total held time. Live
// snapshots are sparser: a job that finished between two snapshots counts
// until the later one (and, with WaitWeight, one that arrived between
// them counts only from it), so the live reward is off by up to one
// snapshot interval per finish (and arrival); it matches the simulated
// reward only when the source snapshots at every arrival and finish. The time is the source's,
// so a slow or lagging source changes it; a job counts as running from
// the decision on, even if the cluster starts it later. Rewards are
// comparable between live episodes of one source, and with the simulated
// reward per hour of the same workload, not as episode totals: a live
// episode ends when the queue empties, not when every job has finished.
//
// # Choices where the design is silent
//
//   - Episodes: an episode terminates at a snapshot with no pending job
//     (the queue is drained: nothing left to decide), and is truncated at
//     Config.Horizon seconds of source time, after Config.MaxIdle
//     consecutive snapshots with nothing that fits (the simulated env
//     would move on to the next event; a live source that answers at once
//     would spin), or on an error. Reset takes a new snapshot; with a
//     live source the next episode continues the timeline and the
//     encoder's history, with a Rewinder it starts over as sched.Env's
//     Reset does.
//   - Errors: gym's Step cannot return one, so an error of the Source, of
//     State.Validate or of the Actuator ends the episode truncated and
//     Err reports it, as bufio.Scanner's Err does (Reset clears it). A
//     refused decision is not booked.
//   - Ids: a job's id is its JobSpec.Name; Decision.Job carries it back.
//     Running jobs are listed with their nodes and start time; the
//     encoder reads only their number and whether any runs.
//   - A change of the cluster between snapshots (a node added or
//     removed) rebuilds the encoder on the new cluster; its per-node
//     history restarts.
//
// # Usage
//
// A driver owns the goroutines and the waiting between episodes:
//
//	e, err := live.New(live.Config{Encoder: cfg}, source, actuator)
//	if err != nil { ... }
//	for {
//		obs, _ := e.Reset(0)
//		for e.Job() != nil {
//			mask = e.ActionMask(mask)
//			var term, trunc bool
//			obs, _, term, trunc, _ = e.Step(actor(obs, mask))
//			if term || trunc {
//				break
//			}
//		}
//		if err := e.Err(); err != nil { ... }
//		// wait for the next arrival or finish
//	}
package live

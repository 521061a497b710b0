// Package iterclient is the iteration-time client for training jobs: a
// training process reports how long each iteration took to the drover
// agent on its node (serve/agent, `drover agent`), which streams the
// times to the drover server, where they are the straggler evidence the
// scheduler acts on.
//
// The agent listens on 127.0.0.1:9465 for
//
//	POST /v1/iterations  {"job_id": "job-7", "worker": 3, "seconds": [0.31, 0.30], "dropped": 0}
//
// A Client buffers the times and posts them from a goroutine, every
// second or every 64 times; Observe never blocks the training loop. When
// the buffer (4096 times) is full, or a post fails because the agent is
// away, the times are dropped and counted, and the count goes out as
// "dropped" in the next report, so the server knows what it did not see.
//
// # Usage (Go)
//
// The job id and worker index come from DROVER_JOB_ID and DROVER_WORKER
// (or torchrun's RANK) when the Config leaves them zero; the agent's
// address from DROVER_AGENT_ADDR, else 127.0.0.1:9465:
//
//	c, err := iterclient.New(iterclient.Config{JobID: "job-7", Worker: rank})
//	if err != nil {
//		return err
//	}
//	defer c.Close() // posts what is left
//	for step := 0; step < steps; step++ {
//		start := time.Now()
//		trainStep()
//		c.Observe(time.Since(start))
//	}
//
// # Usage (Python)
//
// drover_iter.py, beside this file, is the same client for Python training
// loops (PyTorch or any other), in the standard library only: copy it
// next to the training script, or put this directory on PYTHONPATH.
//
//	from drover_iter import DroverIter
//	hook = DroverIter()              # or DroverIter(job_id="job-7", worker=rank)
//	for batch in loader:
//	    loss = model(batch).sum(); loss.backward(); opt.step(); opt.zero_grad()
//	    hook.step()                  # once per iteration: the time since the last call
//
// hook.step() records the time since its previous call, without touching
// the network and without raising; a daemon thread posts every second or
// every 64 iterations, and hook.flush() posts at once (it also runs at
// exit). When the agent is away the times are counted as dropped.
package iterclient

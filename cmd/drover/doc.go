// Command drover learns and serves straggler-aware scheduling policies for
// distributed deep-learning training. Run "drover help" for the commands.
//
// # Usage
//
//	drover                      # simulate the embedded default workload
//	drover sim -h               # the simulator's flags (drover help sim: the same)
//	drover sim workload.csv     # a positional workload file is --workload
//	drover version              # module version, VCS revision, Go version
//	drover sim --workload ../shared/traces/philly/pollux_workloads/workload-6.csv --policy tiresias
//	drover trace inspect FILE   # job count, time span, GPU histogram, durations (or an LLM request trace's)
//	drover infer sim            # LLM serving: the built-in requests on Splitwise-HA (--trace, --cluster, --router)
//	drover infer eval --trace ../shared/traces/llm/azure_llm_2023/AzureLLMInferenceTrace_code.csv --duration 600
//	drover trace convert -o OUT.parquet FILE
//	drover trace synth > workload.csv
//	drover profile fit -o env/profile/builtin.json ../shared/traces/pollux_apps
//	drover calibrate            # per-worker jitter vs the PAI mini-batch times
//	drover calibrate --convergence -o DIR   # convergence fits vs their data, a PNG per family
//	drover forecast eval        # SAS's learned load forecaster vs the window, held out
//	drover forecast fit -o policies/sas/forecast/model.json
//	drover train                # PPO placement policy; --env sync|sas-rl|strn-rl|cartpole
//	drover train --env strn-rl --algo ppo --out runs/strn-rl   # the direct learned STRN
//	drover train --env strn-rl --from-log DIR --init checkpoints/strn-rl
//	drover eval --seeds 1-5     # heuristics over seeds: table, JSON, PNG plots
//	drover eval --convergence sweep   # and at both ends of the convergence model's band: does the top three hold?
//	drover eval --policies sas,checkpoints/sas-rl   # a learned policy, with its teacher (sas+strn-sync) beside it
//	drover serve                # gRPC policy server on 127.0.0.1:50051 (stateful: -state-dir DIR keeps it)
//	drover agent -server HOST:50051 -node NAME   # one per node: telemetry and jobs' iteration times
//	drover place -nodes 16 -workers 4   # ask a server where a job goes
//	drover sim --remote 127.0.0.1:50051 --record DIR    # a recorded run (drover serve -log-dir DIR)
//	drover eval --log DIR --policies first-fit,strn,sas,checkpoints/sas-rl   # re-score it
//
// Every numeric flag is checked as it is parsed, before the command reads
// or runs anything, against one rule per flag name (numflags.go: the same
// --restart-delay in sim and eval); NaN and ±Inf are refused everywhere,
// and the error names the flag, its value and what it wants.
package main

// Package datasets reads GPU-cluster job traces into Drover's common job
// table, and generates synthetic workloads fitted to them.
//
// Every importer produces a Workload: a list of Jobs sorted by submit time
// (stable with respect to file order), with times in seconds. Traces with
// absolute times are rebased so that the earliest submit is 0. The
// supported formats are:
//
//   - FormatPollux: the Pollux simulator's workload-N.csv (name, time,
//     application, num_replicas, batch_size). Times are kept; there is no
//     duration, so Duration is 0.
//   - FormatPhilly: Pollux's philly.csv (timestamp, duration, num_gpus,
//     gpu_time, cluster), unsorted in the file. Jobs are named
//     "philly-<row>" (1-based data row); naive timestamps are read as UTC
//     and Workload.Origin keeps the absolute time of submit 0.
//   - FormatHelios: the fleetsim slice of SenseTime Helios (comment lines
//     start with '#'; submit_time is in microseconds), rebased.
//   - FormatAlibaba: Alibaba PAI v2023 openb_pod_list_*.csv. Pending pods
//     (no scheduled_time) and CPU-only pods (num_gpu 0) are always skipped
//     and counted in Workload.SkipReasons; a GPU-sharing pod (gpu_milli <
//     1000) counts as one GPU. Duration is deletion_time - scheduled_time and
//     Submit is creation_time, rebased. DecodePAINodes reads the node lists.
//   - FormatJobs and FormatParquet: Drover's own job table, specified in
//     docs/format/jobs.md. Encode and WriteParquet write them.
//
// # Validation
//
// A malformed row, a negative or non-finite submit time or duration, a
// submit time (after rebasing) or duration beyond MaxSeconds (1e8 s, about
// 3.2 years: ErrTooLarge), a GPU count below 1, an unknown model name or a
// repeated job name is reported as a *ParseError naming the file, the
// 1-based line and the field. With
// Options.SkipBad such rows are skipped instead and counted by reason (the
// Reason* constants). A workload with no jobs left is an error (ErrEmpty).
// Options.MinDuration and Options.MaxGPUTime filter jobs;
// Options.WithPolluxFilter sets them to Pollux's filter (duration >= 60 s,
// GPU-time < 1000 GPU-hours).
//
// # Models
//
// Traces without model names (Philly, Helios, Alibaba) get one by the rule
// of Pollux's workload generator (petuum/adaptdl, osdi21-artifact,
// simulator/workload.py): GPU-time (Duration*GPUs) under 1 hour gives
// cifar10 or ncf, under 10 hours deepspeech2 or bert, under 100 hours
// yolov3, and otherwise imagenet. Pollux picks within a pair at random;
// here the 64-bit FNV-1a hash of the job name decides (even: the first
// model), so decoding is deterministic. See AssignModel.
//
// # Parameter-server jobs
//
// Job.Arch says whether a job all-reduces in a ring (the zero value) or
// exchanges through parameter servers (ArchPS, with Job.PSShards servers).
// Only Drover's job table (version 2) records it; for every other row a
// PSRule decides (Options.PS): a job with two or more GPUs is a PS job
// with the rule's share, drawn from a hash of the rule's seed and the
// job's name (deterministic, and monotone in the share); a single-GPU job
// never is, since in the simulator one worker's servers cost what its
// ring costs (nothing). A PS job gets as many servers as workers, the
// provisioning at which its servers carry what its workers do (see
// PSRule). `--ps-share` on drover sim, eval and trace sets the share.
//
// The default share depends on the format (FormatPSShare):
//
//   - FormatAlibaba: DefaultPSShare, 0.5. PAI is the one production GPU
//     cluster whose public record treats PS/Worker training as a
//     first-class job type: its v2020 trace splits a job into tasks of
//     roles "such as parameter servers (PS) and workers"
//     (alibaba/clusterdata, cluster-trace-gpu-v2020/README.md), and Wang
//     et al. (IISWC'19, "Characterizing Deep Learning Training Workloads
//     on Alibaba-PAI") classify PAI's training jobs as single-worker,
//     PS/Worker and AllReduce, PS/Worker being the incumbent that "60% of
//     PS/Worker workloads can be potentially sped up when ported to the
//     AllReduce architecture". We found no statement of the share of
//     PAI's distributed jobs that are PS/Worker that we could check, in
//     those papers, in Weng et al. (NSDI'22, "MLaaS in the Wild", the
//     v2020 trace's characterization) or in the trace's repository (the
//     v2020 pai_task_table would give it, but its data is hosted off
//     GitHub and was not reachable from here), so 0.5 is the
//     uninformative midpoint between the two architectures both name, not
//     a measured share: an explicit parameter (--ps-share) to sweep, to be
//     replaced when a figure is at hand.
//   - FormatPhilly and FormatHelios: 0. Both are dedicated-GPU clusters of
//     another era and software stack (Microsoft Philly 2017, SenseTime
//     Helios 2020, Jeon et al. ATC'19 and Hu et al. SC'21); their traces
//     log GPU jobs only, with no CPU-only server tasks (which PAI's trace
//     records as tasks of their own), and their characterizations report
//     no PS share. Pass --ps-share to study one.
//   - FormatPollux: 0. Pollux's workloads run on AdaptDL, which trains with
//     PyTorch's all-reduce.
//   - FormatJobs and FormatParquet: rows keep their arch; rows without one
//     get 0, what a version-1 table (no arch column) always meant.
//
// The embedded default workload, a generic shared cluster rather than a
// replay of Philly, is drawn at DefaultPSShare (10 of its 29 multi-GPU
// jobs), so that what the simulator models of PS jobs, SAS's
// parameter-server load reassignment among it, is exercised by default;
// an explicit share draws its architectures anew (Load).
//
// # Synthetic workloads
//
// FitPhilly estimates SynthParams from a trace: 24 hour-of-day Poisson
// arrival rates, the empirical GPU-count mix, and per GPU-count class a
// lognormal mixture of run times fitted by EM. Synthetic draws a workload
// from them with an injected rand.Source, so a seed fixes the result.
// DefaultSynthParams is the fit to the Pollux-filtered Philly trace; its
// Kolmogorov-Smirnov distance to the trace's run times is about 0.026 (see
// TestSyntheticFit). The embedded default workload (Builtin, Load
// "builtin") is GenerateDefault(DefaultSeed): 400 jobs arriving over about
// 3.5 hours at 4x Philly's rate from 02:00, at most 64 GPUs and 4 hours
// each, enough to keep a 16-node x 4-GPU cluster busy for several hours,
// with DefaultPSShare of its multi-GPU jobs on parameter servers.
//
// # Usage
//
// Read a trace, or the default workload, and summarise it:
//
//	w, err := datasets.Load("../shared/traces/philly/pollux_philly.csv.gz", datasets.FormatAuto, datasets.Options{SkipBad: true})
//	if err != nil {
//		return err
//	}
//	datasets.Inspect(w).WriteText(os.Stdout)
//
// Convert it to Parquet:
//
//	err = datasets.WriteParquet(f, w)
//
// Generate a fresh workload like the default one:
//
//	w := datasets.GenerateDefault(42)
//	os.WriteFile("w.csv", datasets.Encode(w, nil), 0o644)
//
// # Statistics
//
// The fit's helpers stay ours (issue 31): meanStd is the population
// standard deviation summed in one order, where gonum's
// stat.PopMeanStdDev compensates its sum, other last bits that would move
// the embedded synthetic parameters and with them the built-in workload;
// gonum has no Gaussian-mixture EM (fitGMM); KSTwoSample and Inspect's
// nearest-rank quantile (what stat.Quantile gives with stat.Empirical) are
// a few lines each, and datasets links no gonum.
package datasets

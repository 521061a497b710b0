// Package converge is Drover's convergence model fitted to measured
// training curves: how many iterations a job needs to reach a target
// accuracy, and what accuracy it ends with, as functions of its
// synchronization strategy (BSP, ASP, SSP(s), local SGD(H)), its worker
// count and its global batch size, and what Sync-Switch's hybrid (BSP for
// a share of the schedule, then ASP) does. It replaced the two assumed
// constants env/sync.go used to hold (1% more iterations per unit of
// staleness, 2% per step of local-SGD period; issue 33): the simulator's
// env.Convergence answers every strategy from it, and maps Drover's
// models to the families measured here (env.DefaultFamilies).
//
// The model is fitted, deterministically, from a small table of published
// measurements embedded in the package (measurements.csv, about 500 rows,
// each naming the repository, commit, file and row it was read from, or
// the paper and table). Every
// parameter has a 95% confidence interval, and every prediction can be
// made at either end of it (Band), so that a ranking can be checked across
// the band.
//
// # The model
//
// Batch size (per family with a BatchFit). The examples needed to reach
// the target grow with the global batch M as 1 + M/B_noise (McCandlish et
// al. 2018, "An empirical model of large-batch training"; the statistical
// efficiency Pollux computes from the gradient noise scale is the same
// law): epochs to target = SMin (1 + M/Noise), and the efficiency of M
// against the reference batch M0 is (Noise + M0) / (Noise + M). SMin and
// Noise are fitted by least squares of the measured epochs to target on
// M (gonum/mat), with t intervals (gonum/stat/distuv) and, for Noise =
// intercept/slope, the delta method on the log scale. A batch size whose
// run ended below the target is left out of the fit and checked against it
// (the model must also need more epochs than the run had).
//
// Staleness (per family with a StalenessFit). Under an average staleness
// of sbar iterations (AvgStaleness: w-1 for ASP on w workers, min(s, w-1)
// for SSP(s), as env/sync.go counts it) the final accuracy is
// BSPFinal - Drop*sbar, the examples to the target are 1 + Slowdown*sbar
// times BSP's, and from sbar >= Diverge training fails. A run whose final
// accuracy is below the target never reaches it: its iteration factor is
// +Inf and Outcome.Reached is false; a diverged run has a NaN final
// accuracy. BSPFinal, Drop and Slowdown are means over repeated runs with
// percentile-bootstrap intervals (resampling runs, BootstrapResamples
// resamples from the fixed BootstrapSeed); Diverge is bracketed by the
// largest worker count ASP trained at and the smallest it failed at.
// Budget is how long a run that never reaches the target goes on: the
// measured schedule's worker-batches over BSP's worker-batches to the
// target (Sync-Switch gave its ASP runs as many worker-batches as BSP's
// and they ran them all), bootstrapped over the BSP runs.
//
// Local SGD (per family with a LocalSGDFit). Workers take H local steps
// between averaging their models; the sources measure the final accuracy
// after one fixed examples budget, so under local SGD(H) the final
// accuracy is SyncFinal - Drop*(H-1), SyncFinal being the accuracy when
// the models are averaged after every step (the sources' synchronous
// reference, H = 1, which Predict takes for BSP's). Where each
// configuration was run repeatedly, Drop is the least-squares slope
// through the origin of every configuration's gap to H = 1 at its worker
// count against H-1, with percentile-bootstrap intervals resampling runs
// within configurations; where each was run once, the line is fitted by
// least squares with t intervals. The linear form in H-1 fits the one
// clean series (Paddle's) better than a line in log2 H (squared residuals
// 9.5e-6 against 2.6e-5). No source records a curve, so the examples to a
// target are not measured: Predict lets local SGD(H) reach a target at or
// below its final accuracy in BSP's examples (factor 1) and never one
// above it. Predict uses SyncFinal at the smallest measured worker count
// for every worker count.
//
// BSP then ASP (per family with a SwitchFit; Model.PredictSwitch).
// Sync-Switch's hybrid trains under BSP for a share p of the schedule's
// worker-batches, then under ASP. Per measured share, Loss (BSP's mean
// final accuracy minus the switched runs') and Extra (their mean
// worker-batches to the target over BSP's, minus 1) are run means with
// percentile-bootstrap intervals, as above. Share 0 is ASP from the start
// (Drop and Slowdown times the measured staleness) and share 1 BSP; Loss
// is interpolated linearly between the measured shares, so every p in
// [0, 1] is answered and none outside it. Extra is interpolated linearly
// from ASP's through the measured shares below Reach (the share of the
// schedule BSP spends to reach the target: 0.12 for ResNet32, 0.51 for
// ResNet50) to 0 at Reach; from Reach on the target is reached under BSP,
// before the switch, and the examples factor is 1. The factor is never
// below p/Reach (the examples spent under BSP before a switch that came
// before the target). On w workers both scale with the ASP phase's
// staleness, by (w-1)/(Workers-1), so that share 0 gives Predict's ASP
// outcome at every w. Where ASP from the start diverges, a switched run
// trains from the smallest share measured to train there (SwitchFit.Trained:
// 0.5 for ResNet32 on 16 workers) and fails below it.
//
// Model.Predict multiplies the batch-size factor (examples ratio times
// M0/M) by the staleness or local SGD factor. No source measures two
// parts for one model, so the product is an assumption. Model.Checks
// lists every comparison of the fit with its data, pass or fail; drover
// calibrate --convergence prints them with a figure per family. A check
// whose failure is a known disagreement between sources (below: the vgg16
// gradient statistics, SlowMo's ImageNet local SGD) carries the reason in
// Check.Known, and the command fails only on the others.
//
// # Fitted parameters
//
// Generated from the fit; TestDocTable fails when it differs (rewrite it
// with go test ./env/converge -run TestDocTable -rewrite):
//
//	parameter                               fit         95% interval             unit                  source
//	bert-large-mnli.SyncFinal               0.7975      [0.7668, 0.8128]         accuracy              blogcode bert-large-mnli, 4 and 8 workers, H 1-64, 2-3 runs each
//	bert-large-mnli.Drop                    0.0002933   [-0.0001069, 0.0006731]  accuracy/step         blogcode bert-large-mnli, 4 and 8 workers, H 1-64, 2-3 runs each
//	bert-large-squad.SyncFinal              0.8047      [0.8016, 0.8066]         accuracy              blogcode bert-large-squad, 4 and 8 workers, H 1-64, 3 runs each
//	bert-large-squad.Drop                   -2.785e-05  [-7.005e-05, 1.3e-05]    accuracy/step         blogcode bert-large-squad, 4 and 8 workers, H 1-64, 3 runs each
//	resnet20.SMin                           0.9532      [0, 2.199]               epochs                tsm resnet20 curves, batch 64-1024
//	resnet20.Noise                          85.94       [16.81, 439.4]           examples              tsm resnet20 curves, batch 64-1024
//	resnet32-cifar10.BSPFinal               0.92        [0.9157, 0.9237]         accuracy              syncswitch resnet32-cifar10, 6 BSP and 4 ASP runs at 8 workers
//	resnet32-cifar10.Drop                   0.004031    [0.002626, 0.005206]     accuracy/staleness    syncswitch resnet32-cifar10, 6 BSP and 4 ASP runs at 8 workers
//	resnet32-cifar10.Slowdown               0.4361      [0.3872, 0.4761]         1/staleness           syncswitch resnet32-cifar10, 4 BSP and 4 ASP curves crossing 0.85 at 8 workers
//	resnet32-cifar10.Diverge                15          [8, 15]                  staleness             syncswitch resnet32-cifar10, ASP at 8 and 16 workers
//	resnet32-cifar10.Budget                 8.302       [7.804, 8.632]           x examples to target  syncswitch resnet32-cifar10, 6 BSP schedules and 4 BSP curves crossing 0.85 at 8 workers
//	resnet32-cifar10.Switch(0.02).Loss      0.01632     [0.008317, 0.02327]      accuracy              syncswitch resnet32-cifar10, 4 BSP-then-ASP runs at 0.02 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.02).Extra     2.71        [2.354, 3.043]           x BSP examples        syncswitch resnet32-cifar10, 4 BSP-then-ASP curves at 0.02 and 4 BSP curves crossing 0.85, at 8 workers
//	resnet32-cifar10.Switch(0.04).Loss      0.007317    [0.0013, 0.0132]         accuracy              syncswitch resnet32-cifar10, 8 BSP-then-ASP runs at 0.04 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.04).Extra     2.11        [1.544, 2.726]           x BSP examples        syncswitch resnet32-cifar10, 8 BSP-then-ASP curves at 0.04 and 4 BSP curves crossing 0.85, at 8 workers
//	resnet32-cifar10.Switch(0.05).Loss      0.002654    [-0.003142, 0.008238]    accuracy              syncswitch resnet32-cifar10, 8 BSP-then-ASP runs at 0.05 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.05).Extra     1.751       [1.42, 2.127]            x BSP examples        syncswitch resnet32-cifar10, 8 BSP-then-ASP curves at 0.05 and 4 BSP curves crossing 0.85, at 8 workers
//	resnet32-cifar10.Switch(0.0625).Loss    0.009817    [0.005583, 0.01335]      accuracy              syncswitch resnet32-cifar10, 1 BSP-then-ASP runs at 0.0625 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.0625).Extra   2.053       [1.87, 2.174]            x BSP examples        syncswitch resnet32-cifar10, 1 BSP-then-ASP curves at 0.0625 and 4 BSP curves crossing 0.85, at 8 workers
//	resnet32-cifar10.Switch(0.1).Loss       0.005817    [0.0007133, 0.01052]     accuracy              syncswitch resnet32-cifar10, 5 BSP-then-ASP runs at 0.1 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.1).Extra      0.8005      [0.2252, 1.255]          x BSP examples        syncswitch resnet32-cifar10, 5 BSP-then-ASP curves at 0.1 and 4 BSP curves crossing 0.85, at 8 workers
//	resnet32-cifar10.Switch(0.15).Loss      0.008183    [0.002667, 0.01393]      accuracy              syncswitch resnet32-cifar10, 3 BSP-then-ASP runs at 0.15 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.2).Loss       0.008117    [0.0002333, 0.01473]     accuracy              syncswitch resnet32-cifar10, 3 BSP-then-ASP runs at 0.2 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.25).Loss      0.001328    [-0.003889, 0.006044]    accuracy              syncswitch resnet32-cifar10, 9 BSP-then-ASP runs at 0.25 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.5).Loss       -0.0001833  [-0.006653, 0.00734]     accuracy              syncswitch resnet32-cifar10, 5 BSP-then-ASP runs at 0.5 and 6 BSP runs, at 8 workers
//	resnet32-cifar10.Switch(0.75).Loss      0.01809     [0.002683, 0.03447]      accuracy              syncswitch resnet32-cifar10, 4 BSP-then-ASP runs at 0.75 and 6 BSP runs, at 8 workers
//	resnet50-cifar100.BSPFinal              0.7462      [0.7428, 0.7508]         accuracy              syncswitch resnet50-cifar100, 5 BSP and 5 ASP runs at 8 workers
//	resnet50-cifar100.Drop                  0.005391    [0.002491, 0.009226]     accuracy/staleness    syncswitch resnet50-cifar100, 5 BSP and 5 ASP runs at 8 workers
//	resnet50-cifar100.Slowdown              -0.01158    [-0.02604, -0.0003782]   1/staleness           syncswitch resnet50-cifar100, 5 BSP and 5 ASP curves crossing 0.65 at 8 workers
//	resnet50-cifar100.Diverge               +Inf        [+Inf, +Inf]             staleness             syncswitch resnet50-cifar100, 5 BSP and 5 ASP runs at 8 workers
//	resnet50-cifar100.Budget                1.972       [1.969, 1.975]           x examples to target  syncswitch resnet50-cifar100, 5 BSP schedules and 5 BSP curves crossing 0.65 at 8 workers
//	resnet50-cifar100.Switch(0.0625).Loss   0.01378     [0.0065, 0.02198]        accuracy              syncswitch resnet50-cifar100, 5 BSP-then-ASP runs at 0.0625 and 5 BSP runs, at 8 workers
//	resnet50-cifar100.Switch(0.0625).Extra  -0.1216     [-0.2568, -0.04852]      x BSP examples        syncswitch resnet50-cifar100, 5 BSP-then-ASP curves at 0.0625 and 5 BSP curves crossing 0.65, at 8 workers
//	resnet50-cifar100.Switch(0.125).Loss    0.00024     [-0.00778, 0.0082]       accuracy              syncswitch resnet50-cifar100, 5 BSP-then-ASP runs at 0.125 and 5 BSP runs, at 8 workers
//	resnet50-cifar100.Switch(0.125).Extra   -0.2393     [-0.45, -0.09135]        x BSP examples        syncswitch resnet50-cifar100, 5 BSP-then-ASP curves at 0.125 and 5 BSP curves crossing 0.65, at 8 workers
//	resnet50-cifar100.Switch(0.25).Loss     -0.0043     [-0.00874, 0.00092]      accuracy              syncswitch resnet50-cifar100, 5 BSP-then-ASP runs at 0.25 and 5 BSP runs, at 8 workers
//	resnet50-cifar100.Switch(0.25).Extra    -0.4363     [-0.4554, -0.403]        x BSP examples        syncswitch resnet50-cifar100, 5 BSP-then-ASP curves at 0.25 and 5 BSP curves crossing 0.65, at 8 workers
//	resnet50-cifar100.Switch(0.5).Loss      0.00372     [-0.00062, 0.00908]      accuracy              syncswitch resnet50-cifar100, 5 BSP-then-ASP runs at 0.5 and 5 BSP runs, at 8 workers
//	resnet50-cifar100.Switch(0.5).Extra     0.01574     [0.01352, 0.01819]       x BSP examples        syncswitch resnet50-cifar100, 5 BSP-then-ASP curves at 0.5 and 5 BSP curves crossing 0.65, at 8 workers
//	resnet50-imagenet.SyncFinal             0.7567      [0.7532, 0.7602]         accuracy              paddle resnet50-imagenet, 32 workers, H 1-16, one run each
//	resnet50-imagenet.Drop                  0.0008989   [0.0004354, 0.001362]    accuracy/step         paddle resnet50-imagenet, 32 workers, H 1-16, one run each
//	vgg16.SMin                              2.254       [1.693, 2.815]           epochs                tsm vgg16 curves, batch 64-1024
//	vgg16.Noise                             532.3       [333.6, 849.4]           examples              tsm vgg16 curves, batch 64-1024
//
//	bert-large-mnli.SyncFinal: run means, percentile bootstrap over runs within each configuration (4000 resamples, seed 33), H = 1 at 4 workers.
//	bert-large-mnli.Drop: run means, percentile bootstrap over runs within each configuration (4000 resamples, seed 33), least squares through the origin of each configuration's gap to H = 1 on H-1.
//	bert-large-squad.SyncFinal: run means, percentile bootstrap over runs within each configuration (4000 resamples, seed 33), H = 1 at 4 workers.
//	bert-large-squad.Drop: run means, percentile bootstrap over runs within each configuration (4000 resamples, seed 33), least squares through the origin of each configuration's gap to H = 1 on H-1.
//	resnet20.SMin: OLS of epochs-to-target on batch over 4 batch sizes, t(2) interval, cut at 0.
//	resnet20.Noise: OLS of epochs-to-target on batch over 4 batch sizes, t(2) interval, delta method for intercept/slope on the log scale.
//	resnet32-cifar10.BSPFinal: run means, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Drop: run means, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Slowdown: run means, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.85.
//	resnet32-cifar10.Diverge: bracketed: ASP trained at 8 workers, failed at 16 (cake-lab/Sync-Switch@09af0864c3d8:README.md#Data description (cluster_16: No ASP because training failure)).
//	resnet32-cifar10.Budget: run means, percentile bootstrap over runs (4000 resamples, seed 33), schedule over examples to 0.85.
//	resnet32-cifar10.Switch(0.02).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.02).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.85.
//	resnet32-cifar10.Switch(0.04).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.04).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.85.
//	resnet32-cifar10.Switch(0.05).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.05).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.85.
//	resnet32-cifar10.Switch(0.0625).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.0625).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.85.
//	resnet32-cifar10.Switch(0.1).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.1).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.85.
//	resnet32-cifar10.Switch(0.15).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.2).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.25).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.5).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet32-cifar10.Switch(0.75).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.BSPFinal: run means, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.Drop: run means, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.Slowdown: run means, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.65.
//	resnet50-cifar100.Diverge: no failed run measured.
//	resnet50-cifar100.Budget: run means, percentile bootstrap over runs (4000 resamples, seed 33), schedule over examples to 0.65.
//	resnet50-cifar100.Switch(0.0625).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.Switch(0.0625).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.65.
//	resnet50-cifar100.Switch(0.125).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.Switch(0.125).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.65.
//	resnet50-cifar100.Switch(0.25).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.Switch(0.25).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.65.
//	resnet50-cifar100.Switch(0.5).Loss: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33).
//	resnet50-cifar100.Switch(0.5).Extra: run means against BSP's, percentile bootstrap over runs (4000 resamples, seed 33), examples to 0.65.
//	resnet50-imagenet.SyncFinal: OLS of final accuracy on H-1 over 5 single runs, t(3) interval (intercept).
//	resnet50-imagenet.Drop: OLS of final accuracy on H-1 over 5 single runs, t(3) interval.
//	vgg16.SMin: OLS of epochs-to-target on batch over 5 batch sizes, t(3) interval, cut at 0.
//	vgg16.Noise: OLS of epochs-to-target on batch over 5 batch sizes, t(3) interval, delta method for intercept/slope on the log scale.
//
// # Sources
//
// Read with the search tool's fetch (git mirrors), every number taken from
// the files named in measurements.csv:
//
//   - tsm: pcl-projects/Training-Sync-Mode @ 6c596a7922aa (the STAR
//     group's code), all_reduce/gradient_validation/<model>/<model>_<bsz>.csv:
//     test accuracy (percent) and PGNS (grad_var/grad_sqr) after each of 10
//     epochs at global batch 64-1024. The "11 models" are four distinct
//     measurements: the resnet20, resnet32 and resnet56 files are
//     byte-identical, so are vgg13, vgg16, googlenet, lstm and transformer
//     (all with 782 iterations per epoch at batch 64, i.e. a 50,000-example
//     training set), and alexnet and mobilenet; alexnet, mobilenet and
//     densenet121 record no accuracy (N/A); ps/gradient_validation holds
//     the same files as all_reduce/. Families resnet20 and vgg16 here are
//     the two measurements with accuracy, named after one of their
//     labels. The ASGD logs under ps/res_dist/measure_extra_res_for_asgd/
//     record CPU, bandwidth and per-iteration times around a switch to
//     ASGD, no accuracy or loss, so they carry nothing for this model.
//   - syncswitch: cake-lab/Sync-Switch @ 09af0864c3d8 (Li, Mangoubi, Xu and
//     Guo, "Sync-Switch: Hybrid Parameter Synchronization for Distributed
//     Deep Learning", ICDCS 2021), data/: TensorBoard test-accuracy
//     exports of ResNet32 on CIFAR-10 (baseline/bsp_1..6, asp_1..4, 8
//     workers; cluster_16/bsp_run1..3, 16 workers) and ResNet50 on
//     CIFAR-100 (bsp_1..5, asp_1..5, 8 workers). Progress is counted in
//     worker-batches: a BSP step of w workers is w of them, an ASP step
//     one (the ASP runs end at step 64,013 where BSP's end at 8,000). The
//     table holds each run's final accuracy and the two evaluations around
//     its first crossing of the target; bsp_3 and bsp_4 hold only a final
//     point, and baseline/asp and baseline/bsp (23,400 steps, another
//     schedule) are left out. The README says ASP at 16 workers was not
//     run "because training failure": the diverged row. BSP then ASP
//     (sync switch:<p>, p the BSP share of the schedule's worker-batches,
//     read from each run's steps: BSP steps count w worker-batches until
//     the switch, ASP steps one after it): cifar10_res32/switch_exp/
//     b<p>-a<100-p>-run<n> (shares 0.02 to 0.75, 50 runs on 8 workers;
//     b15-a85-run4 switched at step 2,000 and ended at 50,014, as the
//     25% runs do, and counts as the ninth 25% run), cifar100_res50/
//     <p>_<100-p>_<n> (6.25, 12.5, 25 and 50%, five runs each) and
//     cluster_16/5050_run1..3 (ResNet32 on 16 workers, 50%: not fitted,
//     a check). The ASP-then-BSP runs (a<p>-b<100-p>), dynamic/ and
//     momentum_tunning/ (switches by loss plateau, momentum changes at
//     the switch; the README says dynamic/ was not used in the paper) are
//     left out.
//   - Pollux (petuum/adaptdl, branch osdi21-artifact): Drover already
//     embeds its six models' profiles (../shared/traces/pollux_apps,
//     read by env/profile); BatchFit.Efficiency is Pollux's efficiency
//     formula, but this package does not fit the Pollux profiles yet.
//   - blogcode: searchivarius/BlogCode @ 2d947d8c42ab,
//     2023/test_accelerate_followup/ (Leonid Boytsov's test of the local
//     SGD he added to Hugging Face accelerate): BERT-large fine-tuned
//     from its pretrained checkpoint for 3 epochs on 40,000 examples of
//     MNLI (accuracy) and SQuAD (exact match, as a fraction), on 4 and 8
//     GPUs of AWS g5 instances, bf16, per-GPU batch 32 (MNLI) and 8
//     (SQuAD), AdamW at one learning rate for every period, 3 seeds per
//     configuration: results_{mnli,qa}_bf16_g5/<w>gpus/
//     output_res_40000_nosync_steps_<H>/<seed>/all_results.json for H =
//     1-64 (SQuAD also 24). accelerate's LocalSGD averages parameters
//     every H steps with no gradient all-reduce, so local(1) is parameter
//     averaging after every step with per-GPU AdamW moments, the nearest
//     these runs have to BSP at the same batch. Two MNLI runs ended at
//     chance (0.33 for three classes): one on 1 GPU without local SGD
//     (1gpu/output_res_40000/0) and one local(64) on 4 GPUs (seed 1);
//     both are diverged rows, left out of the fit. The 4,000-example runs
//     and the fp16 repeats are not in the table.
//   - paddle: PaddlePaddle/PaddleFleetX @ 108079ce567e,
//     docs/source/paddle_fleet_rst/collective/collective_performance/
//     communication_frequency.rst, the local SGD results table: ResNet-50
//     on ImageNet, 4 x 8 V100 (32 workers), local batch 128, top-1 (acc1)
//     at local step 1, 2, 4, 8 and 16, one run each. The table's setting
//     "warming up 30" is, by the repository's local SGD guide
//     (examples/local_sgd/resnet/doc/localsgd_cn.rst @ 1bbd811a7044,
//     local_sgd_is_warm_steps), the passes trained synchronously before
//     local SGD starts: post-local SGD. The schedule's length is not
//     stated (progress 0).
//   - slowmo: Wang, Tantia, Ballas and Rabbat, "SlowMo: Improving
//     Communication-Efficient Distributed SGD with Slow Momentum" (ICLR
//     2020; the submitted text, read from the search index), Table 1,
//     base optimizer columns: ResNet-50 on ImageNet, 32 nodes of 8 V100,
//     batch 8192, 90 epochs, all-reduce SGD 76.00% against local SGD
//     (tau = 12, Nesterov buffers zeroed at each average) 69.94%;
//     ResNet-18 on CIFAR-10, 32 workers, batch 4096, 200 epochs, means of
//     5 runs, 92.66% against 91.73%. One period each and no spread, so
//     neither is fitted: the ImageNet pair is checked against the paddle
//     fit, the CIFAR-10 pair is kept for the record.
//
// Not reachable with the search tool (only titles, abstracts and the first
// page of text are stored), so no number of theirs is in the table: Dai et
// al., "Toward Understanding the Impact of Staleness in Distributed Machine
// Learning" (ICLR 2019; its batches-to-target figures); Lin et al., "Don't
// Use Large Mini-Batches, Use Local SGD" (ICLR 2020; epfml/LocalSGD-Code
// publishes code, no results; hmgxr128/Local-SGD, Gu et al.'s code, logs
// to wandb and commits none); Gonzalez Ortiz et al., "Trade-offs of Local
// SGD at Scale" (2021; an ar5iv page is stored, but only its first page);
// DiLoCo (Douillard et al. 2023, whose text is stored) measures perplexity
// with a Nesterov outer optimizer, not local SGD's averaging; Chen et al., "Revisiting Distributed Synchronous
// SGD" (2016); the Sync-Switch paper's own tables (its repository's raw
// data is used instead).
//
// # What the data says, and what it does not
//
//   - Staleness costs accuracy: 0.40 (ResNet32) and 0.54 (ResNet50)
//     points of final accuracy per iteration of average staleness; ASP on
//     8 workers ends 2.8 and 3.8 points below BSP, and no ResNet32 ASP run
//     reached 91% while every BSP run did.
//   - Its cost in examples depends on the model and the target: for
//     ResNet32 ASP needed 4.05x BSP's worker-batches to 85% (Slowdown 0.44
//     per iteration of staleness, 44 times env/sync.go's 0.01): BSP
//     passes 85% early, ASP around the jump in accuracy half-way through
//     the schedule that every run shows (a learning-rate decay, by its
//     shape), three of four runs after it; for ResNet50 ASP reached 65% in
//     fewer examples than BSP (Slowdown -0.012). The factor is measured at one target per
//     family and applied at every target.
//   - Only one staleness (7, ASP on 8 workers) and one failure (ASP on 16
//     workers, ResNet32) are measured: the linear forms in sbar, SSP's use
//     of them through AvgStaleness, and Diverge anywhere in [8, 15] are
//     assumptions, and so is any family without a failure never diverging.
//   - Training-Sync-Mode's gradient statistics and its accuracy curves
//     disagree for the vgg16 files: the PGNS-derived efficiency at batch
//     1024 (median 0.77 against batch 64) is above the whole band the
//     accuracy curves allow (at most 0.49), and so at every batch size
//     from 128 on. The model follows the curves. For resnet20 the
//     efficiency from the median epoch's noise scale lies within the
//     curves' band at every batch size, but the curves' point fit (0.44
//     at batch 256, 0.14 at 1024) is below the lowest epoch's (0.47,
//     0.15): gradient statistics overstate large batches' efficiency in
//     both measurements.
//   - Final accuracy against batch size is not modelled: the
//     Training-Sync-Mode runs last 10 epochs, not to convergence.
//   - Local SGD costs final accuracy in training from scratch, little or
//     none in fine-tuning. ResNet-50 on ImageNet (Paddle, post-local SGD
//     after 30 synchronous passes, 32 workers) loses 0.090 points per
//     local step: local(4) 0.27 [0.13, 0.41], local(8) 0.63 [0.30, 0.95],
//     local(16) 1.35 [0.65, 2.04] points, measured 1.50 at H = 16.
//     BERT-large fine-tuning (4 and 8 workers) loses 0.029 points per step
//     on MNLI (local(8): 0.21 [-0.07, 0.47]) and nothing on SQuAD
//     (local(8): -0.02 [-0.05, 0.01] exact-match points); at local(8) on 4
//     workers every seed of both tasks ended above its local(1) run, and
//     at 8 workers one MNLI seed ended 5.7-7.4 points below its local(1) run
//     at every H from 8 on while the other two stayed within a point.
//     None of this is the PeriodPenalty env/sync.go used to assume (2% more
//     iterations per period step, no accuracy lost).
//   - Local SGD from the first epoch costs far more: SlowMo's ImageNet
//     local SGD (tau = 12, batch 8192) ended 6.06 points below all-reduce
//     SGD, against 0.48-1.50 points the Paddle fit allows at H = 12 (the
//     check is a known disagreement); its CIFAR-10 ResNet-18 (tau = 12)
//     ended 0.93 points below (means of 5 runs).
//   - Measured: H 1-16 at 32 workers (ResNet-50, post-local), H 1-64 at 4
//     and 8 workers (BERT-large fine-tuning). Extrapolated: every other
//     worker count (Predict ignores it), longer periods, local SGD from
//     the start for the ResNet-50 family, training from scratch for the
//     BERT families, and the examples to a target: none of these sources
//     records a curve, so a target at or below local SGD's final accuracy
//     is taken to need BSP's examples. The linear form in H-1 is an
//     assumption the data cannot reject, not one it establishes.
//   - Switching to ASP late costs little accuracy and switching early
//     costs examples: ResNet32 runs with 2% of the schedule under BSP end
//     1.6 points below BSP (ASP: 2.8) and need 3.7x BSP's worker-batches
//     to 85% (ASP: 4.05x), with 5% 0.3 points and 2.75x; with 25% and
//     50% they end within 0.2 points of BSP, with 75% 1.8 points below
//     it (two of its four runs ended at 88-89%). Switching just before the target
//     delays it: at 10% (BSP near 84%) the accuracy drops after the
//     switch and the runs need 1.8x BSP's worker-batches. ResNet50 runs
//     reach 65% sooner than BSP when they switch before BSP's learning-
//     rate decay (0.56x at 25%: the accuracy jumps right after the
//     switch), as its ASP runs do.
//   - The crossings are noisy: ResNet32's target (0.85) lies on a long
//     plateau of the curve (84-88% for most of the schedule before the
//     decay). The 24 runs that switch after BSP's mean crossing show
//     BSP's own spread: 21 crossed under BSP, before their switch, at a
//     median of 9,906 worker-batches, against 7,385-8,453 for the 4 BSP
//     baseline runs the staleness fit takes (so two of those shares'
//     checks fail, marked known). BSP's examples to 0.85 may be
//     understated, and ASP's and the switched runs' factors over them
//     overstated; the model keeps the baseline runs' mean.
//   - The shares between measured ones, the switched runs' scaling with
//     the staleness of the ASP phase, and a failure below 50% under BSP
//     on worker counts where ASP fails are assumptions: one switched
//     share was measured on 16 workers and none on other counts. Leaving
//     one ResNet32 share (2, 4, 5 or 10%) out and interpolating it from
//     its neighbours reproduces its runs within their range; the 16-worker
//     runs, from the 8-worker fit scaled by 15/7, likewise.
//   - No family is one of Drover's workloads or Pollux's six models:
//     env.DefaultFamilies maps them by the closest measured model
//     (cifar10 to ResNet32 on CIFAR-10, imagenet to the ResNet50s, bert
//     to BERT-large on SQuAD) and the rest to the costlier families.
//
// # Usage
//
//	m := converge.Default()
//	out, err := m.Predict("resnet32-cifar10", converge.Strategy{Kind: converge.ASP}, 8, 0, 0.85, converge.BandFit)
//	if err != nil { ... }           // ErrNotMeasured for what the table does not cover
//	iters := bspIters * out.IterFactor // +Inf when the target is never reached
//	acc := out.FinalAccuracy
//	loc, _ := m.Predict("resnet50-imagenet", converge.Strategy{Kind: converge.LocalSGD, Period: 8}, 32, 0, 0.75, converge.BandHigh)
//	_ = loc.Reached // false: local(8) ends at 0.7437 at the band's costly end (0.7504 at the fit)
//	// BSP for the first 5% of the schedule, then ASP (Sync-Switch):
//	sw, err := m.PredictSwitch("resnet32-cifar10", 8, 0.05, converge.BandFit)
//	for _, c := range m.Checks(converge.Measurements()) {
//		fmt.Println(c.Pass, c.Name, c.Value, c.Lo, c.Hi)
//	}
package converge

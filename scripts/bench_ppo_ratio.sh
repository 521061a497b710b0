#!/usr/bin/env bash
# PPO update speed: Drover (agents/ppo BenchmarkUpdate, one core) against
# PyTorch on CPU (scripts/bench_ppo_torch.py, 1 and 2 threads), same shapes.
#
# Usage: scripts/bench_ppo_ratio.sh [ROUNDS]   (default 5)
#
# One update is CleanRL's: 512 samples (4 envs x 128 steps), 4 epochs of 4
# minibatches of 128, separate 64-64 tanh actor and critic, clipped losses,
# entropy, grad-norm clipping at 0.5, Adam. The shapes are CartPole-v1 and
# the placement env on 16 and 64 nodes (with action masks). Go and torch
# alternate for ROUNDS rounds, so that load on the machine hits both alike;
# each round times 10 single Go updates (GOMAXPROCS=1, after one warm-up
# update each) and 10 torch updates after 3 warm-up ones. The figures
# printed are medians: of all the Go updates, and of torch's per-round
# medians:
#
#   cartpole (obs 4, 2 actions): go: X ms/update, torch(1 thread): Y ms, torch(2 threads): Z ms, ratio torch/go: R
#
# where R is torch(1 thread) / go (above 1: Go is faster); the 2-thread
# ratio follows in parentheses, and a second line gives the medians of the
# process CPU time per update (Go, torch on 1 thread) and their ratio, which
# other load on the machine disturbs less than wall time. Load average is
# printed before and after: figures taken on a busy machine are not clean. Needs Go and /usr/bin/python3 with torch
# (Debian: apt-get install python3-torch; its BLAS is whatever libblas.so.3
# points to, so install libopenblas0 too, or torch runs on the slow
# reference BLAS). OpenBLAS's own threads are held to one
# (OPENBLAS_NUM_THREADS=1): torch.set_num_threads does not limit them, and
# "1 thread" would otherwise use both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
py=/usr/bin/python3
"$py" -c 'import torch' || { echo "bench_ppo_ratio: $py cannot import torch (apt-get install python3-torch)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/ppo.test" ./agents/ppo
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(go version | cut -d' ' -f3), $("$py" -c 'import torch; print("torch", torch.__version__)'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $rounds rounds"
for r in $(seq "$rounds"); do
  GOMAXPROCS=1 "$tmp/ppo.test" -test.run '^$' -test.bench '^BenchmarkUpdate$' -test.benchtime 1x -test.count 10 |
    awk '/^BenchmarkUpdate/ { split($1, p, "/"); sub("env=", "", p[2]); for (i = 2; i <= NF; i++) { if ($i == "ms/update") print "go", p[2], $(i-1); if ($i == "cpu-ms/update") print "gocpu", p[2], $(i-1) } }' >>"$tmp/times"
  OPENBLAS_NUM_THREADS=1 "$py" scripts/bench_ppo_torch.py --threads 1,2 --runs 10 --warmup 3 |
    awk '/^torch/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print "torch" v["threads"], v["env"], v["median_ms"], v["obs"], v["actions"]; if (v["threads"] == 1) print "torchcpu", v["env"], v["median_cpu_ms"] }' >>"$tmp/times"
done
# Median per (implementation, shape); then one line per shape.
awk '
  { key = $1 SUBSEP $2; n[key]++; x[key, n[key]] = $3; if ($1 == "torch1") { shape[$2] = "obs " $4 ", " $5 " actions"; if (!($2 in seen)) { seen[$2] = 1; order[++ns] = $2 } } }
  function median(key,   m, i, j, t, a) {
    m = n[key]; for (i = 1; i <= m; i++) a[i] = x[key, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
    return m % 2 ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
  }
  END {
    for (s = 1; s <= ns; s++) {
      e = order[s]; g = median("go" SUBSEP e); t1 = median("torch1" SUBSEP e); t2 = median("torch2" SUBSEP e)
      printf "%s (%s): go: %.2f ms/update, torch(1 thread): %.2f ms, torch(2 threads): %.2f ms, ratio torch/go: %.2f (2 threads: %.2f)\n", e, shape[e], g, t1, t2, t1 / g, t2 / g
      if (n["gocpu" SUBSEP e] && n["torchcpu" SUBSEP e]) {
        gc = median("gocpu" SUBSEP e); tc = median("torchcpu" SUBSEP e)
        printf "  CPU time per update: go %.2f ms, torch(1 thread) %.2f ms, ratio %.2f\n", gc, tc, tc / gc
      }
    }
  }' "$tmp/times"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

package soak

import (
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

// soakSamples are a warm-up, a baseline of 20 goroutines and 40 MiB, a
// run and a leave ending at end goroutines and endRSS MiB.
func soakSamples(endG, endRSS float64) []Sample {
	return []Sample{
		{At: 0, Phase: PhaseWarmup, Goroutines: 30, RSS: 35 * mib},
		{At: 10 * time.Second, Phase: PhaseBaseline, Goroutines: 21, RSS: 41 * mib},
		{At: 11 * time.Second, Phase: PhaseBaseline, Goroutines: 20, RSS: 40 * mib},
		{At: 12 * time.Second, Phase: PhaseRun, Goroutines: 3000, RSS: 90 * mib},
		{At: 20 * time.Second, Phase: PhaseLeave, Goroutines: 500, RSS: 80 * mib},
		{At: 26 * time.Second, Phase: PhaseLeave, Goroutines: endG, RSS: endRSS * mib},
	}
}

func goodLoad() Load {
	return Load{AgentsAsked: 10, AgentSessions: 9, JobsAsked: 100, JobsReported: 100,
		Slow:   map[string]SlowStats{"grpc": {Opened: 5}, "fast": {Opened: 5}},
		Probes: map[string]ProbeStats{"grpc": {OK: 3}, "fast": {OK: 3}}}
}

func goodWindows() []WindowStat {
	return []WindowStat{{Start: 0, OK: 1000, P99: 3 * time.Millisecond}, {Start: 10 * time.Second, OK: 1000, P99: 4900 * time.Microsecond}}
}

func verdicts(checks []Check) map[string]bool {
	m := map[string]bool{}
	for _, c := range checks {
		m[c.Name] = c.Pass
	}
	return m
}

func TestJudge(t *testing.T) {
	limits := Limits{Growth: 0.10, P99: 5 * time.Millisecond}
	tests := []struct {
		name    string
		samples []Sample
		windows []WindowStat
		load    func(*Load)
		want    map[string]bool
	}{
		// 20 x 1.1 = 22 goroutines and 40 x 1.1 = 44 MiB are the last
		// values that pass.
		{"at the limits", soakSamples(22, 44), goodWindows(), nil,
			map[string]bool{"goroutines": true, "rss": true, "place-p99": true, "lockout": true, "load": true}},
		{"below the baseline is no leak", soakSamples(15, 30), goodWindows(), nil,
			map[string]bool{"goroutines": true, "rss": true, "place-p99": true, "lockout": true, "load": true}},
		{"one goroutine over, RSS over", soakSamples(23, 44.1), goodWindows(), nil,
			map[string]bool{"goroutines": false, "rss": false, "place-p99": true, "lockout": true, "load": true}},
		{"p99 at the bound fails (it must be under)", soakSamples(20, 40),
			[]WindowStat{{OK: 1000, P99: 3 * time.Millisecond}, {Start: 10 * time.Second, OK: 1000, P99: 5 * time.Millisecond}}, nil,
			map[string]bool{"goroutines": true, "rss": true, "place-p99": false, "lockout": true, "load": true}},
		{"a failed call fails its window", soakSamples(20, 40),
			[]WindowStat{{OK: 1000, Errors: 1, P99: time.Millisecond}}, nil,
			map[string]bool{"place-p99": false}},
		{"a window without an answer fails", soakSamples(20, 40),
			[]WindowStat{{OK: 1000, P99: time.Millisecond}, {Start: 10 * time.Second}}, nil,
			map[string]bool{"place-p99": false}},
		{"a failed probe is a lockout", soakSamples(20, 40), goodWindows(),
			func(l *Load) { l.Probes["fast"] = ProbeStats{OK: 2, Failed: 1, LastError: "deadline"} },
			map[string]bool{"lockout": false, "load": true}},
		{"8 of 10 agent sessions is under 90%", soakSamples(20, 40), goodWindows(),
			func(l *Load) { l.AgentSessions = 8 }, map[string]bool{"load": false}},
		{"a job not reported", soakSamples(20, 40), goodWindows(),
			func(l *Load) { l.JobsReported = 99 }, map[string]bool{"load": false}},
		{"no baseline", soakSamples(20, 40)[3:], goodWindows(), nil,
			map[string]bool{"goroutines": false, "rss": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			load := goodLoad()
			if tt.load != nil {
				tt.load(&load)
			}
			got := verdicts(Judge(limits, tt.samples, tt.windows, load))
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s: pass %v, want %v", name, got[name], want)
				}
			}
		})
	}
}

func TestJudgeDetail(t *testing.T) {
	checks := Judge(Limits{Growth: 0.10, P99: 5 * time.Millisecond}, soakSamples(23, 44.1), goodWindows(), goodLoad())
	want := map[string]string{
		// start 20, the run's peak 3000, end 23 = +15.0%, limit 22, 6 s
		// from the first leave sample to the last.
		"goroutines": "start 20, peak 3000, end 23 (+15.0%; limit 22, +10%) after 6 s without clients",
		"rss":        "start 40.0 MiB, peak 90.0 MiB, end 44.1 MiB (+10.3%; limit 44.0 MiB, +10%)",
		"place-p99":  "worst window p99 4.90 ms (window at 10 s), 0 of 2 windows at or over 5.00 ms, 0 without an answer, 0 failed calls",
		"lockout":    "probes answered: fast 3/3, grpc 3/3",
	}
	for _, c := range checks {
		if w, ok := want[c.Name]; ok && !strings.HasPrefix(c.Detail, w) {
			t.Errorf("%s: detail %q, want it to begin %q", c.Name, c.Detail, w)
		}
	}
}

func TestStable(t *testing.T) {
	b := func(g, rssMiB float64) Sample { return Sample{Phase: PhaseBaseline, Goroutines: g, RSS: rssMiB * mib} }
	tests := []struct {
		name    string
		samples []Sample
		want    bool
	}{
		// 100 to 101 MiB is a 1% spread: still settled; 101.1 is not.
		{"same goroutines, RSS within 1%", []Sample{b(30, 200), b(14, 100), b(14, 101), b(14, 100.5)}, true},
		{"RSS still falling", []Sample{b(14, 101.1), b(14, 100.5), b(14, 100)}, false},
		{"goroutines moved", []Sample{b(14, 100), b(15, 100), b(14, 100)}, false},
		{"too few", []Sample{b(14, 100), b(14, 100)}, false},
		{"one from the warm-up", []Sample{{Phase: PhaseWarmup, Goroutines: 14, RSS: 100 * mib}, b(14, 100), b(14, 100)}, false},
	}
	for _, tt := range tests {
		if got := Stable(tt.samples, PhaseBaseline, 3, 0.01); got != tt.want {
			t.Errorf("%s: Stable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackWithin(t *testing.T) {
	base := Sample{Phase: PhaseBaseline, Goroutines: 20, RSS: 40 * mib}
	l := func(g, rssMiB float64) Sample { return Sample{Phase: PhaseLeave, Goroutines: g, RSS: rssMiB * mib} }
	tests := []struct {
		name    string
		samples []Sample
		want    bool
	}{
		// Limits 22 goroutines and 44 MiB, held by the last three.
		{"three within", []Sample{base, l(500, 80), l(22, 44), l(20, 41), l(21, 43)}, true},
		{"the last two only", []Sample{base, l(23, 44), l(22, 44), l(21, 43)}, false},
		{"RSS over in the last", []Sample{base, l(20, 40), l(20, 40), l(20, 44.2)}, false},
		{"no baseline", []Sample{l(20, 40), l(20, 40), l(20, 40)}, false},
	}
	for _, tt := range tests {
		if got := BackWithin(tt.samples, 3, 0.10); got != tt.want {
			t.Errorf("%s: BackWithin = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestJudgeP99ClientLimited(t *testing.T) {
	// A wake-up lag p99 of 2.5 ms is half the 5 ms bound: the detail
	// says the client limited the run; 2.4 ms does not.
	l := Limits{Growth: 0.1, P99: 5 * time.Millisecond}
	for _, tt := range []struct {
		lag  time.Duration
		want bool
	}{{2500 * time.Microsecond, true}, {2400 * time.Microsecond, false}} {
		c := judgeP99(l, goodWindows(), Load{PlaceLagP99: tt.lag})
		if got := strings.Contains(c.Detail, "its core limited the measurement"); got != tt.want || !c.Pass {
			t.Errorf("lag %v: detail %q, pass %v; want the note %v and a pass", tt.lag, c.Detail, c.Pass, tt.want)
		}
	}
}

func TestJudgeP99ServerShare(t *testing.T) {
	// 995 of 1,000 calls within the bound inside the server: 99.50%.
	c := judgeP99(Limits{P99: 5 * time.Millisecond}, goodWindows(), Load{ServedPlace: 1000, ServedWithin: 995})
	if want := "inside the server 99.50% of the run's 1000 Place calls on that listener took under 5.00 ms"; !strings.Contains(c.Detail, want) {
		t.Errorf("detail %q, want it to hold %q", c.Detail, want)
	}
}

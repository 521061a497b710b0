package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestSimPhases checks that drover sim says where its wall time went: a
// phases line after the wall time in the summary, and phases_s in --json
// (which stays one JSON object), whose simulate phase is wall_s and whose
// load phase is the workload's and the profiles' together.
func TestSimPhases(t *testing.T) {
	p := writeTemp(t, "tiny.csv", tinyJobsHeader+"a,0,4,100,cifar10,0,,,0,0,ring,0\nb,10,2,200,ncf,0,,,0,0,ring,0\n")
	code, out, errOut := droverWithin(t, testDeadline, "sim", "--quiet", "--workload", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n := len(lines); n < 2 || !strings.HasPrefix(lines[n-2], "wall time") || !strings.HasPrefix(lines[n-1], "phases     load ") ||
		!strings.Contains(lines[n-1], "simulate ") || !strings.Contains(lines[n-1], "write ") {
		t.Errorf("summary does not end with the wall time and the phases:\n%s", out)
	}
	code, out, errOut = droverWithin(t, testDeadline, "sim", "--quiet", "--json", "--workload", p)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var got struct {
		Wall   float64 `json:"wall_s"`
		Phases phases  `json:"phases_s"`
	}
	var all map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	ph := got.Phases
	for name, v := range map[string]float64{"workload": ph.Workload, "profiles": ph.Profiles, "build": ph.Build, "simulate": ph.Simulate, "write": ph.Write} {
		if !(v >= 0 && v < 5) {
			t.Errorf("phase %s = %v s", name, v)
		}
	}
	if ph.Simulate != got.Wall || ph.Simulate == 0 {
		t.Errorf("simulate phase %v s, wall_s %v", ph.Simulate, got.Wall)
	}
	if ph.Load != ph.Workload+ph.Profiles {
		t.Errorf("load %v s is not workload %v + profiles %v", ph.Load, ph.Workload, ph.Profiles)
	}
}

// TestSimLazyAdvance checks that lazy advance is drover sim's default and
// that --lazy-advance=false brings the eager reference back: the built-in
// workload under Tiresias (which reads no progress) gives the same jobs,
// events and restarts either way and the same average JCT up to
// floating-point rounding, under both straggler models; --json says which
// mode ran, and the summary names the eager one.
func TestSimLazyAdvance(t *testing.T) {
	type res struct {
		Finished int     `json:"finished"`
		Events   int     `json:"events"`
		Restarts int     `json:"restarts"`
		AvgJCT   float64 `json:"avg_jct_s"`
		Lazy     *bool   `json:"lazy_advance"`
	}
	for _, strag := range []string{"--stragglers=false", "--stragglers=true"} {
		var runs [2]res
		for i, args := range [][]string{{"--lazy-advance=false"}, {}} {
			args = append([]string{"sim", "--quiet", "--json", "--policy", "tiresias", strag}, args...)
			code, out, errOut := droverWithin(t, testDeadline, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			if err := json.Unmarshal([]byte(out), &runs[i]); err != nil {
				t.Fatal(err)
			}
		}
		eager, lazy := runs[0], runs[1]
		if eager.Lazy == nil || *eager.Lazy || lazy.Lazy == nil || !*lazy.Lazy {
			t.Errorf("%s: lazy_advance with --lazy-advance=false %v, by default %v; want false and true", strag, eager.Lazy, lazy.Lazy)
		}
		if eager.Finished != lazy.Finished || eager.Events != lazy.Events || eager.Restarts != lazy.Restarts || eager.Finished == 0 {
			t.Errorf("%s: eager %+v, lazy %+v", strag, eager, lazy)
		}
		if d := math.Abs(eager.AvgJCT-lazy.AvgJCT) / eager.AvgJCT; !(d <= 1e-9) {
			t.Errorf("%s: avg JCT eager %v, lazy %v (relative difference %g)", strag, eager.AvgJCT, lazy.AvgJCT, d)
		}
	}
	code, out, errOut := droverWithin(t, testDeadline, "sim", "--quiet", "--policy", "tiresias", "--lazy-advance=false")
	if code != 0 || !strings.Contains(out, "advance    eager") {
		t.Errorf("exit %d, summary without the eager-advance line:\n%s%s", code, out, errOut)
	}
}

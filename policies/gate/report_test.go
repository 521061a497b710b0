package gate

import (
	"math"
	"testing"
)

// TestEvaluate: a learned policy 40% better than the heuristic on each of
// three episodes and 5% worse than its teacher on each (the teacher is
// 42.9% better than the heuristic: 100/175 - 1): the gate opens on the
// heuristic's comparison alone (every resample's mean is 0.4), and the
// report says that the gain is the teacher's (every resample's mean
// against the teacher is -0.05).
func TestEvaluate(t *testing.T) {
	learned := []float64{105, 210, 105}
	heuristic := []float64{175, 350, 175}
	teacher := []float64{100, 200, 100}
	r := Evaluate(learned, heuristic, "sas", teacher, "sas+strn-sync", Config{Seed: 1})
	if !r.Verdict.Converged || math.Abs(r.Verdict.MeanGain-0.4) > 1e-12 {
		t.Errorf("verdict %v, want converged with mean gain 40%%", r.Verdict)
	}
	if r.Verdict != Judge(learned, heuristic, Config{Seed: 1}) {
		t.Errorf("verdict %v is not Judge's against the heuristic", r.Verdict)
	}
	if r.VsTeacher.Converged || math.Abs(r.VsTeacher.MeanGain+0.05) > 1e-12 || math.Abs(r.VsTeacher.Lower+0.05) > 1e-12 || r.TeacherBeaten() {
		t.Errorf("vs teacher %v, want mean and lower bound -5%%, not beaten", r.VsTeacher)
	}
	want := "vs sas: converged: mean gain 40.0%, lower bound 40.0% over 3 paired episodes; vs its teacher sas+strn-sync: mean gain -5.0%, lower bound -5.0% (its gain over sas is its teacher's)"
	if got := r.String(); got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
	// No teacher: the verdict alone.
	r = Evaluate(learned, heuristic, "sas", nil, "", Config{Seed: 1})
	if want := "vs sas: converged: mean gain 40.0%, lower bound 40.0% over 3 paired episodes"; r.String() != want || r.TeacherBeaten() {
		t.Errorf("without a teacher: %s", r)
	}
	// A learned policy 10% better than its teacher, which is the
	// heuristic (strn-rl and strn): no "teacher's gain" remark.
	r = Evaluate([]float64{90, 180}, []float64{100, 200}, "strn", []float64{100, 200}, "strn", Config{Seed: 1})
	if want := "vs strn: converged: mean gain 10.0%, lower bound 10.0% over 2 paired episodes; vs its teacher strn: mean gain 10.0%, lower bound 10.0%"; r.String() != want || !r.TeacherBeaten() {
		t.Errorf("teacher is the heuristic: %s", r)
	}
}

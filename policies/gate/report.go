package gate

import "fmt"

// Report is one evaluation of a learned policy: the verdict against the
// heuristic that would answer instead, which alone opens or closes the
// gate, and beside it the comparison with the learned policy's teacher
// (the policy it was cloned from), which says how much of its gain over
// the heuristic is the teacher's.
type Report struct {
	// Heuristic names the policy that answers when the learned one does
	// not; Verdict is Judge of the learned policy against it.
	Heuristic string
	Verdict   Verdict
	// Teacher names the learned policy's teacher ("": none known), and
	// VsTeacher is Judge of the learned policy against the teacher on
	// the same episodes (its Converged: the learned policy beats its
	// teacher by the margin). Both are zero without a teacher.
	Teacher   string
	VsTeacher Verdict
}

// Evaluate judges learned against heuristic (the gate's decision) and,
// with a teacher's costs (teacher non-nil; nil: no teacher), against
// teacher, all on the same episodes and with c. It panics when the
// slices' lengths differ.
func Evaluate(learned, heuristic []float64, heuristicName string, teacher []float64, teacherName string, c Config) Report {
	r := Report{Heuristic: heuristicName, Verdict: Judge(learned, heuristic, c)}
	if teacher != nil {
		r.Teacher, r.VsTeacher = teacherName, Judge(learned, teacher, c)
	}
	return r
}

// TeacherBeaten reports whether the learned policy is better than its
// teacher with the gate's confidence (the lower bound of its gain over
// the teacher above zero). Without a teacher it is false.
func (r Report) TeacherBeaten() bool { return r.Teacher != "" && r.VsTeacher.Lower > 0 }

// String summarises the report in one line: the verdict against the
// heuristic, then TeacherNote.
func (r Report) String() string {
	return fmt.Sprintf("vs %s: %v%s", r.Heuristic, r.Verdict, r.TeacherNote())
}

// TeacherNote is the comparison with the teacher as a clause to follow
// the verdict ("" without a teacher), saying when the learned policy's
// gain over the heuristic is its teacher's (it gains over the heuristic
// but is not better than its teacher).
func (r Report) TeacherNote() string {
	if r.Teacher == "" {
		return ""
	}
	s := fmt.Sprintf("; vs its teacher %s: mean gain %.1f%%, lower bound %.1f%%", r.Teacher, 100*r.VsTeacher.MeanGain, 100*r.VsTeacher.Lower)
	if r.Verdict.MeanGain > 0 && !r.TeacherBeaten() && r.Teacher != r.Heuristic {
		s += fmt.Sprintf(" (its gain over %s is its teacher's)", r.Heuristic)
	}
	return s
}

package direct

// TeacherOf returns the policy that the learned policy name (STRNRL or
// SASRL) is trained to imitate first, by behaviour cloning
// (train/direct): STRN for strn-rl, and SAS with STRN's sync rule,
// "sas+strn-sync", for sas-rl (SAS alone keeps BSP). It returns "" for
// another name. A learned policy's gain over the heuristic it stands in
// for is partly its teacher's: reports compare it with both.
func TeacherOf(name string) string {
	switch name {
	case STRNRL:
		return "strn"
	case SASRL:
		return "sas+strn-sync"
	}
	return ""
}

package builtin

import (
	"slices"
	"strings"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/fifo"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/gandiva"
	"github.com/drover-sched/drover/policies/optimus"
	"github.com/drover-sched/drover/policies/oraclesync"
	"github.com/drover-sched/drover/policies/random"
	"github.com/drover-sched/drover/policies/sas"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/policies/syncswitch"
	"github.com/drover-sched/drover/policies/themis"
	"github.com/drover-sched/drover/policies/tiresias"
)

// Registry returns a registry holding every built-in policy and sync rule
// (strn-sync, oracle-sync, sync-switch), so that it also builds composed names such as
// "tiresias+asp" or "gandiva+strn-sync" (policies.Registry.Factory).
func Registry() policies.Registry {
	r := policies.Registry{}
	for name, f := range map[string]policies.Factory{
		fifo.Name:      fifo.New,
		firstfit.Name:  firstfit.New,
		gandiva.Name:   gandiva.New,
		optimus.Name:   optimus.New,
		random.Name:    random.New,
		sas.Name:       sas.New,
		sas.NameEvenPS: sas.NewEvenPS,
		strn.Name:      strn.New,
		themis.Name:    themis.New,
		tiresias.Name:  tiresias.New,
	} {
		if err := r.Register(name, f); err != nil {
			panic(err) // a programming error: two built-ins share a name
		}
	}
	for name, f := range map[string]policies.SyncRuleFactory{
		strn.SyncRuleName: strn.NewSyncRule,
		oraclesync.Name:   oraclesync.New,
		syncswitch.Name:   syncswitch.New,
	} {
		if err := r.RegisterSyncRule(name, f); err != nil {
			panic(err)
		}
	}
	return r
}

// Methods are the policies Drover's claims are about, the ones the
// baselines are there to be compared with.
var Methods = []string{strn.Name, sas.Name}

// BaselinePlacements are the placement heuristics of the baseline set.
var BaselinePlacements = []string{firstfit.Name, tiresias.Name, gandiva.Name}

// BaselineSyncs are the sync choices each baseline placement is paired
// with: the fixed strategies BSP, ASP and local SGD with periods 4 and 8,
// and STRN's per-job choice on the heuristic's placement, which separates
// STRN's placement from its sync choice. Local SGD(8) is the only period
// STRN chooses among, so a fixed local(8) is one of STRN's own options
// forced on every job; local(4) is there because neither period wins
// everywhere: measured with first-fit, Tiresias and Gandiva, local(4) had
// a 6-7% lower average TTA than local(8) on the built-in workload (5
// seeds) and local(8) a 0.5-2% lower one on Helios (3 seeds, within the
// intervals), while local(16) was the worst of the three on both.
var BaselineSyncs = []string{"bsp", "asp", "local(4)", "local(8)", strn.SyncRuleName}

// Baselines returns the baseline set, in report order: every
// BaselinePlacements x BaselineSyncs composition, then Optimus.
func Baselines() []string {
	var out []string
	for _, p := range BaselinePlacements {
		for _, s := range BaselineSyncs {
			out = append(out, p+"+"+s)
		}
	}
	return append(out, optimus.Name)
}

// UpperBounds returns the oracle-sync rows that go with the baselines:
// each baseline placement with the oracle sync rule (oraclesync), the best
// per-job strategy on that placement.
func UpperBounds() []string {
	var out []string
	for _, p := range BaselinePlacements {
		out = append(out, p+"+"+oraclesync.Name)
	}
	return out
}

// MitigationSep separates a row name from the per-worker mitigation its
// runs use: "<policy>~<mitigation>" is <policy> with every run under that
// runtime mitigation (env.MitigationLBBSP's "lb-bsp", "stret", "replace"
// or "none"), whatever the comparison's own: drover eval splits it off
// (SplitMitigation) and sets policies/compare.Policy.Mitigation.
const MitigationSep = "~"

// Mitigations are the names a row's mitigation may take: the per-worker
// model's runtime mitigations (env.MitigationNone, MitigationSTRET,
// MitigationReplace, MitigationLBBSP).
var Mitigations = []string{env.MitigationNone, env.MitigationSTRET, env.MitigationReplace, env.MitigationLBBSP}

// LBBSP is the mitigation of the LB-BSP comparison rows (env.MitigationLBBSP).
const LBBSP = env.MitigationLBBSP

// ComparisonSystems returns the papers' own comparison systems, in report
// order, as rows beside the baselines: Sync-Switch (BSP, then ASP from the
// switch point; policies/syncswitch) and load-balanced BSP (LB-BSP: BSP
// with each worker's local batch balanced to its speed, the per-worker
// model's lb-bsp mitigation, MitigationSep) on each baseline placement,
// the comparison systems of STRET's and STRN's sync choices; then
// Themis's finish-time fair scheduling (policies/themis), a scheduling
// baseline of STRN's paper.
func ComparisonSystems() []string {
	var out []string
	for _, p := range BaselinePlacements {
		out = append(out, p+"+"+syncswitch.Name)
	}
	for _, p := range BaselinePlacements {
		out = append(out, p+"+bsp"+MitigationSep+LBBSP)
	}
	return append(out, themis.Name)
}

// SplitMitigation splits a row name "<policy>~<mitigation>" into the
// policy and the mitigation (MitigationSep); a name without one is
// returned whole with mitigation "".
func SplitMitigation(name string) (policy, mitigation string) {
	policy, mitigation, _ = strings.Cut(name, MitigationSep)
	return policy, mitigation
}

// IsBaseline reports whether name is a baseline for the Methods: a
// registered policy other than a Method, alone or composed with a fixed
// strategy or a sync rule other than oracle-sync (STRN's, Sync-Switch's),
// with or without a mitigation (SplitMitigation): the 16 Baselines and
// the ComparisonSystems among them. A Method composed with anything, any
// composition with oracle-sync (an upper bound, not a baseline) and a name
// the registry does not know are not baselines.
func IsBaseline(name string) bool {
	p, m := SplitMitigation(name)
	if p != name && !slices.Contains(Mitigations, m) {
		return false
	}
	name = p
	r := Registry()
	if _, err := r.Factory(name); err != nil {
		return false
	}
	p, s, _ := strings.Cut(name, "+")
	for _, m := range Methods {
		if p == m {
			return false
		}
	}
	return s != oraclesync.Name
}

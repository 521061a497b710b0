package builtin

import (
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/fifo"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/gandiva"
	"github.com/drover-sched/drover/policies/optimus"
	"github.com/drover-sched/drover/policies/random"
	"github.com/drover-sched/drover/policies/sas"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/policies/tiresias"
)

// Registry returns a registry holding every built-in policy.
func Registry() policies.Registry {
	r := policies.Registry{}
	for name, f := range map[string]policies.Factory{
		fifo.Name:     fifo.New,
		firstfit.Name: firstfit.New,
		gandiva.Name:  gandiva.New,
		optimus.Name:  optimus.New,
		random.Name:   random.New,
		sas.Name:      sas.New,
		strn.Name:     strn.New,
		tiresias.Name: tiresias.New,
	} {
		if err := r.Register(name, f); err != nil {
			panic(err) // a programming error: two built-ins share a name
		}
	}
	return r
}

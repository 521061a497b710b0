package policies_test

import (
	"fmt"

	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// Composed names put a placement heuristic together with a sync choice;
// a malformed one says what is wrong.
func ExampleRegistry_Factory() {
	reg := builtin.Registry()
	for _, name := range []string{"tiresias+local(8)", "gandiva+strn-sync", "first-fit+oracle-sync", "first-fit+ASP", "tiresias+sgd"} {
		if _, err := reg.Factory(name); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(name, "ok")
	}
	p, _ := reg.New("gandiva+asp", policies.Config{Seed: 1})
	_ = p // schedules like gandiva, every placement under ASP
	// Output:
	// tiresias+local(8) ok
	// gandiva+strn-sync ok
	// first-fit+oracle-sync ok
	// policies: unknown policy "first-fit+ASP": write the sync strategy "ASP" as "asp"
	// policies: unknown policy "tiresias+sgd": "sgd" is neither a sync strategy (bsp, asp, ssp(S), local(H)) nor a sync rule (oracle-sync, strn-sync, sync-switch)
}

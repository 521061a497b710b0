package policies_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// TestComposedNames checks the "<policy>+<sync>" syntax: each good name
// builds a policy whose first placement (one 2-GPU job on an idle 4-GPU
// node, job-level model) carries the sync the name gives, and each bad one
// fails with ErrUnknownPolicy and a message that says what is wrong.
func TestComposedNames(t *testing.T) {
	tests := []struct {
		name     string
		wantSync string // the placement's sync; "" when the name is bad
		wantErr  string // part of the error
	}{
		{name: "first-fit", wantSync: "bsp"},
		{name: "first-fit+bsp", wantSync: "bsp"},
		{name: "first-fit+asp", wantSync: "asp"},
		{name: "tiresias+ssp(3)", wantSync: "ssp(3)"},
		{name: "gandiva+local(8)", wantSync: "local(8)"},
		{name: "gandiva+local(16)", wantSync: "local(16)"},
		{name: "strn+asp", wantSync: "asp"}, // STRN's placement, its sync overridden
		// The job-level model cannot probe: both rules keep BSP.
		{name: "gandiva+strn-sync", wantSync: "bsp"},
		{name: "first-fit+oracle-sync", wantSync: "bsp"},
		{name: "nope", wantErr: `unknown policy "nope" (have fifo, first-fit,`},
		{name: "strn-sync", wantErr: `unknown policy "strn-sync"`},
		{name: "nope+bsp", wantErr: `unknown policy "nope" in "nope+bsp"`},
		{name: "first-fit+", wantErr: `"first-fit+": want <policy>+<sync>`},
		{name: "+bsp", wantErr: `"+bsp": want <policy>+<sync>`},
		{name: "+strn-sync", wantErr: `"+strn-sync": want <policy>+<sync>`},
		{name: "first-fit+bsp+asp", wantErr: `one "+" only`},
		{name: "first-fit+xyz", wantErr: `"xyz" is neither a sync strategy (bsp, asp, ssp(S), local(H)) nor a sync rule (oracle-sync, strn-sync, sync-switch)`},
		{name: "first-fit+strn", wantErr: `"strn" is neither a sync strategy`},
		{name: "first-fit+local(0)", wantErr: `"local(0)" is neither a sync strategy`},
		{name: "first-fit+BSP", wantErr: `write the sync strategy "BSP" as "bsp"`},
		{name: "first-fit+local:8", wantErr: `write the sync strategy "local:8" as "local(8)"`},
		{name: "first-fit+ssp", wantErr: `write the sync strategy "ssp" as "ssp(3)"`},
		{name: "first-fit+asp ", wantErr: `write the sync strategy "asp " as "asp"`},
	}
	reg := builtin.Registry()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := reg.New(tt.name, policies.Config{Seed: 1})
			if tt.wantErr != "" {
				if !errors.Is(err, policies.ErrUnknownPolicy) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want ErrUnknownPolicy mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
			sim, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m},
				[]env.JobSpec{envtest.MakeJob("a").GPUs(2).Duration(10).Obj()})
			if err != nil {
				t.Fatal(err)
			}
			v, err := sim.Next()
			if err != nil {
				t.Fatal(err)
			}
			ds, err := p.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 || len(ds[0].Nodes) != 2 || ds[0].Sync.String() != tt.wantSync {
				t.Errorf("decisions %v, want job a placed with %s", ds, tt.wantSync)
			}
		})
	}
}

func TestRegisterNames(t *testing.T) {
	r := builtin.Registry()
	if got, want := r.SyncRuleNames(), []string{"oracle-sync", "strn-sync", "sync-switch"}; !slices.Equal(got, want) {
		t.Errorf("sync rules = %v, want %v", got, want)
	}
	want := strings.Join(r.Names(), ", ") + "; or <policy>+<sync> with <sync> one of bsp, asp, ssp(S), local(H), oracle-sync, strn-sync, sync-switch"
	if got := r.Syntax(); got != want {
		t.Errorf("syntax:\n got %s\nwant %s", got, want)
	}
	rule := func(policies.Config) (policies.SyncRule, error) { return nil, nil }
	tests := []struct {
		name string
		err  error
	}{
		{"policy with a plus", r.Register("a+b", nil)},
		{"empty policy name", r.Register("", nil)},
		{"rule spelling a strategy", r.RegisterSyncRule("asp", rule)},
		{"rule with a plus", r.RegisterSyncRule("x+y", rule)},
		{"rule twice", r.RegisterSyncRule("strn-sync", rule)},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: registered", tt.name)
		}
	}
	// A rule is no policy on its own, even when fetched from the map.
	p, err := r["+strn-sync"](policies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Schedule(&env.View{}); err == nil || !strings.Contains(err.Error(), "name it <policy>+strn-sync") {
		t.Errorf("schedule of a bare rule: %v", err)
	}
}

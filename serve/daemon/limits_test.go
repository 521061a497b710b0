package daemon

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/state"
)

// TestLimitsReachTheServer: drover serve's defaults are the libraries'
// (serve.DefaultMaxWork, state.Config's), each bound goes where its flag
// says, and a bound that is not positive is refused naming its flag.
func TestLimitsReachTheServer(t *testing.T) {
	c := Defaults()
	if err := c.CheckLimits(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if diff := cmp.Diff(state.Config{StaleAfter: c.StaleAfter}.WithDefaults(), c.stateConfig().WithDefaults()); diff != "" {
		t.Errorf("default live state config (-library,+drover serve):\n%s", diff)
	}
	if got := c.limits(); got != serve.DefaultLimits {
		t.Errorf("default limits %+v, want serve.DefaultLimits %+v", got, serve.DefaultLimits)
	}
	c.MaxWork, c.Live = 7, LiveLimits{MaxNodes: 1, MaxJobs: 2, MaxJobsPerNode: 3, MaxJobWorkers: 4, MaxIterationTimes: 5}
	want := state.Config{StaleAfter: c.StaleAfter, MaxNodes: 1, MaxJobs: 2, MaxJobsPerNode: 3, MaxJobWorkers: 4, MaxIterationTimes: 5}
	if diff := cmp.Diff(want, c.stateConfig()); diff != "" {
		t.Errorf("live state config (-want,+got):\n%s", diff)
	}
	if got := c.limits().MaxWork; got != 7 {
		t.Errorf("MaxWork %d, want 7", got)
	}
	for _, tt := range []struct {
		flag string
		set  func(*Config)
	}{
		{"-max-work", func(c *Config) { c.MaxWork = 0 }},
		{"-live-max-nodes", func(c *Config) { c.Live.MaxNodes = -1 }},
		{"-live-max-jobs", func(c *Config) { c.Live.MaxJobs = 0 }},
		{"-live-max-jobs-per-node", func(c *Config) { c.Live.MaxJobsPerNode = 0 }},
		{"-live-max-job-workers", func(c *Config) { c.Live.MaxJobWorkers = -5 }},
		{"-live-max-iteration-times", func(c *Config) { c.Live.MaxIterationTimes = 0 }},
	} {
		c := Defaults()
		tt.set(&c)
		if err := c.CheckLimits(); err == nil || !strings.HasPrefix(err.Error(), tt.flag+" ") {
			t.Errorf("%s: %v, want an error naming it", tt.flag, err)
		}
	}
}

package dqn

import (
	"math"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/cartpole"
)

// TestConfigValidate checks that the configs issue 18 found panicking
// (hidden [0], [-5]), running out of memory ([100000, 100000]), failing
// only at save (gamma 2.5) or sampling more than the buffer holds
// (batch_size > buffer_size) are errors naming the key, and that Train
// returns them before building anything.
func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		key  string // in the error; "" for a valid config
	}{
		{name: "default", edit: func(*Config) {}},
		{name: "hidden zero", edit: func(c *Config) { c.Hidden = []int{0} }, key: "hidden"},
		{name: "hidden negative", edit: func(c *Config) { c.Hidden = []int{-5} }, key: "hidden"},
		{name: "hidden too large", edit: func(c *Config) { c.Hidden = []int{100000, 100000} }, key: "hidden"},
		{name: "gamma above one", edit: func(c *Config) { c.Gamma = 2.5 }, key: "gamma"},
		{name: "batch above buffer", edit: func(c *Config) { c.BatchSize = c.BufferSize + 1 }, key: "batch_size"},
		{name: "huge buffer", edit: func(c *Config) { c.BufferSize = 1 << 40 }, key: "buffer_size"},
		{name: "negative learning starts", edit: func(c *Config) { c.LearningStarts = -1 }, key: "learning_starts"},
		{name: "epsilon above one", edit: func(c *Config) { c.StartE = 2 }, key: "start_e"},
		{name: "exploration fraction zero", edit: func(c *Config) { c.ExplorationFraction = 0 }, key: "exploration_fraction"},
		{name: "lr NaN", edit: func(c *Config) { c.LR = math.NaN() }, key: "lr"},
		{name: "no steps", edit: func(c *Config) { c.TotalSteps = 0 }, key: "total_steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.edit(&cfg)
			err := cfg.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.key)
			}
			if _, terr := Train(cfg, cartpole.New(), nil); terr == nil {
				t.Fatalf("Train accepted the config Validate refuses (%v)", err)
			}
		})
	}
}

package ppo

import (
	"math"
	"strings"
	"testing"
)

// TestConfigValidate checks that the configs issue 18 found panicking
// (hidden [0], [-5]), running out of memory ([100000, 100000]) or failing
// only at save (gamma 2.5) are errors naming the key, and that Train
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
		{name: "gamma NaN", edit: func(c *Config) { c.Gamma = float32(math.NaN()) }, key: "gamma"},
		{name: "lambda negative", edit: func(c *Config) { c.Lambda = -0.1 }, key: "lambda"},
		{name: "lr infinite", edit: func(c *Config) { c.LR = math.Inf(1) }, key: "lr"},
		{name: "ent_coef negative", edit: func(c *Config) { c.EntCoef = -1 }, key: "ent_coef"},
		{name: "no steps", edit: func(c *Config) { c.TotalSteps = 0 }, key: "total_steps"},
		{name: "huge batch", edit: func(c *Config) { c.NumEnvs, c.NumSteps = 1<<16, 1<<16 }, key: "num_envs"},
		{name: "indivisible batch", edit: func(c *Config) { c.NumMinibatches = 3 }, key: "num_minibatches"},
		{name: "action prior NaN", edit: func(c *Config) { c.ActionPrior = []float32{float32(math.NaN())} }, key: "action_prior"},
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
			if _, terr := Train(cfg, cartpoleEnv, nil); terr == nil {
				t.Fatalf("Train accepted the config Validate refuses (%v)", err)
			}
		})
	}
}

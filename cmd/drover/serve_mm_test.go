package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon"
)

// setMMFlags parses args as drover serve's -mm flags and applies them.
func setMMFlags(c *daemon.Config, args ...string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := defineMMFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	return f.setMM(fs, c, io.Discard)
}

// TestSetMM: -mm-model serves ModServe's router and autoscaler (its
// profile simulated at start: initial pools of at least one instance
// each), -mm-scale off and -mm-router off leave one call out; the core
// takes what the flags build; an unknown model, router or autoscaler, the
// late router, -mm flags without -mm-model, and both calls off are
// errors.
func TestSetMM(t *testing.T) {
	var c daemon.Config
	if err := setMMFlags(&c); err != nil || c.MM != nil {
		t.Fatalf("no -mm-model: %v, %+v", err, c.MM)
	}
	if err := setMMFlags(&c, "-mm-model", "llama", "-mm-requests", "200000"); err != nil || c.MM == nil || c.MM.Scaler == nil || c.MM.NoRouter || c.MM.Base.Model.Name != "llama-3.2-11b-vision" {
		t.Fatalf("-mm-model llama: %v, %+v", err, c.MM)
	}
	sc, err := c.MM.Scaler()
	if err != nil {
		t.Fatal(err)
	}
	if init := sc.Initial(); init.Image < 1 || init.Text < 1 || init.Mono != 0 {
		t.Fatalf("initial sizes %+v, want at least one image and one text instance", init)
	}
	if _, err := serve.NewCore(serve.WithMM(*c.MM)); err != nil {
		t.Fatalf("the core refuses -mm-model llama: %v", err)
	}
	c = daemon.Config{}
	if err := setMMFlags(&c, "-mm-model", "internvl", "-mm-scale", "off"); err != nil || c.MM == nil || c.MM.Scaler != nil || c.MM.Router != "modserve" {
		t.Fatalf("-mm-scale off: %v, %+v", err, c.MM)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-mm-model", "gpt-9"}, "-mm-model"},
		{[]string{"-mm-model", "llama", "-mm-router", "fastest"}, "-mm-router"},
		{[]string{"-mm-model", "llama", "-mm-router", "modserve-late", "-mm-scale", "off"}, "-mm-router"},
		{[]string{"-mm-model", "llama", "-mm-scale", "rl"}, "-mm-scale"},
		{[]string{"-mm-model", "llama", "-mm-scale", "off", "-mm-router", "off"}, "nothing to answer"},
		{[]string{"-mm-scale", "monolith"}, "-mm-scale given without -mm-model"},
	} {
		c = daemon.Config{}
		if err := setMMFlags(&c, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error naming %s", tt.args, err, tt.want)
		}
	}
}

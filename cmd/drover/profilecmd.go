package main

import (
	"fmt"
	"io"

	"github.com/drover-sched/drover/env/profile"
)

func runProfile(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "fit" {
		fmt.Fprintln(stderr, "usage: drover profile fit [-o env/profile/builtin.json] POLLUX_APPS_DIR")
		return errUsage
	}
	fs := newFlags("profile fit", stderr)
	out := fs.String("o", "-", "output JSON file (- for stdout); env/profile/builtin.json is the embedded one")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover profile fit [flags] POLLUX_APPS_DIR\n\nFits the compact per-model parameters embedded in the binary from the measured\nPollux profiles (e.g. ../shared/traces/pollux_apps).")
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	ms, err := profile.LoadAll(fs.Arg(0))
	if err != nil {
		return err
	}
	ps := make(map[string]profile.Params, len(ms))
	for n, m := range ms {
		ps[n] = profile.Fit(m)
	}
	if *out == "-" {
		return profile.WriteBuiltinJSON(stdout, ps)
	}
	return writeFile(*out, func(f io.Writer) error { return profile.WriteBuiltinJSON(f, ps) })
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/env/profile"
	"github.com/drover-sched/drover/internal/progress"
)

// runProfile is `drover profile fit`: it fits profile.Params to every
// measured model profile under a directory (one subdirectory per model,
// pollux_apps' layout) and writes them as JSON. It says which models it
// fits, shows a progress bar on stderr, and refuses a directory with no
// model profile in it rather than writing an empty {}.
func runProfile(args []string, stdout, stderr io.Writer) error {
	const usage = "usage: drover profile fit [-o env/profile/builtin.json] POLLUX_APPS_DIR\n\nSubcommands:\n  fit   fit the embedded per-model profile parameters from measured Pollux profiles\n\nRun \"drover profile fit -h\" for its flags."
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, usage)
		return flag.ErrHelp
	}
	if len(args) == 0 || args[0] != "fit" {
		fmt.Fprintln(stderr, usage)
		return errUsage
	}
	fs := newFlags("profile fit", stderr)
	out := fs.String("o", "-", "output JSON file (- for stdout); env/profile/builtin.json is the embedded one")
	quiet := fs.Bool("quiet", false, "no progress output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover profile fit [flags] POLLUX_APPS_DIR\n\nFits the compact per-model parameters embedded in the binary from the measured\nPollux profiles (e.g. ../shared/traces/pollux_apps: one subdirectory per model\nwith placements.csv, scalability.csv and validation-<batch size>.csv).")
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	root := fs.Arg(0)
	models, err := profileDirs(root)
	if err != nil {
		return err
	}
	log := stderr
	if *quiet {
		log = io.Discard
	}
	fmt.Fprintf(log, "fitting %d model profiles from %s: %s\n", len(models), root, strings.Join(models, ", "))
	bar := progress.New(log, "profile fit", len(models))
	ps := make(map[string]profile.Params, len(models))
	for i, name := range models {
		m, err := profile.Load(filepath.Join(root, name))
		if err != nil {
			return err
		}
		ps[m.Name()] = profile.Fit(m)
		bar.Set(i + 1)
	}
	bar.Finish()
	if *out == "-" {
		return profile.WriteBuiltinJSON(stdout, ps)
	}
	if err := writeFile(*out, func(f io.Writer) error { return profile.WriteBuiltinJSON(f, ps) }); err != nil {
		return err
	}
	fmt.Fprintf(log, "wrote %d fitted profiles to %s\n", len(ps), *out)
	return nil
}

// errNoProfiles is what profileDirs returns for a directory without a
// model profile in it.
var errNoProfiles = errors.New("no model profiles")

// profileDirs lists the model profiles under root: its subdirectories, as
// profile.LoadAll reads them, in name order. A root without one is an
// error naming it and the layout it wants.
func profileDirs(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("profile fit: %w", err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("profile fit: %w in %s: want one subdirectory per model with placements.csv, scalability.csv and validation-<batch size>.csv (as ../shared/traces/pollux_apps)", errNoProfiles, root)
	}
	return dirs, nil
}

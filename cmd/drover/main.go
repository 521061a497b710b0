package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"sim", "replay a workload in the cluster simulator under a policy", runSim},
		{"trace", "inspect, convert and synthesize workloads (inspect|convert|synth)", runTrace},
		{"profile", "fit the embedded model profiles from measurements (fit)", runProfile},
		{"train", "train a policy: strn-rl and sas-rl (behaviour cloning, PPO, DQN; --from-log), placement and sync PPO, CartPole's known answers", runTrain},
		{"calibrate", "compare the per-worker slowdown process with the PAI mini-batch data", runCalibrate},
		{"forecast", "score SAS's learned node-load forecaster against the window, or refit it (eval|fit)", runForecast},
		{"serve", "serve placement decisions over gRPC (heuristic fallback, learned checkpoints)", runServe},
		{"place", "ask a drover server where a job goes (or -status)", runPlace},
		{"eval", "compare policies over seeds (table, plots, JSON), or summarise a decision log (--log)", runEval},
		{"agent", "stream this node's telemetry (CPU, memory pressure, network, GPUs) and jobs' iteration times to a drover server", runAgent},
		{"bench", "open-loop load generator for a drover server (bench place: latency from intended send times, CPU per request)", runBench},
		{"help", "show this help", nil},
	}
}

// errUsage marks an error already explained by a usage message.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// The main job on the embedded default: a simulation of the
		// built-in workload.
		args = []string{"sim"}
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == name && c.run != nil {
			err := c.run(rest, stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			}
			fmt.Fprintf(stderr, "drover %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "drover: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Drover: straggler-aware scheduling for distributed DL training.")
	fmt.Fprintln(w, "\nUsage: drover <command> [flags]   (no command: drover sim on the built-in workload)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"drover <command> -h\" for a command's flags.")
}

// newFlags returns a flag set that reports errors as errUsage.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("drover "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

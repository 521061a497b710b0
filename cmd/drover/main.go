package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"sim", "replay a workload in the cluster simulator under a policy (sim FILE = sim --workload FILE)", runSim},
		{"trace", "inspect, convert and synthesize workloads (inspect|convert|synth)", runTrace},
		{"infer", "LLM inference serving: replay a request trace on prefill/decode instances under a router (sim), compare routers over seeds (eval), multimodal serving (mm) and autoscaling (mmscale)", runInfer},
		{"profile", "fit the embedded model profiles from measurements (fit)", runProfile},
		{"train", "train a policy: strn-rl and sas-rl (behaviour cloning, PPO, DQN; --from-log), placement and sync PPO, CartPole's known answers", runTrain},
		{"calibrate", "check the per-worker straggler model's two calibrations (PAI mini-batch times; STRET's dedicated-GPU inflation), PASS/FAIL; --convergence: the convergence model's fits against their data, a PNG per family", runCalibrate},
		{"forecast", "score SAS's learned node-load forecaster against the window, or refit it (eval|fit)", runForecast},
		{"serve", "serve decisions over gRPC: placements (STRN/SAS on the agents' live telemetry), LLM request routes, multimodal routes and pool sizes; learned checkpoints in shadow behind a gate", runServe},
		{"place", "ask a drover server where a job goes (or -status)", runPlace},
		{"eval", "compare policies over seeds (table, plots, JSON); summarise a decision log (--log), or re-score a recorded run (--log --policies)", runEval},
		{"agent", "stream this node's telemetry (CPU, memory pressure, network, GPUs) and jobs' iteration times to a drover server", runAgent},
		{"bench", "open-loop load generator for a drover server (bench place: latency from intended send times, CPU per request)", runBench},
		{"version", "print the version, the VCS revision and the Go version", runVersion},
		{"help", "show this help, or a command's flags (help COMMAND)", nil},
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
	switch name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			// drover help CMD [SUB] is drover CMD [SUB] -h.
			return run(append(rest[:len(rest):len(rest)], "-h"), stdout, stderr)
		}
		usage(stdout)
		return 0
	case "-version", "--version":
		name = "version"
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
			// An error may carry its own exit status (drover place: 3 when
			// the job was not placed).
			var ec interface{ ExitCode() int }
			if errors.As(err, &ec) {
				return ec.ExitCode()
			}
			return 1
		}
	}
	fmt.Fprintf(stderr, "drover: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Drover: straggler-aware scheduling for distributed DL training, and routing and scaling for LLM inference.")
	fmt.Fprintln(w, "\nUsage: drover <command> [flags]   (no command: drover sim on the built-in workload)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"drover help <command>\" or \"drover <command> -h\" for a command's flags; \"drover --version\" for the version.")
}

// runVersion prints the module version, the VCS revision and time when
// the binary was built from a checkout, and the Go version.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprint(stdout, versionText(bi, ok))
	return nil
}

// versionText formats build information for drover version.
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "drover (no build information)\n"
	}
	var b strings.Builder
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	path := bi.Main.Path
	if path == "" {
		path = "github.com/drover-sched/drover"
	}
	fmt.Fprintf(&b, "drover %s\nmodule   %s\n", v, path)
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if r := set["vcs.revision"]; r != "" {
		if set["vcs.modified"] == "true" {
			r += " (modified)"
		}
		fmt.Fprintf(&b, "revision %s\n", r)
	}
	if t := set["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "time     %s\n", t)
	}
	fmt.Fprintf(&b, "go       %s\n", bi.GoVersion)
	return b.String()
}

// operands names the flag sets of the commands that take positional
// arguments; they check them themselves. parse refuses positional
// arguments for every other command.
var operands = map[string]bool{
	"drover sim":           true, // drover sim FILE is drover sim --workload FILE
	"drover trace inspect": true,
	"drover trace convert": true,
	"drover profile fit":   true,
	"drover forecast eval": true,
	"drover forecast fit":  true,
	"drover calibrate":     true,
	"drover bench plot":    true, // its reports
	"drover agent":         true,
	"drover serve":         true,
}

// newFlags returns a flag set that reports errors as errUsage.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("drover "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args into fs. Errors are errUsage (explained on fs's
// output), flag.ErrHelp, or a numeric flag outside its rule's range
// (checkNumbers, naming the flag). Positional arguments are refused,
// naming them, unless the command takes them (operands).
func parse(fs *flag.FlagSet, args []string) error {
	mustHaveRules(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if err := checkNumbers(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 && !operands[fs.Name()] {
		return unexpectedArgs(fs, fs.Args())
	}
	return nil
}

// unexpectedArgs explains on fs's output that args were not expected and
// returns errUsage.
func unexpectedArgs(fs *flag.FlagSet, args []string) error {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	word := "argument"
	if len(args) > 1 {
		word += "s"
	}
	fmt.Fprintf(fs.Output(), "%s: unexpected %s %s (run \"%s -h\" for its usage)\n",
		fs.Name(), word, strings.Join(q, " "), fs.Name())
	return errUsage
}

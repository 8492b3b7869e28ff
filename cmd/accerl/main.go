// Command accerl runs reinforcement-learning experiments described in HCL as durable
// Temporal workflows. See `accerl --help` and the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const usage = `accerl — asynchronous reinforcement learning experiments as durable workflows.

accerl is AcceRL (distributed asynchronous RL with world models for vision-language-action
policies) as an experiment engine. You describe an experiment in one HCL file: a base
configuration (environment, policy, algorithm, pipeline), ablation arms that change parts of it,
seeds and a budget. accerl runs every arm × seed as a Temporal workflow that trains in segments,
checkpoints after each one, survives crashes (run the same command again to resume), and writes a
report with learning curves and throughput figures.

Usage:
  accerl <command> [flags] [args]

Commands:
  validate FILE     check a spec; print each problem with file:line:col and how to fix it
  plan FILE         list the runs (arm × seed) a spec expands to, and its hash
  run FILE          run an experiment (starts an embedded Temporal server, with its Web UI on
                    http://127.0.0.1:8233, unless --temporal; --ui-port N, --no-ui)
  status            list experiments and runs with their state and counters
  pause|resume|stop EXPERIMENT-ID|NAME|FILE
                    pause runs before their next segment, resume them, or stop them cleanly
                    (the ID as status prints it, or the name when one running experiment has it)
  report DIR        regenerate the report of an experiment directory from stored metrics
  export DIR        write runs' metrics and episodes as Parquet (nulls, not NaN) or TensorBoard files
  worker            run a worker only (joins an existing Temporal server via --temporal)
  server            run the embedded Temporal server and its Web UI only; --ip ADDR lets other
                    hosts reach it, with TLS (--tls-cert, --tls-key; --tls-ca requires client
                    certificates) or, on a network you trust, --insecure
  envserver         serve accerl's simulators over dm_env_rpc (gRPC) for env "remote" blocks
                    and Python clients (--listen 127.0.0.1:7000; other addresses with TLS:
                    --tls-cert, --tls-key, --tls-ca for mutual TLS; or --insecure)
  bench throughput  measure async vs sync env steps/s on the same slow-simulator workload
  bench learn       train named learning checks (cartpole-ppo, acrobot-gipo, ...) over seeds
  bench sample-efficiency
                    online env steps to a target return with and without the world model
  bench expert      success rate and env steps/s of the scripted tabletop expert per suite
  bench kernels     GFLOP/s of the matrix products (reference f64, f32 CPU, OpenBLAS, cuBLAS)
  bench vla         micro-VLA size, memory and act/train speed with the slim vs full LM head
  bench bc          behaviour cloning of the tabletop expert and its success rate
  bench pixel-wm    train the pixel world model (M_obs frames, M_rew success/end) on offline
                    tabletop episodes; held-out imagined MSE vs copy-last, accuracy, reward error
  render            write an episode of a tabletop task as PNG frames and a contact sheet
  demos             record the scripted expert's demonstrations of a tabletop suite (Arrow IPC)
  version           print accerl's version and the Temporal and Arrow modules it is built with

Commands that dial a server with --temporal take --tls-ca (verify it), --tls-cert and --tls-key
(a client certificate, when it asks for one).

Run 'accerl <command> --help' for a command's flags. Find runs by arm, seed, experiment or spec
hash with the search attributes AccerlArm, AccerlSeed, AccerlExperiment and AccerlSpecHash:
  temporal workflow list --address $(cat .accerl/server.addr) --query 'AccerlArm="base"'

Quick start:
  go run ./cmd/accerl run examples/quickstart.hcl
`

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	if err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec))
		}
		fmt.Fprintln(os.Stderr, "accerl:", err)
		os.Exit(1)
	}
}

// exitCode is an error that only sets the process exit status (its message was already shown).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// run dispatches one command line. It is main without the process: tests call it directly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		// No command is a usage error: print the usage where errors go and fail, so a
		// script that lost its arguments does not carry on as if accerl had run.
		fmt.Fprint(stderr, usage)
		return exitCode(2)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "validate":
		return cmdValidate(ctx, rest, stdout, stderr)
	case "plan":
		return cmdPlan(ctx, rest, stdout, stderr)
	case "run":
		return cmdRun(ctx, rest, stdout, stderr)
	case "status":
		return cmdStatus(ctx, rest, stdout, stderr)
	case "pause", "resume", "stop":
		return cmdControl(ctx, cmd, rest, stdout, stderr)
	case "report":
		return cmdReport(ctx, rest, stdout, stderr)
	case "export":
		return cmdExport(ctx, rest, stdout, stderr)
	case "worker":
		return cmdWorker(ctx, rest, stdout, stderr)
	case "server":
		return cmdServer(ctx, rest, stdout, stderr)
	case "envserver":
		return cmdEnvServer(ctx, rest, stdout, stderr)
	case "bench":
		return cmdBench(ctx, rest, stdout, stderr)
	case "render":
		return cmdRender(ctx, rest, stdout, stderr)
	case "demos":
		return cmdDemos(ctx, rest, stdout, stderr)
	case "version":
		return cmdVersion(ctx, rest, stdout, stderr)
	default:
		return fmt.Errorf("unknown command %q; run 'accerl --help' for the list", cmd)
	}
}

// newFlagSet returns a FlagSet whose usage prints a summary line and the flags.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: accerl %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// oneArg checks that fs was given exactly one positional argument, what it is called in
// the message ("spec file"). Without one it prints the command's usage; with more it says
// that the command takes one. Either way the exit status is 2.
func oneArg(fs *flag.FlagSet, what string, stderr io.Writer) error {
	switch fs.NArg() {
	case 1:
		return nil
	case 0:
		fs.Usage()
	default:
		fmt.Fprintf(stderr, "accerl %s takes one %s, but was given %d: %s\nRun 'accerl %s --help' for its usage.\n",
			fs.Name(), what, fs.NArg(), strings.Join(fs.Args(), " "), fs.Name())
	}
	return exitCode(2)
}

// parseFlags parses args, turning -h into a clean exit. Flags may come before or after the
// positional arguments (`accerl run spec.hcl -var steps=1000` works); after "--" everything
// is positional.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitCode(0)
			}
			return exitCode(2)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Leave the positional arguments where fs.Args reads them.
	return fs.Parse(append([]string{"--"}, positional...))
}

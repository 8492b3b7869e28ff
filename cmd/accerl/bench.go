package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, `Usage: accerl bench <benchmark> [flags]

Benchmarks:
  throughput   async vs sync env steps/s on the same slow-simulator workload
  learn        final returns of named learning checks (e.g. cartpole-ppo) over several seeds
  sample-efficiency  online env steps to a target return with and without the world model
  expert       success rate, episode length and env steps/s of the scripted tabletop expert
  kernels      GFLOP/s of the GEMM shapes of the models on every available backend
  vla          micro-VLA parameters, training memory and act/train speed, slim vs full head
  bc           behaviour cloning of the tabletop expert: success from the fixed initial states
  pixel-wm     pixel world model on tabletop episodes: imagined-frame MSE, success/end classification

Run 'accerl bench <benchmark> --help' for its flags.
`)
		return exitCode(2)
	}
	switch args[0] {
	case "throughput":
		return benchThroughput(ctx, args[1:], stdout, stderr)
	case "learn":
		return benchLearn(ctx, args[1:], stdout, stderr)
	case "sample-efficiency":
		return benchSample(ctx, args[1:], stdout, stderr)
	case "expert":
		return benchExpert(ctx, args[1:], stdout, stderr)
	case "kernels":
		return benchKernels(ctx, args[1:], stdout, stderr)
	case "bc":
		return benchBC(ctx, args[1:], stdout, stderr)
	case "vla":
		return benchVLA(ctx, args[1:], stdout, stderr)
	case "pixel-wm":
		return benchPixelWM(ctx, args[1:], stdout, stderr)
	default:
		return fmt.Errorf("unknown benchmark %q; choose throughput, learn, sample-efficiency, expert, kernels, vla or bc, or pixel-wm (the pixel world model)", args[0])
	}
}

func benchThroughput(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := activities.ThroughputBench()
	lat := activities.ThroughputLatency
	fs := newFlagSet("bench throughput", "bench throughput [flags]   — run the same workload in sync and async mode, interleaved, and compare env steps/s", stderr)
	workers := fs.Int("workers", def.Config.Workers, "rollout workers")
	envs := fs.Int("envs-per-worker", def.Config.EnvsPerWorker, "environments per worker")
	latKind := fs.String("latency", lat.Kind, "simulated step latency: none, constant or lognormal")
	median := fs.Duration("median", lat.Median, "latency median (constant: the delay)")
	sigma := fs.Float64("sigma", lat.Sigma, "lognormal shape σ; larger means a heavier tail")
	slowFrac := fs.Float64("slow-fraction", lat.SlowFraction, "fraction of workers that are slow")
	slowFactor := fs.Float64("slow-factor", lat.SlowFactor, "how many times slower the slow workers are")
	batch := fs.Int("batch-steps", def.Config.BatchSteps, "env steps per trainer update")
	maxBatch := fs.Int("max-batch", def.Config.MaxBatch, "inference batch fires at this many queued requests")
	maxWait := fs.Duration("max-wait", def.Config.MaxWait.Std(), "inference batch fires when the oldest request waited this long (0: whatever queued during the previous batch; see 'go doc ./activities/engine DefaultBenchConfig')")
	rounds := fs.Int("rounds", def.Rounds, "sync/async phase pairs")
	phase := fs.Duration("phase", def.PhaseDuration.Std(), "wall time of one phase")
	seed := fs.Uint64("seed", def.Config.Seed, "random seed")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	remote := fs.String("remote", "", "N, or comma-separated host:port of `accerl envserver`s. N starts N envservers on this host and compares the same environments (--env) in process and behind them over dm_env_rpc, once per --compression: steps/s, bytes per step, step round trips. Addresses step the CartPoles on those servers instead of in process (environment i on server i mod N); the --latency flags then do not apply, the servers' own speed and the network's round trips do")
	remoteEnv := fs.String("env", "cartpole", "with --remote N: the environments, cartpole or tabletop (spatial suite, both cameras' 32×32 images in every step)")
	compress := fs.String("compression", "none,gzip", "with --remote N: comma-separated wire compressions to measure, of none and gzip (level 1)")
	netns := fs.Bool("netns", false, "with --remote N: start each envserver in a Linux network namespace of its own and measure from another, joined by veth pairs to a bridge (addresses "+benchNetSubnet+"0/24 exist only inside them), so that steps cross a real network stack instead of loopback; needs root and iproute2")
	serversAt := fs.String("servers-at", "", "with --remote N: comma-separated host:port of N running envservers to measure against instead of starting them (what --netns passes to the measurement it runs in its namespace)")
	network := fs.String("network", "", "with --servers-at: where those envservers are, for the output and the JSON's network field (loopback or netns)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if n, err := strconv.Atoi(*remote); err == nil {
		if n < 1 || n > 64 {
			return fmt.Errorf("bench throughput: --remote %d: start 1 to 64 envservers", n)
		}
		var comps []string
		for _, c := range strings.Split(*compress, ",") {
			c = strings.TrimSpace(c)
			if c != specs.CompressionNone && c != specs.CompressionGzip {
				return fmt.Errorf("bench throughput: --compression %q: choose none or gzip (or both: none,gzip)", c)
			}
			comps = append(comps, c)
		}
		o := remoteBenchOptions{Servers: n, Env: *remoteEnv, Compressions: comps, Rounds: *rounds, Phase: *phase, JSON: *jsonOut,
			NetNS: *netns, Network: *network}
		if *serversAt != "" {
			o.ServersAt = strings.Split(*serversAt, ",")
			if len(o.ServersAt) != n {
				return fmt.Errorf("bench throughput: --servers-at names %d envservers, --remote %d", len(o.ServersAt), n)
			}
		}
		return benchRemote(ctx, o, stdout)
	}
	cfg := def
	c := &cfg.Config
	c.Workers, c.EnvsPerWorker, c.BatchSteps, c.MaxBatch, c.MaxWait, c.Seed = *workers, *envs, *batch, *maxBatch, jsondur.Duration(*maxWait), *seed
	l := testenv.Latency{Kind: *latKind, Median: *median, Sigma: *sigma, SlowFraction: *slowFrac, SlowFactor: *slowFactor}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("bench throughput: %w", err)
	}
	env := specs.Env{Kind: specs.EnvCartPole}
	cfg.Workload = fmt.Sprintf("cartpole, %s step latency median %v sigma %g, %.0f%% of workers %gx slower", l.Kind, l.Median, l.Sigma, 100*l.SlowFraction, l.SlowFactor)
	if *remote != "" {
		env.Remote = &specs.Remote{}
		for _, a := range strings.Split(*remote, ",") {
			if _, _, err := net.SplitHostPort(strings.TrimSpace(a)); err != nil {
				return fmt.Errorf("bench throughput: --remote %q is not host:port (e.g. 127.0.0.1:7000, from `accerl envserver`): %v", a, err)
			}
			env.Remote.Addresses = append(env.Remote.Addresses, strings.TrimSpace(a))
		}
		l = testenv.Latency{}
		cfg.Workload = fmt.Sprintf("cartpole on %d remote envserver(s) over dm_env_rpc: %s", len(env.Remote.Addresses), *remote)
	}
	cfg.Envs = func(c activities.EngineSettings) activities.Envs {
		e := env
		e.MaxEpisodeSteps = c.MaxEpisodeSteps
		return activities.LatencyEnvFactory(e, l, c.Workers, c.EnvsPerWorker, c.Seed)
	}
	cfg.Rounds, cfg.PhaseDuration = *rounds, jsondur.Duration(*phase)
	fmt.Fprintf(stdout, "Workload: %d envs (%d workers × %d), %s, batch %d steps, max_batch %d, max_wait %v\n",
		c.NumEnvs(), c.Workers, c.EnvsPerWorker, cfg.Workload, c.BatchSteps, c.MaxBatch, c.MaxWait)
	fmt.Fprintf(stdout, "Running %d × (sync, async) phases of %v each...\n", cfg.Rounds, cfg.PhaseDuration)
	cfg.OnPhase = func(p activities.ThroughputPhase) {
		fmt.Fprintf(stdout, "  round %d %-5s %8.0f steps/s\n", p.Round+1, p.Mode, p.Stats.StepsPerS)
	}
	res, err := activities.BenchThroughput(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tsteps/s\tceiling steps/s\tfraction of ceiling\tmean batch\tmean waiting\tbatch share\tp50 wait ms\tp99 wait ms\ttrainer busy\t")
	for _, m := range []struct {
		name string
		b    activities.ThroughputMode
	}{{"sync", res.Sync}, {"async", res.Async}} {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f%%\t%.2f\t%.2f\t%.1f%%\t%.3f\t%.3f\t%.1f%%\t\n", m.name, m.b.StepsPerS, m.b.CeilingStepsPerS,
			100*m.b.CeilingFraction, m.b.MeanBatch, m.b.MeanWaitingAtBatch, 100*m.b.BatchShare, m.b.P50WaitMs, m.b.P99WaitMs, 100*m.b.TrainerBusy)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nasync/sync throughput ratio: %.2f×\n", res.Ratio)
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, res)
	}
	return nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// fmtDuration prints a duration rounded for tables.
func fmtDuration(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

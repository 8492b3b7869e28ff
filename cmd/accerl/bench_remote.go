package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

// `accerl bench throughput --remote N` measures what the network tier costs: the same
// environments stepped in process, then behind N `accerl envserver` processes on this host
// (their own processes, reached over TCP on the loopback interface, so serialisation, the
// kernel's network stack and gRPC are all paid; a real network adds its round-trip time on
// top), once per wire compression. Each variant is a full sync/async comparison of
// engine.BenchThroughput, driven through the arm's resolved config as TrainSegment builds it.

// remoteBenchSpec is the arm a remote comparison trains: the env block and the policy's
// action head.
const remoteBenchSpec = `
experiment "bench-remote" {
  seeds = [1]
  budget { env_steps = 1000000 }
  %s
  policy {
    hidden = [64, 64]
    action = "%s"
  }
  algorithm "ppo" {
    batch_steps = 1024
    epochs      = 1
    minibatches = 4
  }
  pipeline {
    workers         = 8
    envs_per_worker = 4
  }
}
`

// remoteBenchEnvs are the env blocks --env picks and the action heads that suit them.
var remoteBenchEnvs = map[string][2]string{
	"cartpole": {`env "cartpole" {}`, "categorical"},
	"tabletop": {`env "tabletop" {
    suite      = "spatial"
    pixels     = true
    image_size = 32
  }`, "gaussian"},
}

// remoteVariant is one measured configuration.
type remoteVariant struct {
	Name        string                       `json:"name"` // in-process, or remote/<compression>
	Servers     int                          `json:"servers"`
	Compression string                       `json:"compression,omitempty"`
	Result      *activities.ThroughputResult `json:"result"`
	// Wire is the remote variants' traffic over both modes' phases; BytesPerStep is its
	// bytes sent and received per env step.
	Wire         *envrpc.MeterStats `json:"wire,omitempty"`
	BytesPerStep float64            `json:"bytes_per_step,omitempty"`
	// SyncRatio and AsyncRatio are this variant's steps/s over the in-process variant's.
	SyncRatio  float64 `json:"sync_ratio_to_in_process"`
	AsyncRatio float64 `json:"async_ratio_to_in_process"`
}

// remoteBenchResult is `bench throughput --remote N --json`'s file.
type remoteBenchResult struct {
	Env      string          `json:"env"`
	Servers  int             `json:"servers"`
	Envs     int             `json:"envs"`
	Variants []remoteVariant `json:"variants"`
	WallS    float64         `json:"wall_s"`
}

// envServerCommand makes the command that runs `accerl envserver ARGS`: this binary again
// (tests run their own binary as accerl instead).
var envServerCommand = func(args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, append([]string{"envserver"}, args...)...), nil
}

// servingAddr finds the address in envserver's first line ("… on 127.0.0.1:40123. Ctrl-C …").
var servingAddr = regexp.MustCompile(` on (\S+:\d+)\. Ctrl-C`)

// startEnvServers starts n envservers on free loopback ports and returns their addresses and
// a function that stops them.
func startEnvServers(n int) ([]string, func(), error) {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	var addrs []string
	for range n {
		cmd, err := envServerCommand("--listen", "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			stop()
			return nil, nil, err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, fmt.Errorf("start envserver: %w", err)
		}
		cmds = append(cmds, cmd)
		line := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			if sc.Scan() {
				line <- sc.Text()
			}
			close(line)
			_, _ = io.Copy(io.Discard, out)
		}()
		select {
		case l := <-line:
			m := servingAddr.FindStringSubmatch(l)
			if m == nil {
				stop()
				return nil, nil, fmt.Errorf("envserver said %q, not where it listens", l)
			}
			addrs = append(addrs, m[1])
		case <-time.After(30 * time.Second):
			stop()
			return nil, nil, errors.New("envserver did not say where it listens within 30 s")
		}
	}
	return addrs, stop, nil
}

// benchRemote runs the comparison for `bench throughput --remote N`.
func benchRemote(ctx context.Context, servers int, envName string, compressions []string, rounds int, phase time.Duration, jsonOut string, stdout io.Writer) error {
	block, ok := remoteBenchEnvs[envName]
	if !ok {
		return fmt.Errorf("bench throughput: --env %q: choose cartpole or tabletop (spatial, pixels 32×32, both cameras)", envName)
	}
	exp, diags := specs.Parse("bench-remote.hcl", []byte(fmt.Sprintf(remoteBenchSpec, block[0], block[1])), nil)
	if diags.HasErrors() {
		return fmt.Errorf("bench throughput: the remote workload's spec: %s", diags.Error())
	}
	c := exp.Arms[0].Config
	addrs, stop, err := startEnvServers(servers)
	if err != nil {
		return fmt.Errorf("bench throughput --remote: %w", err)
	}
	defer stop()
	res := remoteBenchResult{Env: envName, Servers: servers, Envs: c.Pipeline.Workers * c.Pipeline.EnvsPerWorker}
	start := time.Now()
	fmt.Fprintf(stdout, "Workload: %s, %d envs (%d workers × %d), MLP policy, no simulated latency; %d envserver(s) on this host: %s\n",
		envName, res.Envs, c.Pipeline.Workers, c.Pipeline.EnvsPerWorker, servers, strings.Join(addrs, ", "))
	variants := []remoteVariant{{Name: "in-process"}}
	for _, comp := range compressions {
		variants = append(variants, remoteVariant{Name: "remote/" + comp, Servers: servers, Compression: comp})
	}
	for i := range variants {
		v := &variants[i]
		vc := c
		var meter *envrpc.Meter
		if v.Servers > 0 {
			meter = &envrpc.Meter{}
			vc.Env.Remote = &specs.Remote{Addresses: addrs}
			if v.Compression != specs.CompressionNone {
				vc.Env.Remote.Compression = v.Compression
			}
		}
		cfg := activities.PipelineBenchMetered(vc, testenv.Latency{Kind: testenv.LatencyNone}, 1, envName+" "+v.Name, meter)
		cfg.Rounds, cfg.PhaseDuration = rounds, jsondur.Duration(phase)
		cfg.OnPhase = func(p activities.ThroughputPhase) {
			fmt.Fprintf(stdout, "  %-16s round %d %-5s %8.0f steps/s\n", v.Name, p.Round+1, p.Mode, p.Stats.StepsPerS)
		}
		r, err := activities.BenchThroughput(ctx, cfg)
		if err != nil {
			return fmt.Errorf("bench throughput --remote (%s): %w", v.Name, err)
		}
		v.Result = r
		if meter != nil {
			w := meter.Stats()
			v.Wire = &w
			if steps := r.Sync.EnvSteps + r.Async.EnvSteps; steps > 0 {
				v.BytesPerStep = float64(w.BytesSent+w.BytesReceived) / float64(steps)
			}
		}
		base := variants[0].Result
		v.SyncRatio, v.AsyncRatio = r.Sync.StepsPerS/base.Sync.StepsPerS, r.Async.StepsPerS/base.Async.StepsPerS
	}
	res.Variants, res.WallS = variants, time.Since(start).Seconds()

	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tsync steps/s\tasync steps/s\tsync vs in-process\tasync vs in-process\tbytes/step\tstep p50 ms\tstep p99 ms\t")
	for _, v := range variants {
		bytes, p50, p99 := "-", "-", "-"
		if v.Wire != nil {
			bytes, p50, p99 = fmt.Sprintf("%.0f", v.BytesPerStep), fmt.Sprintf("%.3f", v.Wire.P50StepMs), fmt.Sprintf("%.3f", v.Wire.P99StepMs)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f×\t%.2f×\t%s\t%s\t%s\t\n", v.Name, v.Result.Sync.StepsPerS, v.Result.Async.StepsPerS,
			v.SyncRatio, v.AsyncRatio, bytes, p50, p99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "(bytes/step: both directions, gRPC and HTTP/2 framing included; step times: one Step's round trip as the client sees it, both modes; %.0f s)\n", res.WallS)
	if jsonOut != "" {
		return writeJSONFile(jsonOut, res)
	}
	return nil
}

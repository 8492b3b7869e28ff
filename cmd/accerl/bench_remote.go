package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	Env     string `json:"env"`
	Servers int    `json:"servers"`
	// Network is where the envservers ran: "loopback" (this host's loopback) or "netns"
	// (network namespaces joined by veth pairs to a bridge).
	Network  string          `json:"network"`
	Envs     int             `json:"envs"`
	Variants []remoteVariant `json:"variants"`
	WallS    float64         `json:"wall_s"`
}

// accerlCommand makes the command that runs `accerl ARGS`: this binary again (tests run their
// own binary as accerl instead).
var accerlCommand = func(args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, args...), nil
}

// inNamespace is cmd run inside the network namespace ns (`ip netns exec`), with cmd's
// environment.
func inNamespace(cmd *exec.Cmd, ns string) *exec.Cmd {
	c := exec.Command("ip", append([]string{"netns", "exec", ns, cmd.Path}, cmd.Args[1:]...)...)
	c.Env = cmd.Env
	return c
}

// servingAddr finds the address in envserver's first line ("… on 127.0.0.1:40123. Ctrl-C …").
var servingAddr = regexp.MustCompile(` on (\S+:\d+)\. Ctrl-C`)

// startEnvServers starts n envservers on free loopback ports and returns their addresses and
// a function that stops them.
func startEnvServers(n int) ([]string, func(), error) {
	return startEnvServersWith(n, func(int) (*exec.Cmd, error) {
		return accerlCommand("envserver", "--listen", "127.0.0.1:0")
	})
}

// startEnvServersWith starts the n envservers that command(i) makes, and returns the addresses
// they say they listen on and a function that stops them.
func startEnvServersWith(n int, command func(i int) (*exec.Cmd, error)) ([]string, func(), error) {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	var addrs []string
	for i := range n {
		cmd, err := command(i)
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

// remoteBenchOptions are the flags of `bench throughput --remote N`.
type remoteBenchOptions struct {
	Servers      int
	Env          string
	Compressions []string
	Rounds       int
	Phase        time.Duration
	JSON         string
	// NetNS puts the envservers and the measurement in network namespaces of their own
	// (netLab), so that every step crosses veth pairs and a bridge instead of loopback.
	NetNS bool
	// ServersAt are running envservers to measure against instead of starting Servers of
	// them, and Network says where they are (what NetNS passes to the measurement it runs
	// inside its namespace).
	ServersAt []string
	Network   string
}

// Networks of remoteBenchResult.
const (
	networkLoopback = "loopback"
	networkNetNS    = "netns"
)

// benchNetSubnet is the /24 of the namespaces of `bench throughput --remote N --netns`; it
// exists only inside them.
const benchNetSubnet = "10.78.0."

// benchRemoteNetns starts o.Servers envservers, each in a network namespace of its own, and
// runs the measurement in another namespace of the same lab against them.
func benchRemoteNetns(ctx context.Context, o remoteBenchOptions, stdout io.Writer) error {
	if err := canNetLab(); err != nil {
		return fmt.Errorf("bench throughput --netns: %v; run as root, or drop --netns to measure over loopback", err)
	}
	prefix := fmt.Sprintf("accerlb%d-", os.Getpid()%100000)
	hosts := []netHost{{Name: "bench", IP: benchNetSubnet + "1"}}
	for i := range o.Servers {
		hosts = append(hosts, netHost{Name: fmt.Sprintf("env%d", i), IP: fmt.Sprintf("%s%d", benchNetSubnet, i+2)})
	}
	lab, err := newNetLab(prefix, hosts)
	if err != nil {
		return fmt.Errorf("bench throughput --netns: %w", err)
	}
	defer lab.Close()
	addrs, stop, err := startEnvServersWith(o.Servers, func(i int) (*exec.Cmd, error) {
		h := hosts[i+1]
		c, err := accerlCommand("envserver", "--listen", h.IP+":7000", "--insecure")
		if err != nil {
			return nil, err
		}
		return inNamespace(c, prefix+h.Name), nil
	})
	if err != nil {
		return fmt.Errorf("bench throughput --netns: %w", err)
	}
	defer stop()
	args := []string{"bench", "throughput", "--remote", strconv.Itoa(o.Servers), "--servers-at", strings.Join(addrs, ","),
		"--network", networkNetNS, "--env", o.Env, "--compression", strings.Join(o.Compressions, ","),
		"--rounds", strconv.Itoa(o.Rounds), "--phase", o.Phase.String()}
	if o.JSON != "" {
		abs, err := filepath.Abs(o.JSON)
		if err != nil {
			return err
		}
		args = append(args, "--json", abs)
	}
	c, err := accerlCommand(args...)
	if err != nil {
		return err
	}
	c = inNamespace(c, prefix+"bench")
	c.Stdout, c.Stderr = stdout, os.Stderr
	if err := c.Start(); err != nil {
		return fmt.Errorf("bench throughput --netns: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("bench throughput --netns: the measurement in namespace %sbench: %w", prefix, err)
		}
		return nil
	case <-ctx.Done():
		_ = c.Process.Kill()
		<-done
		return ctx.Err()
	}
}

// benchRemote runs the comparison for `bench throughput --remote N`.
func benchRemote(ctx context.Context, o remoteBenchOptions, stdout io.Writer) error {
	if o.NetNS {
		return benchRemoteNetns(ctx, o, stdout)
	}
	servers, envName, compressions, rounds, phase, jsonOut := o.Servers, o.Env, o.Compressions, o.Rounds, o.Phase, o.JSON
	block, ok := remoteBenchEnvs[envName]
	if !ok {
		return fmt.Errorf("bench throughput: --env %q: choose cartpole or tabletop (spatial, pixels 32×32, both cameras)", envName)
	}
	exp, diags := specs.Parse("bench-remote.hcl", []byte(fmt.Sprintf(remoteBenchSpec, block[0], block[1])), nil)
	if diags.HasErrors() {
		return fmt.Errorf("bench throughput: the remote workload's spec: %s", diags.Error())
	}
	c := exp.Arms[0].Config
	addrs, network := o.ServersAt, cmp.Or(o.Network, networkLoopback)
	if len(addrs) == 0 {
		var stop func()
		var err error
		if addrs, stop, err = startEnvServers(servers); err != nil {
			return fmt.Errorf("bench throughput --remote: %w", err)
		}
		defer stop()
	}
	res := remoteBenchResult{Env: envName, Servers: len(addrs), Envs: c.Pipeline.Workers * c.Pipeline.EnvsPerWorker, Network: network}
	start := time.Now()
	where := "on this host over loopback"
	if network == networkNetNS {
		where = "each in a network namespace of its own, the measurement in another (veth pairs and a bridge)"
	}
	fmt.Fprintf(stdout, "Workload: %s, %d envs (%d workers × %d), MLP policy, no simulated latency; %d envserver(s) %s: %s\n",
		envName, res.Envs, c.Pipeline.Workers, c.Pipeline.EnvsPerWorker, len(addrs), where, strings.Join(addrs, ", "))
	variants := []remoteVariant{{Name: "in-process"}}
	for _, comp := range compressions {
		variants = append(variants, remoteVariant{Name: "remote/" + comp, Servers: len(addrs), Compression: comp})
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

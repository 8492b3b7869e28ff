package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// netLab is a set of Linux network namespaces standing for separate hosts: each joined by a
// veth pair to a bridge in a hub namespace of its own, with an address only inside it
// (nothing is added to the machine's own namespace, so no route of the machine changes).
// Packets between two of them cross a real network stack (two veth pairs and a bridge), not
// loopback. It needs root and Debian's iproute2 (`ip`). `bench throughput --remote N --netns`
// and the multi-host test build one.
type netLab struct {
	prefix string
	names  []string // created namespaces, hub first
}

// netHost is one host of a netLab: its namespace (without the lab's prefix) and address.
type netHost struct{ Name, IP string }

// canNetLab says why network namespaces cannot be made here, or nil if they can.
func canNetLab() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("no ip command: install Debian's iproute2")
	}
	probe := fmt.Sprintf("accerl-probe-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return fmt.Errorf("cannot create network namespaces here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return nil
}

// newNetLab creates the hub and one namespace per host, named prefix+host.Name, each with
// host.IP/24 on its end of a veth pair. Close deletes them all; on an error the ones made so
// far are deleted already.
func newNetLab(prefix string, hosts []netHost) (lab *netLab, err error) {
	lab = &netLab{prefix: prefix}
	defer func() {
		if err != nil {
			lab.Close()
		}
	}()
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	hub := prefix + "hub"
	if err := ip("netns", "add", hub); err != nil {
		return nil, err
	}
	lab.names = append(lab.names, hub)
	if err := ip("-n", hub, "link", "add", "br0", "type", "bridge"); err != nil {
		return nil, err
	}
	if err := ip("-n", hub, "link", "set", "br0", "up"); err != nil {
		return nil, err
	}
	for i, h := range hosts {
		ns := prefix + h.Name
		if err := ip("netns", "add", ns); err != nil {
			return nil, err
		}
		lab.names = append(lab.names, ns)
		dev, side := fmt.Sprintf("eth%d", i), fmt.Sprintf("v%d", i)
		for _, args := range [][]string{
			{"-n", ns, "link", "set", "lo", "up"},
			{"-n", ns, "link", "add", dev, "type", "veth", "peer", "name", side, "netns", hub},
			{"-n", ns, "addr", "add", h.IP + "/24", "dev", dev},
			{"-n", ns, "link", "set", dev, "up"},
			{"-n", hub, "link", "set", side, "master", "br0"},
			{"-n", hub, "link", "set", side, "up"},
		} {
			if err := ip(args...); err != nil {
				return nil, err
			}
		}
	}
	return lab, nil
}

// Command makes the command that runs name args... on host (inside its namespace).
func (l *netLab) Command(host, name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", l.prefix + host, name}, args...)...)
}

// Close deletes the lab's namespaces (and with them their veth pairs and the bridge).
func (l *netLab) Close() {
	for _, n := range l.names {
		_ = exec.Command("ip", "netns", "del", n).Run()
	}
	l.names = nil
}

package specs

import (
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// EnvRemote is the label of an env block whose environments run on dm_env_rpc servers
// (`accerl envserver`, or any server of the protocol) instead of in process:
//
//	env "remote" {
//	  address  = "127.0.0.1:7000"           # or addresses = [...], spread round-robin
//	  world    = "tabletop"                 # the simulator the servers run
//	  settings = { suite = "spatial", pixels = true }
//	  tls_ca   = "ca.pem"                   # optional: TLS (envserver --tls-cert), and
//	  tls_cert = "client.pem"               # a client certificate for mutual TLS
//	  tls_key  = "client.key"
//	}
//
// The world is one of the in-process kinds, and the arm resolves as that kind (Env.Kind is
// the world) with Env.Remote set: every rule of the kind applies, and settings are the
// kind's own env attributes (a tabletop world's suite, task, tasks, image_size, cameras,
// pixels; none for the classic-control tasks).
const EnvRemote = "remote"

// Names in an env "remote" block.
const (
	attrAddress   = "address"
	attrAddresses = "addresses"
	attrWorld     = "world"
	attrSettings  = "settings"
	attrTLSCA     = "tls_ca"
	attrTLSCert   = "tls_cert"
	attrTLSKey    = "tls_key"
	attrCompress  = "compression"
)

// Remote says where an arm's environments run when they are stepped over dm_env_rpc.
type Remote struct {
	// Addresses are the servers' host:port; rollout environment i (and the evaluation
	// environment, numbered after them) runs on Addresses[i mod len(Addresses)].
	Addresses []string `json:"addresses"`
	// TLSCA, TLSCert and TLSKey are PEM files, relative to the working directory of the
	// process that steps the environments (a worker): TLSCA makes the connections TLS and
	// verifies the servers' certificates against it (`accerl envserver --tls-cert`); TLSCert
	// and TLSKey present a client certificate to servers that require one (--tls-ca).
	// Omitted from the JSON while empty, so specs without them keep their hash.
	TLSCA   string `json:"tls_ca,omitempty"`
	TLSCert string `json:"tls_cert,omitempty"`
	TLSKey  string `json:"tls_key,omitempty"`
	// Compression is "gzip" to compress every message on the wire (gzip level 1, both
	// ways: rendered images shrink about 5×, at some CPU per step), or "" for none (HCL
	// "none", the default). Omitted from the JSON while empty.
	Compression string `json:"compression,omitempty"`
}

// Compression values of an env "remote" block.
const (
	CompressionNone = "none"
	CompressionGzip = "gzip"
)

var remoteSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrAddress},
		{Name: attrAddresses},
		{Name: attrWorld},
		{Name: attrSettings},
		{Name: attrMaxEpisodeSteps},
		{Name: attrTLSCA},
		{Name: attrTLSCert},
		{Name: attrTLSKey},
		{Name: attrCompress},
	},
}

// worldKinds are the worlds an env "remote" block may name: the in-process kinds.
func worldKinds() []string {
	return slices.DeleteFunc(envKinds(), func(k string) bool { return k == EnvRemote })
}

// decodeRemote applies an env "remote" block onto e. An ablation's remote block inherits
// the world and addresses of a remote arm it modifies; over a local one it must name both.
func (d *decoder) decodeRemote(block *hcl.Block, e *Env) {
	c := d.content(block.Body, remoteSchema)
	world := ""
	if e.Remote != nil {
		world = e.Kind
		cp := *e.Remote
		cp.Addresses = slices.Clone(e.Remote.Addresses)
		e.Remote = &cp
	} else {
		e.Remote = &Remote{}
	}
	if attr, ok := c.Attributes[attrWorld]; ok {
		d.setEnum(c.Attributes, blockEnv, attrWorld, &world, worldKinds())
		d.src.record(pathEnvKind, attr.Expr.Range())
	}
	if world == "" {
		if _, ok := c.Attributes[attrWorld]; !ok {
			d.errorf(block.DefRange, nil, "Missing world",
				"An env \"remote\" block names the simulator its servers run: add world = one of %s.", quoteList(worldKinds()))
		}
		return
	}
	e.Kind = world
	d.decodeAddresses(block, c.Attributes, e.Remote)
	d.setString(c.Attributes, blockEnv, attrTLSCA, &e.Remote.TLSCA)
	d.setString(c.Attributes, blockEnv, attrTLSCert, &e.Remote.TLSCert)
	d.setString(c.Attributes, blockEnv, attrTLSKey, &e.Remote.TLSKey)
	if _, ok := c.Attributes[attrCompress]; ok {
		comp := CompressionNone
		d.setEnum(c.Attributes, blockEnv, attrCompress, &comp, []string{CompressionNone, CompressionGzip})
		if e.Remote.Compression = comp; comp == CompressionNone {
			e.Remote.Compression = ""
		}
	}
	if r := e.Remote; (r.TLSCert == "") != (r.TLSKey == "") {
		attr := c.Attributes[attrTLSCert]
		if attr == nil {
			attr = c.Attributes[attrTLSKey]
		}
		if attr != nil {
			d.errorf(attr.NameRange, nil, "Client certificate without its pair",
				"env.tls_cert and env.tls_key go together: the certificate a client presents and its private key. Give both, or neither.")
		}
	}
	d.setInt(c.Attributes, blockEnv, attrMaxEpisodeSteps, &e.MaxEpisodeSteps, atLeast(1))
	settings := d.settingsAttributes(c.Attributes[attrSettings])
	var known []string
	if world == EnvTabletop {
		known = tabletopSettings
	}
	for _, name := range sortedKeys(settings) {
		if contains(known, name) {
			continue
		}
		attr := settings[name]
		if len(known) == 0 {
			d.errorf(attr.NameRange, nil, "Unsupported setting",
				"World %q has no settings (max_episode_steps is an attribute of the env block). Remove %s from settings.", world, name)
		} else {
			d.errorf(attr.NameRange, nil, "Unsupported setting",
				"World %q has no setting %s. Use some of: %s (max_episode_steps is an attribute of the env block).", world, name, quoteList(known))
		}
		delete(settings, name)
	}
	if world == EnvTabletop {
		d.decodeTabletop(settings, e)
	}
}

// tabletopSettings are the settings of world "tabletop": the tabletop env attributes.
var tabletopSettings = []string{attrSuite, attrTask, attrTasks, attrImageSize, attrCameras, attrPixels}

// decodeAddresses reads address or addresses into r; one of them is required unless r
// already has addresses (inherited).
func (d *decoder) decodeAddresses(block *hcl.Block, attrs hcl.Attributes, r *Remote) {
	one, hasOne := attrs[attrAddress]
	list, hasList := attrs[attrAddresses]
	switch {
	case hasOne && hasList:
		d.errorf(list.NameRange, nil, "Conflicting arguments",
			"env.address and env.addresses both name the servers. Keep one: address = \"host:port\" for one server, addresses = [...] to spread the environments over several.")
		return
	case hasOne:
		var s string
		d.setString(attrs, blockEnv, attrAddress, &s)
		if s != "" && d.checkAddress(one.Expr.Range(), one.Expr, s) {
			r.Addresses = []string{s}
		}
	case hasList:
		path := joinPath(blockEnv, attrAddresses)
		v, attr, ok := d.value(attrs, attrAddresses, path, cty.List(cty.String),
			valueKind{"a list of strings", "Write the addresses in brackets, such as [\"10.0.0.5:7000\", \"10.0.0.6:7000\"]."})
		if !ok {
			return
		}
		if v.LengthInt() == 0 {
			d.errorf(attr.Expr.Range(), attr.Expr, "Empty list", "%s needs at least one server, as \"host:port\".", path)
			return
		}
		var out []string
		for i, el := range v.AsValueSlice() {
			if !d.checkAddress(elementRange(attr.Expr, i), attr.Expr, el.AsString()) {
				return
			}
			out = append(out, el.AsString())
		}
		r.Addresses = out
	case len(r.Addresses) == 0:
		d.errorf(block.DefRange, nil, "Missing address",
			"An env \"remote\" block needs the servers' address: add address = \"127.0.0.1:7000\" (where `accerl envserver` listens by default), or addresses = [...].")
	}
}

// checkAddress reports an address that is not host:port with a port in 1–65535.
func (d *decoder) checkAddress(rng hcl.Range, expr hcl.Expression, addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.Atoi(port)
	if err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
		d.errorf(rng, expr, "Invalid address",
			"%q is not a server address. Write host:port with a port from 1 to 65535, such as \"127.0.0.1:7000\" or \"sim-3.lan:7000\" ([::1]:7000 for IPv6).", addr)
		return false
	}
	return true
}

// settingsAttributes presents the settings object's entries as attributes, so that the
// world's own attribute setters decode them (with their ranges for diagnostics).
func (d *decoder) settingsAttributes(attr *hcl.Attribute) hcl.Attributes {
	out := hcl.Attributes{}
	if attr == nil {
		return out
	}
	pairs, diags := hcl.ExprMap(attr.Expr)
	if diags.HasErrors() {
		d.errorf(attr.Expr.Range(), nil, "Incorrect attribute value type",
			"env.settings must be an object written in braces, such as { suite = \"spatial\", tasks = [0, 3] }.")
		return out
	}
	for _, p := range pairs {
		name := hcl.ExprAsKeyword(p.Key)
		if name == "" {
			if v, diags := p.Key.Value(d.ctx); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
				name = v.AsString()
			}
		}
		if name == "" {
			d.errorf(p.Key.Range(), nil, "Invalid setting name", "A setting's name is a word, such as suite. Write it without an expression.")
			continue
		}
		if prev, dup := out[name]; dup {
			d.errorf(p.Key.Range(), nil, "Duplicate setting", "Setting %s was already written %s. Remove one.", name, at(prev.NameRange))
			continue
		}
		out[name] = &hcl.Attribute{Name: name, Expr: p.Value, NameRange: p.Key.Range(),
			Range: hcl.RangeBetween(p.Key.Range(), p.Value.Range())}
	}
	return out
}

// checkRemote reports what a remote arm cannot have: a simulated latency (the servers'
// latency is real), which an ablation can inherit from a local base.
func checkRemote(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	if c.Env.Remote == nil || c.Env.Latency.Kind == LatencyNone {
		return
	}
	add(src.blame(pathLatencyKind, pathEnvKind), "Simulated latency on a remote env",
		fmt.Sprintf("env.latency.kind = %q simulates a slow simulator, and this arm steps real ones on %v. Remove the latency block, or set kind = %q in the arm that makes the env remote.",
			c.Env.Latency.Kind, c.Env.Remote.Addresses, LatencyNone))
}

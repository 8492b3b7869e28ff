package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// DefaultNamespace is the Temporal namespace accerl uses unless told otherwise.
const DefaultNamespace = "default"

// File names inside the state directory.
const (
	dbFileName   = "temporal.db"
	lockFileName = "server.lock"
	addrFileName = "server.addr"
	logFileName  = "server.log"
)

// ServerConfig says where and how to run the embedded Temporal server.
type ServerConfig struct {
	// StateDir holds the SQLite database, the server log and the lock file.
	StateDir string
	// DB, when set, keeps the workflows in PostgreSQL instead of StateDir's SQLite file:
	// postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=disable (see parsePostgresURL). The
	// server creates the databases and schemas it lacks. Run one server per database: two
	// servers with their own static membership on one database would contend for its shard.
	DB string
	// Namespaces are created on first start (and on every start if missing).
	Namespaces []string
	// IP is the address the frontend listens on: "" (127.0.0.1), another of this host's
	// addresses, or 0.0.0.0 for every interface. One that other hosts can reach needs TLS or
	// Insecure (see CheckBind). The history, matching and worker services stay on 127.0.0.1.
	IP string
	// Port is the frontend gRPC port on IP; 0 picks a free port.
	Port int
	// TLS is the frontend's certificate and key; with a CA it requires client certificates
	// that CA signed (mutual TLS). With TLS the server's own clients — its system workers, the
	// search-attribute setup, the Web UI, and the accerl processes that share StateDir (they
	// read server.addr) — use an internal frontend on 127.0.0.1 that, like the history and
	// matching services, speaks plaintext on the loopback interface only: they hold no client
	// certificate, and the server's certificate need not name 127.0.0.1.
	TLS TLSFiles
	// Insecure allows an IP other hosts can reach without TLS.
	Insecure bool
	// LogLevel is the server's log level ("warn" by default); logs go to StateDir/server.log.
	LogLevel string
	// UIPort is where Temporal's Web UI listens on 127.0.0.1 (DefaultUIPort is
	// start-dev's); 0 serves no UI. A UI that cannot start leaves the server running: see
	// Server.UI.
	UIPort int
}

// Server is a Temporal server running inside this process, persisted to a SQLite file.
// Only one process may own a state directory at a time; that process holds an exclusive
// lock on StateDir/server.lock for as long as the server runs.
type Server struct {
	srv      temporal.Server
	hostPort string
	local    string // LocalHostPort
	lock     *os.File
	dir      string
	ui       *uiserver.Server // nil when no UI runs
	uiURL    string
	uiErr    error
}

// ErrStateDirBusy is returned by StartServer when another live process already serves the
// state directory. Its address is in the wrapped error's Addr field (see BusyError).
var ErrStateDirBusy = errors.New("state directory is served by another process")

// BusyError reports that another process owns the state directory, and where its server listens.
type BusyError struct {
	Dir  string
	Addr string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("state directory %s is served by another accerl process at %s", e.Dir, e.Addr)
}

// Unwrap lets errors.Is(err, ErrStateDirBusy) work.
func (e *BusyError) Unwrap() error { return ErrStateDirBusy }

// StartServer starts the embedded Temporal server (frontend, history, matching and worker
// services in this process, static membership, one history shard) on 127.0.0.1, or its
// frontend on cfg.IP, persisted to StateDir/temporal.db. The database schema and namespaces
// are created on first use; a later start on the same directory brings back every workflow.
// If another process already serves the directory, StartServer returns a *BusyError carrying
// that server's address.
//
// Every namespace gets accerl's custom search attributes (workflows.SearchAttributeKeys): a
// new one when it is created, one created by an older accerl when the server starts. With
// cfg.UIPort set, the Web UI runs too, and stops with the server.
func StartServer(cfg ServerConfig) (*Server, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("start temporal server: empty state directory")
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("start temporal server: port %d is not between 1 and 65535", cfg.Port)
	}
	if err := CheckBind(cfg.IP, cfg.TLS.On(), cfg.Insecure); err != nil {
		return nil, err
	}
	var groupTLS config.GroupTLS
	if cfg.TLS.On() {
		var err error
		if groupTLS, err = frontendTLS(cfg.TLS); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	lock, err := lockStateDir(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	if cfg.Port != 0 {
		// The server exits the process when its frontend cannot bind: say why instead.
		if err := checkFree(net.JoinHostPort(bindIP(cfg.IP), strconv.Itoa(cfg.Port))); err != nil {
			_ = lock.Close()
			return nil, fmt.Errorf("start temporal server: %w", err)
		}
	}
	srv, addrs, err := newServer(cfg, groupTLS)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	if err := srv.Start(); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	if err := ensureSearchAttributesAt(addrs.local, namespaces(cfg)); err != nil {
		_ = srv.Stop()
		_ = lock.Close()
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.StateDir, addrFileName), []byte(addrs.local+"\n"), 0o644); err != nil {
		_ = srv.Stop()
		_ = lock.Close()
		return nil, fmt.Errorf("write server address: %w", err)
	}
	s := &Server{srv: srv, hostPort: addrs.frontend, local: addrs.local, lock: lock, dir: cfg.StateDir}
	if cfg.UIPort != 0 {
		s.ui, s.uiURL, s.uiErr = startUI(cfg.UIPort, addrs.local, namespaces(cfg)[0])
	}
	return s, nil
}

// namespaces are the namespaces the server creates: cfg.Namespaces, or DefaultNamespace.
func namespaces(cfg ServerConfig) []string {
	if len(cfg.Namespaces) == 0 {
		return []string{DefaultNamespace}
	}
	return cfg.Namespaces
}

// ensureSearchAttributesAt registers accerl's search attributes in each namespace of the server
// at hostPort where they are missing: namespaces created before accerl set search attributes.
func ensureSearchAttributesAt(hostPort string, namespaces []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, hostPort, namespaces[0], TLSFiles{})
	if err != nil {
		return fmt.Errorf("embedded server: %w", err)
	}
	defer c.Close()
	for _, ns := range namespaces {
		if err := EnsureSearchAttributes(ctx, c.OperatorService(), ns); err != nil {
			return err
		}
	}
	return nil
}

// HostPort is the frontend's address: ServerConfig.IP (127.0.0.1 for 0.0.0.0, which listens
// there too) and its port. With TLS, clients dial it with TLS.
func (s *Server) HostPort() string { return s.hostPort }

// LocalHostPort is where the processes on this host dial the server without TLS: the
// internal frontend on 127.0.0.1 when the frontend has TLS, else HostPort. It is the address
// recorded in the state directory's server.addr.
func (s *Server) LocalHostPort() string { return s.local }

// UI returns the Web UI's URL (http://127.0.0.1:PORT), or "" when it does not run: not asked
// for (ServerConfig.UIPort 0), or asked for but unable to start, which err says why (its
// port is in use, say).
func (s *Server) UI() (url string, err error) { return s.uiURL, s.uiErr }

// Stop shuts the server and its Web UI down and releases the state directory.
func (s *Server) Stop() error {
	if s.ui != nil {
		s.ui.Stop()
	}
	err := s.srv.Stop()
	_ = os.Remove(filepath.Join(s.dir, addrFileName))
	_ = s.lock.Close()
	return err
}

// lockStateDir takes an exclusive, non-blocking flock on the state directory's lock file.
// The kernel drops the lock when the process dies, so a kill -9 never leaves it stale.
func lockStateDir(dir string) (*os.File, error) {
	f, err := tryLock(dir)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, &BusyError{Dir: dir, Addr: readAddr(dir)}
	}
	return f, err
}

// tryLock takes the state directory's lock if it is free; an error wrapping EWOULDBLOCK
// means another process holds it.
func tryLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock state directory %s: %w", dir, err)
	}
	return f, nil
}

// Served reports whether a live process serves the state directory (holds its lock). A
// process that uses the server of another one polls it to notice when that one exits: the
// kernel releases the lock of a dead process at once, while its clients only see the server
// unavailable, as they would during a restart. Served holds the lock for an instant when it
// is free; it reports true when it cannot tell.
func Served(dir string) bool {
	f, err := tryLock(dir)
	if err != nil {
		return true
	}
	_ = f.Close()
	return false
}

// readAddr returns the address another process recorded for the state directory, waiting
// briefly because that process writes it only once its server is up.
func readAddr(dir string) string {
	for i := 0; i < 100; i++ {
		b, err := os.ReadFile(filepath.Join(dir, addrFileName))
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

// clusterName is the embedded server's one cluster.
const clusterName = "active"

// serverAddrs are the addresses a server's clients dial.
type serverAddrs struct {
	frontend string // Server.HostPort
	local    string // Server.LocalHostPort
}

// bindIP is the address the frontend listens on for ServerConfig.IP.
func bindIP(ip string) string {
	if ip == "" {
		return "127.0.0.1"
	}
	return ip
}

// dialIP is the address this host dials to reach a listener on ip: a listener on every
// interface (0.0.0.0, ::) is reached on the loopback address.
func dialIP(ip string) string {
	switch addr := net.ParseIP(bindIP(ip)); {
	case addr.Equal(net.IPv4zero):
		return "127.0.0.1"
	case addr.Equal(net.IPv6unspecified):
		return "::1"
	}
	return bindIP(ip)
}

func newServer(cfg ServerConfig, frontendTLS config.GroupTLS) (temporal.Server, serverAddrs, error) {
	var addrs serverAddrs
	level := cfg.LogLevel
	if level == "" {
		level = "warn"
	}
	var nsCfgs []*sqlite.NamespaceConfig
	for _, ns := range namespaces(cfg) {
		nc, err := sqlite.NewNamespaceConfig(clusterName, ns, false, searchAttributeTypes())
		if err != nil {
			return nil, addrs, fmt.Errorf("namespace %q: %w", ns, err)
		}
		nsCfgs = append(nsCfgs, nc)
	}
	persistence, err := serverPersistence(cfg, nsCfgs)
	if err != nil {
		return nil, addrs, err
	}

	frontendPort := cfg.Port
	if frontendPort == 0 {
		p, err := freePort()
		if err != nil {
			return nil, addrs, err
		}
		frontendPort = p
	}
	addrs.frontend = net.JoinHostPort(dialIP(cfg.IP), strconv.Itoa(frontendPort))
	addrs.local = addrs.frontend
	backends := []primitives.ServiceName{primitives.HistoryService, primitives.MatchingService, primitives.WorkerService}
	if cfg.TLS.On() {
		// The server's own clients use the internal frontend, which has the internode
		// services' (no) TLS; Temporal picks it for them when the config has one.
		backends = append(backends, primitives.InternalFrontendService)
	}

	svcCfg := map[string]config.Service{
		string(primitives.FrontendService): {RPC: config.RPC{GRPCPort: frontendPort, BindOnIP: bindIP(cfg.IP)}},
	}
	hosts := map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: {All: []string{addrs.frontend}, Self: addrs.frontend},
	}
	names := []string{string(primitives.FrontendService)}
	for _, name := range backends {
		port, err := freePort()
		if err != nil {
			return nil, addrs, err
		}
		svcCfg[string(name)] = config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: "127.0.0.1"}}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		hosts[name] = static.Hosts{All: []string{addr}, Self: addr}
		names = append(names, string(name))
		if name == primitives.InternalFrontendService {
			addrs.local = addr
		}
	}
	// Without an internal frontend, the system workers dial the public one (with one, the
	// config must leave this empty).
	var publicClient config.PublicClient
	if addrs.local == addrs.frontend {
		publicClient.HostPort = addrs.frontend
	}

	conf := &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"},
			TLS:        config.RootTLS{Frontend: frontendTLS},
		},
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: addrs.frontend},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            svcCfg,
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		PublicClient: publicClient,
	}

	logPath := filepath.Join(cfg.StateDir, logFileName)
	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{
		Level:      level,
		OutputFile: logPath,
		Format:     "json",
	}).WithOptions(zap.WithFatalHook(fatalToStderr{log: logPath, w: os.Stderr})))
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(names),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
	)
	if err != nil {
		return nil, addrs, fmt.Errorf("create temporal server: %w", err)
	}
	return srv, addrs, nil
}

// serverPersistence is where the server of cfg keeps its workflows: the SQLite file in
// StateDir, or the PostgreSQL databases of cfg.DB. It creates the schemas a new store lacks
// and the namespaces it lacks.
func serverPersistence(cfg ServerConfig, namespaces []*sqlite.NamespaceConfig) (config.Persistence, error) {
	if cfg.DB != "" {
		st, err := parsePostgresURL(cfg.DB)
		if err != nil {
			return config.Persistence{}, err
		}
		if err := setupPostgres(st, namespaces); err != nil {
			return config.Persistence{}, err
		}
		return config.Persistence{
			DefaultStore:     "postgres",
			VisibilityStore:  "postgres-visibility",
			NumHistoryShards: 1,
			DataStores: map[string]config.DataStore{
				"postgres":            {SQL: st.main},
				"postgres-visibility": {SQL: st.visibility},
			},
		}, nil
	}
	sqlCfg := sqlConfig(cfg.StateDir)
	if _, err := os.Stat(sqlCfg.DatabaseName); errors.Is(err, os.ErrNotExist) {
		if err := sqlite.SetupSchema(sqlCfg); err != nil {
			return config.Persistence{}, fmt.Errorf("create temporal schema in %s: %w", sqlCfg.DatabaseName, err)
		}
	}
	if err := sqlite.CreateNamespaces(sqlCfg, namespaces...); err != nil {
		return config.Persistence{}, fmt.Errorf("create namespaces: %w", err)
	}
	return config.Persistence{
		DefaultStore:     sqliteplugin.PluginName,
		VisibilityStore:  sqliteplugin.PluginName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
	}, nil
}

// fatalToStderr ends the process, as the server's fatal log entries do (a port it cannot bind,
// a database it cannot open), after saying why on w: otherwise the reason would be only in
// the server log, and accerl would exit with status 1 and nothing on the terminal.
type fatalToStderr struct {
	log string // the server log's path, for the details
	w   io.Writer
}

// OnWrite implements zapcore.CheckWriteHook.
func (h fatalToStderr) OnWrite(e *zapcore.CheckedEntry, fields []zapcore.Field) {
	fmt.Fprintf(h.w, "accerl: the embedded Temporal server failed: %s (details in %s)\n", fatalReason(e.Message, fields), h.log)
	os.Exit(1)
}

// fatalReason is a log entry's message with its error field, if it has one.
func fatalReason(msg string, fields []zapcore.Field) string {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	if e, ok := enc.Fields["error"]; ok {
		return fmt.Sprintf("%s: %v", msg, e)
	}
	return msg
}

// sqlConfig is the server's SQLite database in stateDir.
func sqlConfig(stateDir string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: filepath.Join(stateDir, dbFileName),
		ConnectAttributes: map[string]string{
			"mode": "rwc",
			// WAL plus synchronous=normal survives a process kill (not a power cut) without
			// losing committed transactions, at a fraction of the fsync cost of "full".
			"journal_mode": "wal",
			"synchronous":  "normal",
			"busy_timeout": "10000",
		},
	}
}

// freePort returns a TCP port on 127.0.0.1 that is free now, chosen at random
// below the kernel's ephemeral range.
//
// The Temporal server binds its ports some time after they are chosen, and it
// exits the whole process when a bind fails. A port the kernel hands out for
// port 0 comes from the ephemeral range, which is also where every outgoing
// connection (each gRPC client of this or any other process) takes its local
// port, so in the meantime one of them could take it; a port below that range
// can only be taken by another listener choosing the same one. The choice
// needs no reproducibility, so it uses the runtime-seeded global generator.
func freePort() (int, error) {
	lo, _ := ephemeralPorts()
	const floor = 10000 // above the well-known and most registered service ports
	for range 200 {
		p := floor + rand.IntN(max(1, lo-floor))
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // taken
		}
		_ = l.Close()
		return p, nil
	}
	return 0, fmt.Errorf("find a free port: 200 random ports in [%d, %d) were all taken", floor, lo)
}

// ephemeralPorts returns the kernel's ephemeral port range
// (/proc/sys/net/ipv4/ip_local_port_range), or Linux's default 32768–60999
// where it cannot be read.
func ephemeralPorts() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l <= 10000 || h < l {
		return lo, hi
	}
	return l, h
}

package worker

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// A PostgreSQL-backed server keeps its workflows in two databases on the PostgreSQL server
// that ServerConfig.DB names: the execution store (the URL's database, "temporal" when it
// names none) and the visibility store (that name with "_visibility"), as Temporal's own
// deployments do. accerl creates both when missing and installs or upgrades their schemas on
// every start with the versioned schema files Temporal's server module embeds, the steps
// `temporal-sql-tool create / setup-schema -v 0.0 / update-schema` take by hand.

const (
	// postgresDefaultDB is the execution database when the URL names none.
	postgresDefaultDB = "temporal"
	// postgresMaintenanceDB is the database accerl connects to to create the others.
	postgresMaintenanceDB = "postgres"
)

// postgresStores are the two databases of a PostgreSQL-backed server.
type postgresStores struct {
	main, visibility *config.SQL
}

// parsePostgresURL reads a --db URL, postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE][?PARAMS],
// into the two stores' connection configs. PARAMS are PostgreSQL connection parameters
// (sslmode=verify-full, sslrootcert=…, sslmode=disable); without sslmode it is "prefer", as
// for psql: TLS when the server offers it.
func parsePostgresURL(raw string) (postgresStores, error) {
	var st postgresStores
	u, err := url.Parse(raw)
	if err != nil {
		return st, fmt.Errorf("--db %q is not a URL: %v; write postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=disable", RedactURL(raw), err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return st, fmt.Errorf("--db %q: the scheme is %q, but accerl's server stores workflows in SQLite (no --db) or PostgreSQL (postgres://USER:PASSWORD@HOST:5432/DATABASE)", RedactURL(raw), u.Scheme)
	}
	if u.Hostname() == "" {
		return st, fmt.Errorf("--db %q names no host; write postgres://USER:PASSWORD@HOST:5432/DATABASE", RedactURL(raw))
	}
	if u.User == nil || u.User.Username() == "" {
		return st, fmt.Errorf("--db %q names no user; write postgres://USER:PASSWORD@HOST:5432/DATABASE (the user must be allowed to create databases, or the databases must exist)", RedactURL(raw))
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		name = postgresDefaultDB
	}
	if strings.ContainsAny(name, `/"`) {
		return st, fmt.Errorf("--db %q: %q is not a database name (no / or \" in it)", RedactURL(raw), name)
	}
	attrs := map[string]string{}
	for k, v := range u.Query() {
		attrs[k] = v[len(v)-1]
	}
	if attrs["sslmode"] == "" {
		// libpq's default, which psql users expect: TLS when the server offers it. (Temporal's
		// own default without a TLS config would be "disable".)
		attrs["sslmode"] = "prefer"
	}
	pw, _ := u.User.Password()
	base := config.SQL{
		PluginName:        postgresql.PluginNamePGX,
		User:              u.User.Username(),
		Password:          pw,
		ConnectProtocol:   "tcp",
		ConnectAddr:       net.JoinHostPort(u.Hostname(), port),
		ConnectAttributes: attrs,
		MaxConns:          20,
		MaxIdleConns:      20,
	}
	main, vis := base, base
	main.DatabaseName, vis.DatabaseName = name, name+"_visibility"
	// Each config gets its own attribute map: the plugin may edit it.
	vis.ConnectAttributes = maps.Clone(attrs)
	return postgresStores{main: &main, visibility: &vis}, nil
}

// RedactURL is raw with its password replaced by "xxxxx", for messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}

// setupPostgres creates st's databases if they are missing, installs or upgrades their
// schemas to the versions this server needs, and registers namespaces in the execution store.
func setupPostgres(st postgresStores, namespaces []*sqlite.NamespaceConfig) error {
	logger := log.NewNoopLogger()
	for _, s := range []struct {
		cfg    *config.SQL
		schema string // directory in go.temporal.io/server/schema
	}{{st.main, "postgresql/v12/temporal"}, {st.visibility, "postgresql/v12/visibility"}} {
		if err := postgresSchema(s.cfg, s.schema, logger); err != nil {
			return fmt.Errorf("PostgreSQL database %q on %s: %w", s.cfg.DatabaseName, s.cfg.ConnectAddr, err)
		}
	}
	// CreateNamespaces writes through Temporal's SQL persistence layer, so it works for any
	// SQL plugin despite its package's name; namespaces that exist are left as they are.
	if err := sqlite.CreateNamespaces(st.main, namespaces...); err != nil {
		return fmt.Errorf("PostgreSQL database %q on %s: create namespaces: %w", st.main.DatabaseName, st.main.ConnectAddr, err)
	}
	return nil
}

// postgresSchema brings the database of cfg to the newest version of the embedded schema
// directory dir: it creates the database (connecting to the maintenance database), then the
// schema-version tables at version 0.0 if there are none, then applies every versioned step
// past the installed version (none when it is current).
func postgresSchema(cfg *config.SQL, dir string, logger log.Logger) error {
	if err := probePostgres(cfg, postgresMaintenanceDB); err != nil {
		return fmt.Errorf("connect to database %q: %w", postgresMaintenanceDB, explainPostgres(err))
	}
	maint := *cfg
	maint.ConnectAttributes = maps.Clone(cfg.ConnectAttributes)
	if err := sqltool.DoCreateDatabase(&maint, postgresMaintenanceDB, logger); err != nil {
		return fmt.Errorf("create it (connecting to database %q): %w", postgresMaintenanceDB, explainPostgres(err))
	}
	c := *cfg
	c.ConnectAttributes = maps.Clone(cfg.ConnectAttributes)
	conn, err := sqltool.NewConnection(&c, logger)
	if err != nil {
		return fmt.Errorf("connect: %w", explainPostgres(err))
	}
	defer conn.Close()
	if _, err := conn.ReadSchemaVersion(); err != nil {
		if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
			return fmt.Errorf("create the schema-version tables: %w", explainPostgres(err))
		}
	}
	if err := schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: dir}, logger).Run(); err != nil {
		return fmt.Errorf("install the schema %s: %w", dir, explainPostgres(err))
	}
	return nil
}

// explainPostgres adds what to do to the errors a first connection usually meets.
func explainPostgres(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return fmt.Errorf("%w (is PostgreSQL running and listening on that address? Debian: apt-get install postgresql, then pg_ctlcluster 15 main start)", err)
	case strings.Contains(msg, "role ") && strings.Contains(msg, "does not exist"):
		return fmt.Errorf("%w (fix the user in --db, or create it: createuser --createdb NAME)", err)
	case strings.Contains(msg, "password authentication failed"), strings.Contains(msg, "no pg_hba.conf entry"):
		return fmt.Errorf("%w (check the user and password in --db, and that pg_hba.conf admits this host)", err)
	case strings.Contains(msg, "permission denied to create database"):
		return fmt.Errorf("%w (grant the user CREATEDB, or create the databases beforehand)", err)
	case (strings.Contains(msg, "SSL is not enabled on the server") || strings.Contains(msg, "server refused TLS")) &&
		!strings.Contains(msg, "server error:"):
		return fmt.Errorf("%w (this server has no TLS; add ?sslmode=disable to --db if the network is trusted)", err)
	}
	return err
}

// probePostgres connects once to database db of cfg's server, with cfg's user, password and
// parameters, and returns PostgreSQL's own error: Temporal's connection pool reports every
// failure as "no usable database connection found", which does not say what to fix.
func probePostgres(cfg *config.SQL, db string) error {
	q := url.Values{}
	for k, v := range cfg.ConnectAttributes {
		q.Set(k, v)
	}
	q.Set("connect_timeout", "10")
	u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password), Host: cfg.ConnectAddr, Path: "/" + db, RawQuery: q.Encode()}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

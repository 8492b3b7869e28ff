package worker

import (
	"strings"
	"testing"
)

func TestParsePostgresURL(t *testing.T) {
	st, err := parsePostgresURL("postgres://alice:s3cret@db.example:6543/runs?sslmode=verify-full&sslrootcert=/etc/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	m, v := st.main, st.visibility
	if m.User != "alice" || m.Password != "s3cret" || m.ConnectAddr != "db.example:6543" || m.DatabaseName != "runs" ||
		m.ConnectAttributes["sslmode"] != "verify-full" || m.ConnectAttributes["sslrootcert"] != "/etc/ca.pem" {
		t.Errorf("main store %+v", m)
	}
	if v.DatabaseName != "runs_visibility" || v.ConnectAddr != m.ConnectAddr || v.ConnectAttributes["sslmode"] != "verify-full" {
		t.Errorf("visibility store %+v", v)
	}
	v.ConnectAttributes["x"] = "y"
	if _, shared := m.ConnectAttributes["x"]; shared {
		t.Error("the two stores share one attribute map")
	}

	// Defaults: port 5432, database "temporal", sslmode prefer (psql's).
	st, err = parsePostgresURL("postgresql://bob@10.0.0.5")
	if err != nil {
		t.Fatal(err)
	}
	if st.main.ConnectAddr != "10.0.0.5:5432" || st.main.DatabaseName != "temporal" || st.main.ConnectAttributes["sslmode"] != "prefer" {
		t.Errorf("defaults: %+v", st.main)
	}
}

func TestParsePostgresURLRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		"mysql://u@h/db":             `the scheme is "mysql"`,
		"postgres:///db":             "names no host",
		"postgres://h:5432/db":       "names no user",
		"postgres://u@h/a/b":         `"a/b" is not a database name`,
		"postgres://u:pw@h/db\x7f":   "is not a URL",
		"postgres://u:hunter2@h/a/b": "postgres://u:xxxxx@h/a/b",
	} {
		_, err := parsePostgresURL(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", raw, err)
		}
	}
}

func TestExplainPostgres(t *testing.T) {
	for msg, want := range map[string]string{
		"dial tcp 127.0.0.1:5432: connect: connection refused": "is PostgreSQL running",
		`password authentication failed for user "u"`:          "check the user and password",
		"permission denied to create database":                 "grant the user CREATEDB",
		"pq: SSL is not enabled on the server":                 "sslmode=disable",
	} {
		if got := explainPostgres(errString(msg)).Error(); !strings.Contains(got, want) || !strings.Contains(got, msg) {
			t.Errorf("%q → %q, want the message and %q", msg, got, want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

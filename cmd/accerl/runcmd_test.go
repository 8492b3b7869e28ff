package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStorePath(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "",
		"runs/x":                              "runs/x",
		"/shared/runs":                        "/shared/runs",
		"file:///shared/runs":                 "/shared/runs",
		"file://localhost/shared/my%20runs":   "/shared/my runs",
		"./odd://name":                        "./odd://name",
		"s3://bucket//runs/?region=eu-west-1": "s3://bucket/runs?region=eu-west-1",
	} {
		if got, err := storePath(in); err != nil || got != want {
			t.Errorf("storePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"gs://bucket/runs":        "S3-compatible object store",
		"s3://bucket":             "whole bucket",
		"s3://k:s@bucket/runs":    "carries credentials",
		"file://nas/shared/runs":  "mount nas's filesystem here",
		"file:///shared/runs?x=1": "nothing after the path",
	} {
		if _, err := storePath(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("storePath(%q) error %v, want it to contain %q", in, err, want)
		}
	}
}

func TestReachabilityNote(t *testing.T) {
	var r reachability
	t0 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	down := errors.New(`rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:7301: connect: connection refused"` + "\nmore")
	if n := r.observe(nil, t0); n != "" {
		t.Errorf("answering: %q", n)
	}
	if n := r.observe(down, t0.Add(time.Second)); n != "" {
		t.Errorf("down for 0 s: %q, want nothing within the grace", n)
	}
	n := r.observe(down, t0.Add(time.Second+unreachableGrace))
	if !strings.Contains(n, "unreachable since 18:00:01 (connection refused).\n") || !strings.Contains(n, "Nothing is lost") {
		t.Errorf("down past the grace: %q", n)
	}
	if n := r.observe(nil, t0.Add(time.Minute)); n != "" {
		t.Errorf("back: %q", n)
	}
	if n := r.observe(down, t0.Add(time.Minute+time.Second)); n != "" {
		t.Errorf("down again, within the grace: %q", n)
	}
}

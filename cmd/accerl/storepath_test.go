package main

import (
	"strings"
	"testing"
)

func TestStorePath(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"runs/x":                            "runs/x",
		"/shared/runs":                      "/shared/runs",
		"file:///shared/runs":               "/shared/runs",
		"file://localhost/shared/my%20runs": "/shared/my runs",
		"./odd://name":                      "./odd://name",
	} {
		if got, err := storePath(in); err != nil || got != want {
			t.Errorf("storePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"s3://bucket/runs":        "object stores (s3://) are not supported yet",
		"file://nas/shared/runs":  "mount nas's filesystem here",
		"file:///shared/runs?x=1": "nothing after the path",
	} {
		if _, err := storePath(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("storePath(%q) error %v, want it to contain %q", in, err, want)
		}
	}
}

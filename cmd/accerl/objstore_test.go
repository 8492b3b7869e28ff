package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"

	"github.com/accerl/accerl/runstore"
)

// TestRunInObjectStore: `accerl run --out s3://...` on the embedded server keeps every file of
// the experiment in an S3-compatible store (gofakes3 here): the manifests, every run's
// summary, checkpoints and metrics, and the report, with no temporary keys left. `accerl report`
// of the URL regenerates the report on a host with an empty cache and publishes it.
func TestRunInObjectStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	backend := s3mem.New()
	if err := backend.CreateBucket("exp"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "accerl")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "accerl-secret")
	t.Setenv(runstore.StoreCacheEnv, filepath.Join(t.TempDir(), "cache"))
	q := url.Values{"endpoint": {srv.URL}, "use_path_style": {"true"}, "region": {"us-east-1"}}.Encode()
	bucket, err := blob.OpenBucket(context.Background(), "s3://exp?"+q)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()

	dir := t.TempDir()
	spec := filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(spec, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := "s3://exp/runs/tiny?" + q
	if stdout, stderr, err := runCLI(t, "run", "--state-dir", filepath.Join(dir, "state"), "--no-ui", "--out", out, spec); err != nil {
		t.Fatalf("accerl run: %v\n%s\n%s", err, stdout, stderr)
	}
	ctx := context.Background()
	keys := map[string]bool{}
	it := bucket.List(&blob.ListOptions{Prefix: "runs/tiny/"})
	for {
		o, err := it.Next(ctx)
		if err != nil {
			break
		}
		keys[strings.TrimPrefix(o.Key, "runs/tiny/")] = true
		if strings.Contains(o.Key, "/.") {
			t.Errorf("the store holds a temporary or hidden key %s", o.Key)
		}
	}
	for _, want := range []string{runstore.ExperimentFile, "report.md", "results.json",
		"base/seed-7/" + runstore.RunFile, "base/seed-7/metrics/seg-000001.arrow", "sync/seed-7/" + runstore.SummaryFile} {
		if !keys[want] {
			t.Errorf("the store lacks %s; it holds %d objects", want, len(keys))
		}
	}
	var sum runstore.RunSummary
	data, err := bucket.ReadAll(ctx, "runs/tiny/sync/seed-7/"+runstore.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil || sum.Status != "completed" || sum.EnvSteps < 3072 {
		t.Fatalf("sync run's summary in the store: %+v (%v), want completed after 3072 steps", sum, err)
	}

	// Another host: an empty cache, the report regenerated from the store.
	t.Setenv(runstore.StoreCacheEnv, filepath.Join(t.TempDir(), "cache2"))
	if err := bucket.Delete(ctx, "runs/tiny/report.md"); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runCLI(t, "report", out)
	if err != nil || !strings.Contains(stdout, "Published to "+out) {
		t.Fatalf("accerl report %s: %v\n%s\n%s", out, err, stdout, stderr)
	}
	if ok, _ := bucket.Exists(ctx, "runs/tiny/report.md"); !ok {
		t.Fatal("accerl report did not publish report.md")
	}
	local, _ := filepath.Glob(filepath.Join(os.Getenv(runstore.StoreCacheEnv), "exp", "*", "base", "seed-7", "checkpoints"))
	if len(local) != 0 {
		t.Errorf("the report's working copy downloaded checkpoints: %v", local)
	}
}

// TestRunOutUnreachableStore: a store that cannot be listed stops `accerl run` before it starts
// a server, with what to check.
func TestRunOutUnreachableStore(t *testing.T) {
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server()) // no bucket "exp"
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "accerl")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "accerl-secret")
	dir := t.TempDir()
	spec := filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(spec, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := "s3://exp/runs/tiny?" + url.Values{"endpoint": {srv.URL}, "use_path_style": {"true"}, "region": {"us-east-1"}}.Encode()
	_, _, err := runCLI(t, "run", "--state-dir", filepath.Join(dir, "state"), "--no-ui", "--out", out, spec)
	if err == nil || !strings.Contains(err.Error(), "cannot list") || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("accerl run --out on a missing bucket: %v, want a 'cannot list' error naming what to check", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Error("accerl run started a server before refusing the store")
	}
}

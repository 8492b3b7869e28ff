package runstore

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
)

// fakeS3 starts an S3-compatible server (gofakes3, in memory) with one bucket and returns
// the s3:// URL of prefix in it, as a user would pass it to `accerl run --out`, and the
// bucket opened directly, to look at or tamper with the objects.
func fakeS3(t *testing.T, prefix string) (string, *blob.Bucket) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("exp"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	// Static credentials, so that the AWS SDK never asks an instance-metadata service.
	t.Setenv("AWS_ACCESS_KEY_ID", "accerl")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "accerl-secret")
	q := url.Values{"endpoint": {srv.URL}, "use_path_style": {"true"}, "region": {"us-east-1"}}
	b, err := blob.OpenBucket(context.Background(), "s3://exp?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return "s3://exp/" + prefix + "?" + q.Encode(), b
}

// host switches to a fresh store cache, standing for another machine's disk.
func host(t *testing.T) {
	t.Setenv(StoreCacheEnv, t.TempDir())
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keys(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var out []string
	it := b.List(nil)
	for {
		o, err := it.Next(context.Background())
		if err != nil {
			break
		}
		out = append(out, o.Key)
	}
	slices.Sort(out)
	return out
}

// TestWorkingCopyAcrossHosts: what one host publishes another opens byte for byte, edits and
// deletions travel both ways, the store holds no temporary keys afterwards, and files an
// interrupted activity left unpublished are dropped when the copy is opened again.
func TestWorkingCopyAcrossHosts(t *testing.T) {
	ctx := context.Background()
	dir, bucket := fakeS3(t, "runs/quick/base/seed-1")

	host(t) // host A: the first segment
	a, err := OpenWorkingCopy(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !a.Remote() || !strings.Contains(a.Dir, os.Getenv(StoreCacheEnv)) {
		t.Fatalf("working copy of %s is %s, want a directory under the cache", dir, a.Dir)
	}
	ckpt := filepath.Join(a.Dir, "checkpoints", "seg-000001")
	writeFile(t, filepath.Join(ckpt, "engine.json"), `{"params":[1,2,3]}`)
	writeFile(t, filepath.Join(ckpt, "manifest.json"), `{"segment":1}`)
	writeFile(t, filepath.Join(a.Dir, "summary.json"), `{"segments":1}`)
	writeFile(t, filepath.Join(a.Dir, ".summary.json.123.tmp"), "half-written")
	if err := a.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"runs/quick/base/seed-1/checkpoints/seg-000001/engine.json",
		"runs/quick/base/seed-1/checkpoints/seg-000001/manifest.json", "runs/quick/base/seed-1/summary.json"}
	if got := keys(t, bucket); !slices.Equal(got, want) {
		t.Fatalf("store holds %q, want %q (no hidden or temporary keys)", got, want)
	}
	ref := a.Ref(ckpt)
	if ref != JoinDir(dir, "checkpoints", "seg-000001") {
		t.Fatalf("Ref = %s", ref)
	}

	host(t) // host B: the retry of segment 2 on another machine
	b, err := OpenWorkingCopy(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	local, err := b.Local(ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(local, "engine.json")); string(got) != `{"params":[1,2,3]}` {
		t.Fatalf("host B reads %q from %s", got, local)
	}
	if err := os.RemoveAll(filepath.Join(b.Dir, "checkpoints", "seg-000001")); err != nil { // pruned
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(b.Dir, "checkpoints", "seg-000002", "manifest.json"), `{"segment":2}`)
	writeFile(t, filepath.Join(b.Dir, "summary.json"), `{"segments":2}`)
	if err := b.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	want = []string{"runs/quick/base/seed-1/checkpoints/seg-000002/manifest.json", "runs/quick/base/seed-1/summary.json"}
	if got := keys(t, bucket); !slices.Equal(got, want) {
		t.Fatalf("after host B's publish the store holds %q, want %q", got, want)
	}

	// Back on host A, whose cache still has segment 1 and an unpublished file of a crashed
	// attempt: reopening makes it equal to the store.
	t.Setenv(StoreCacheEnv, filepath.Dir(filepath.Dir(a.Dir)))
	writeFile(t, filepath.Join(a.Dir, "metrics", "seg-000003.arrow"), "never published")
	a2, err := OpenWorkingCopy(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	if a2.Dir != a.Dir {
		t.Fatalf("host A's copy moved: %s then %s", a.Dir, a2.Dir)
	}
	files, err := a2.localFiles()
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for r := range files {
		rels = append(rels, r)
	}
	slices.Sort(rels)
	if want := []string{"checkpoints/seg-000002/manifest.json", "summary.json"}; !slices.Equal(rels, want) {
		t.Fatalf("host A's reopened copy holds %q, want %q", rels, want)
	}
	if _, err := os.Stat(filepath.Join(a2.Dir, "checkpoints", "seg-000001")); err == nil {
		t.Error("host A's copy keeps the empty directory of the checkpoint host B pruned")
	}
	if got, _ := os.ReadFile(filepath.Join(a2.Dir, "summary.json")); string(got) != `{"segments":2}` {
		t.Fatalf("host A's summary is %q, want host B's", got)
	}
}

// TestWorkingCopyRefusesCorruptObject: an object whose bytes no longer match the SHA-256 it
// was published with is refused on download, with a message that says so.
func TestWorkingCopyRefusesCorruptObject(t *testing.T) {
	ctx := context.Background()
	dir, bucket := fakeS3(t, "runs/x")
	host(t)
	a, err := OpenWorkingCopy(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(a.Dir, "summary.json"), `{"ok":true}`)
	if err := a.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	a.Close()
	attrs, err := bucket.Attributes(ctx, "runs/x/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := bucket.WriteAll(ctx, "runs/x/summary.json", []byte(`{"ok":false}`), &blob.WriterOptions{Metadata: attrs.Metadata}); err != nil {
		t.Fatal(err)
	}
	host(t)
	_, err = OpenWorkingCopy(ctx, dir)
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("open over a corrupt object: err = %v, want one that says it is corrupt", err)
	}
}

// TestLocalWorkingCopy: a local directory is its own working copy, and Publish leaves it be.
func TestLocalWorkingCopy(t *testing.T) {
	d := t.TempDir()
	w, err := OpenWorkingCopy(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if w.Dir != d || w.Remote() || w.Ref(filepath.Join(d, "x")) != filepath.Join(d, "x") {
		t.Fatalf("local working copy changed its paths: %+v", w)
	}
	if l, _ := w.Local(filepath.Join(d, "x")); l != filepath.Join(d, "x") {
		t.Fatalf("Local = %s", l)
	}
	if err := w.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, storeRecordFile)); err == nil {
		t.Fatal("a local working copy wrote a store record")
	}
}

func TestJoinDir(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{"/data/runs/q", "/data/runs/q/base/seed-1"},
		{"s3://b/runs/q", "s3://b/runs/q/base/seed-1"},
		{"s3://b/runs/q?endpoint=http%3A%2F%2F10.0.0.1%3A9000&use_path_style=true", "s3://b/runs/q/base/seed-1?endpoint=http%3A%2F%2F10.0.0.1%3A9000&use_path_style=true"},
	} {
		if got := JoinDir(c.dir, "base", "seed-1"); got != c.want {
			t.Errorf("JoinDir(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}

func TestParseStoreURL(t *testing.T) {
	if got, err := ParseStoreURL("s3://b//runs/q/?region=eu-west-1"); err != nil || got != "s3://b/runs/q?region=eu-west-1" {
		t.Fatalf("ParseStoreURL = %q, %v", got, err)
	}
	for in, want := range map[string]string{
		"gs://b/runs":            "s3://",
		"s3:///runs":             "names no bucket",
		"s3://b":                 "whole bucket",
		"s3://key:secret@b/runs": "credentials",
	} {
		_, err := ParseStoreURL(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStoreURL(%q) = %v, want an error containing %q", in, err, want)
		}
		if err != nil && bytes.Contains([]byte(err.Error()), []byte("secret")) {
			t.Errorf("ParseStoreURL(%q) repeats the secret: %v", in, err)
		}
	}
}

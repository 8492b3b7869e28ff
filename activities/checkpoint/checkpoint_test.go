package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "seg-000001")
	files := map[string][]byte{"engine.json": []byte(`{"a":1}`), "params.bin": {1, 2, 3}}
	if err := Save(dir, Manifest{SpecHash: "abc", Segment: 1, Counters: map[string]int64{"env_steps": 512}}, files); err != nil {
		t.Fatal(err)
	}
	m, got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != FormatVersion || m.SpecHash != "abc" || m.Segment != 1 || m.Counters["env_steps"] != 512 {
		t.Errorf("manifest = %+v", m)
	}
	// SHA-256 of the three bytes 01 02 03, computed with `printf '\x01\x02\x03' | sha256sum`.
	if m.Files["params.bin"] != "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81" {
		t.Errorf("params.bin sha = %s", m.Files["params.bin"])
	}
	if string(got["engine.json"]) != `{"a":1}` || len(got) != 2 {
		t.Errorf("files = %v", got)
	}
	// No temporary directories are left behind.
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("root holds %d entries, want only the checkpoint", len(entries))
	}
}

func TestSaveReplacesExisting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seg-000002")
	for _, v := range []string{"first", "second"} {
		if err := Save(dir, Manifest{Segment: 2}, map[string][]byte{"x": []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	_, files, err := Load(dir)
	if err != nil || string(files["x"]) != "second" {
		t.Fatalf("after replace: %q, %v", files["x"], err)
	}
}

func TestCorruptionFallsBackToPrevious(t *testing.T) {
	root := t.TempDir()
	for i, name := range []string{"seg-000001", "seg-000002"} {
		if err := Save(filepath.Join(root, name), Manifest{Segment: int32(i + 1)}, map[string][]byte{"state": []byte(name)}); err != nil {
			t.Fatal(err)
		}
	}
	// Flip one byte of the newest checkpoint's state file.
	p := filepath.Join(root, "seg-000002", "state")
	b, _ := os.ReadFile(p)
	b[0] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// An interrupted save leaves a temporary directory that must be ignored.
	if err := os.MkdirAll(filepath.Join(root, tmpPrefix+"seg-000003-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, m, files, skipped, err := Latest(root)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "seg-000001" || m.Segment != 1 || string(files["state"]) != "seg-000001" {
		t.Errorf("Latest = %s (segment %d), want seg-000001", dir, m.Segment)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "corrupted") || !strings.Contains(skipped[0], "seg-000002") {
		t.Errorf("skipped = %v, want one corruption warning naming seg-000002", skipped)
	}
}

func TestUnknownFormatVersionIsClearError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seg-000001")
	if err := Save(dir, Manifest{}, map[string][]byte{"s": nil}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ManifestName)
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"format_version": 1`, `"format_version": 99`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "format version 99 is not supported") {
		t.Fatalf("err = %v", err)
	}
}

func TestPruneKeepsNewest(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"seg-000001", "seg-000002", "seg-000003"} {
		if err := Save(filepath.Join(root, name), Manifest{}, map[string][]byte{"s": nil}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Prune(root, 2); err != nil {
		t.Fatal(err)
	}
	dirs, _ := List(root)
	if len(dirs) != 2 || filepath.Base(dirs[0]) != "seg-000002" {
		t.Errorf("after prune: %v", dirs)
	}
}

func TestInvalidFileName(t *testing.T) {
	if err := Save(filepath.Join(t.TempDir(), "c"), Manifest{}, map[string][]byte{"a/b": nil}); err == nil {
		t.Error("a file name with a separator was accepted")
	}
}

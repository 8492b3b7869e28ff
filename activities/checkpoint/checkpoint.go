// Package checkpoint stores training state as directories that are either complete and
// verified or not there at all.
//
// A checkpoint is a directory of files plus a manifest.json that records the format version,
// the spec hash, free-form counters and the SHA-256 of every file. Save writes everything under
// a temporary name, fsyncs each file and the directory, then renames it into place, so a crash
// mid-write leaves only a temporary directory that Load never looks at. Load verifies every
// checksum; Latest walks checkpoints newest first and falls back past any that fail to verify,
// reporting what it skipped.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// FormatVersion is the manifest format this package writes. Load rejects any other.
const FormatVersion = 1

// ManifestName is the file inside each checkpoint directory that describes it.
const ManifestName = "manifest.json"

const tmpPrefix = ".tmp-"

// Manifest describes one checkpoint directory.
type Manifest struct {
	FormatVersion int               `json:"format_version"`
	SpecHash      string            `json:"spec_hash"`
	Segment       int32             `json:"segment"`
	Counters      map[string]int64  `json:"counters,omitempty"`
	Files         map[string]string `json:"files"` // name -> hex SHA-256
	Created       time.Time         `json:"created"`
}

// Save writes files as the checkpoint dir (an existing directory of that name is replaced).
// File names must be plain names without separators.
func Save(dir string, m Manifest, files map[string][]byte) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, tmpPrefix+filepath.Base(dir)+"-")
	if err != nil {
		return fmt.Errorf("save checkpoint %q: %w", dir, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // no-op after a successful rename

	m.FormatVersion = FormatVersion
	m.Files = make(map[string]string, len(files))
	for name, data := range files {
		if name == ManifestName || strings.ContainsAny(name, `/\`) || name == "" {
			return fmt.Errorf("save checkpoint %q: invalid file name %q", dir, name)
		}
		if err := writeSynced(filepath.Join(tmp, name), data); err != nil {
			return fmt.Errorf("save checkpoint %q: %w", dir, err)
		}
		sum := sha256.Sum256(data)
		m.Files[name] = hex.EncodeToString(sum[:])
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("save checkpoint %q: %w", dir, err)
	}
	if err := writeSynced(filepath.Join(tmp, ManifestName), mb); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", dir, err)
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", dir, err)
	}
	crashForTest(dir)
	// A retried segment rewrites its own checkpoint: move the old one aside first so the
	// rename below is a plain rename, and delete it afterwards.
	var old string
	if _, err := os.Stat(dir); err == nil {
		old = filepath.Join(parent, tmpPrefix+"old-"+filepath.Base(dir))
		_ = os.RemoveAll(old)
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("save checkpoint %q: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", dir, err)
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return syncDir(parent)
}

// Load reads and verifies the checkpoint in dir. Every file listed in the manifest must exist
// with the recorded SHA-256; an unknown format version is an error that says so.
func Load(dir string) (Manifest, map[string][]byte, error) {
	var m Manifest
	mb, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return m, nil, fmt.Errorf("load checkpoint %q: %w", dir, err)
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		return m, nil, fmt.Errorf("load checkpoint %q: corrupt manifest: %w", dir, err)
	}
	if m.FormatVersion != FormatVersion {
		return m, nil, fmt.Errorf("load checkpoint %q: format version %d is not supported (this build reads version %d); use the accerl version that wrote it", dir, m.FormatVersion, FormatVersion)
	}
	files := make(map[string][]byte, len(m.Files))
	for name, want := range m.Files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return m, nil, fmt.Errorf("load checkpoint %q: %w", dir, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			return m, nil, fmt.Errorf("load checkpoint %q: file %s has SHA-256 %s, manifest says %s (corrupted)", dir, name, got[:12], want[:12])
		}
		files[name] = data
	}
	return m, files, nil
}

// List returns the complete-looking checkpoint directories under root, oldest first by name.
// Temporary directories from interrupted saves are skipped.
func List(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkpoints in %q: %w", root, err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), tmpPrefix) {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// Latest loads the newest checkpoint under root that verifies. Checkpoints that fail to load
// are skipped and described in skipped (newest first) so the caller can surface a warning.
// It returns an empty dir and no error when root holds no valid checkpoint.
func Latest(root string) (dir string, m Manifest, files map[string][]byte, skipped []string, err error) {
	dirs, err := List(root)
	if err != nil {
		return "", m, nil, nil, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		m, files, lerr := Load(dirs[i])
		if lerr == nil {
			return dirs[i], m, files, skipped, nil
		}
		skipped = append(skipped, lerr.Error())
	}
	return "", Manifest{}, nil, skipped, nil
}

// Prune deletes all but the newest keep checkpoints under root.
func Prune(root string, keep int) error {
	dirs, err := List(root)
	if err != nil {
		return err
	}
	for i := 0; i < len(dirs)-keep; i++ {
		if err := os.RemoveAll(dirs[i]); err != nil {
			return fmt.Errorf("prune checkpoint %q: %w", dirs[i], err)
		}
	}
	return nil
}

// KillDuringSaveEnv names an environment variable for crash tests only: when it holds the
// base name of a checkpoint directory (say "seg-000003") or a prefix of one ("step-"), the
// process kills itself with SIGKILL in the middle of saving the first such checkpoint — after
// its files are written, before the rename that makes it visible. accerl's crash test uses it
// to prove that a half-written checkpoint is never loaded.
const KillDuringSaveEnv = "ACCERL_TEST_KILL_DURING_CHECKPOINT_SAVE"

func crashForTest(dir string) {
	if name := os.Getenv(KillDuringSaveEnv); name != "" && strings.HasPrefix(filepath.Base(dir), name) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

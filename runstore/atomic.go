package runstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic creates path by calling write on a hidden temporary file in the same
// directory, fsyncing it, renaming it over path and fsyncing the directory, so readers see
// either the old file or the complete new one, never a partial one. Missing parent
// directories are created. Every file of a run goes through it, and so do other files a
// crash must never leave half-written (the world model's offline dataset, the report).
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteJSON writes v as indented JSON to path atomically (temporary file,
// fsync, rename). Parent directories are created.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write json %q: %w", path, err)
	}
	data = append(data, '\n')
	err = WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write json %q: %w", path, err)
	}
	return nil
}

// ReadJSON decodes the JSON file at path into v. A missing file yields an
// error that satisfies errors.Is(err, fs.ErrNotExist).
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read json: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read json %q: %w", path, err)
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of the file at path, the checksum manifests record for the
// files they list (datasets, demonstrations).
func FileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

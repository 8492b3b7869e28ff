package runstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // s3:// URLs: AWS S3 and S3-compatible servers (MinIO, Ceph, SeaweedFS)
	"gocloud.dev/gcerrors"
)

// An experiment's directory is either a local path (which every worker must see at the same
// path: one host, or a shared filesystem such as NFS or Lustre) or an object-store URL,
//
//	s3://BUCKET/PREFIX[?region=R&endpoint=http://HOST:PORT&use_path_style=true]
//
// with the query parameters of gocloud.dev's s3blob (region, endpoint, use_path_style,
// disable_https, profile, ...) and the credentials of the AWS SDK's usual chain
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, ~/.aws, an instance role) on every worker. The
// URL travels in the workflows' state, so a segment retried on another host finds the same
// files; secrets never do.
//
// Activities do not write to an object store file by file. They work on a WorkingCopy: a
// local directory under the store cache (StoreCacheEnv) that OpenWorkingCopy fills from the
// store, and that Publish uploads back, changed files only. Each object is uploaded under a
// hidden temporary key, read back and checked against its SHA-256, then copied to its real key,
// so a reader never sees a partial object; checkpoint and run manifests are published after
// the files they describe. An activity publishes before it reports a checkpoint, so whatever a
// workflow has been told exists is in the store.

// StoreCacheEnv names the environment variable that sets where working copies of object-store
// directories live (default: the user cache directory's accerl/store, e.g.
// ~/.cache/accerl/store). One cache per host is the intent; it may be deleted at any time
// between runs, and the next activity downloads what it needs again.
const StoreCacheEnv = "ACCERL_STORE_CACHE"

// storeRecordFile is the working copy's record of what the store holds (size, modification
// time and SHA-256 per object), so that a later open downloads only what changed. It is
// hidden, and so never published.
const storeRecordFile = ".accerl-store.json"

// IsStoreURL reports whether dir names an object store (s3://...) rather than a local
// directory.
func IsStoreURL(dir string) bool { return strings.HasPrefix(dir, "s3://") }

// JoinDir joins path elements onto dir, a local directory (as filepath.Join) or an
// object-store URL (onto its path, keeping its query).
func JoinDir(dir string, elem ...string) string {
	if !IsStoreURL(dir) {
		return filepath.Join(append([]string{dir}, elem...)...)
	}
	u, err := url.Parse(dir)
	if err != nil {
		// ParseStoreURL refused it before it got this far; keep the text for the error.
		return strings.Join(append([]string{dir}, elem...), "/")
	}
	u.Path = path.Join(append([]string{"/" + strings.TrimPrefix(u.Path, "/")}, elem...)...)
	return u.String()
}

// ParseStoreURL checks an object-store URL as a user wrote it (`accerl run --out`) and
// returns it in the form JoinDir and OpenWorkingCopy use: s3://BUCKET/PREFIX with the query
// kept as written. It says what is wrong and how to write it otherwise.
func ParseStoreURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %v", s, err)
	}
	if u.Scheme != "s3" {
		return "", fmt.Errorf("%q: accerl's object stores are s3:// (AWS S3 or an S3-compatible server such as MinIO or Ceph); for a filesystem give a path or file:///path", s)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q names no bucket: write s3://BUCKET/PREFIX", s)
	}
	if u.User != nil {
		return "", fmt.Errorf("%q carries credentials: remove them from the URL (it is stored in the workflow history) and set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY on every worker instead", redactURL(u))
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("%q: an object-store URL takes no #fragment", s)
	}
	p := strings.Trim(path.Clean("/"+u.Path), "/")
	if p == "" {
		return "", fmt.Errorf("%q names a whole bucket: add a prefix for this experiment's files, e.g. s3://%s/runs/NAME", s, u.Host)
	}
	u.Path = "/" + p
	return u.String(), nil
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = url.User("REDACTED")
	return c.String()
}

// WorkingCopy is a local directory that stands for an experiment's or a run's directory while
// an activity works on it: the directory itself when that is a local path, or a copy of an
// object-store prefix (see the comment above StoreCacheEnv). Close it when done.
type WorkingCopy struct {
	// Dir is the local directory to read and write.
	Dir string

	url     string // the store URL it copies; "" for a local directory
	bucket  *blob.Bucket
	prefix  string // object key prefix, ending in "/"
	include func(rel string) bool
	record  map[string]storeObject
}

// storeObject is what the working copy knows of one object of the store, and of the local
// file it was synced with: that file's size and modification time when it was downloaded or
// uploaded, so that an unchanged file is not hashed again.
type storeObject struct {
	Size       int64     `json:"size"`
	ModTime    time.Time `json:"mod_time"`
	SHA256     string    `json:"sha256"`
	LocalMTime time.Time `json:"local_mtime"`
}

// localMTime is the modification time of the file at p (zero when it cannot be read).
func localMTime(p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// CopyOption changes what OpenWorkingCopy copies.
type CopyOption func(*WorkingCopy)

// Only restricts a working copy to the files (paths relative to its directory, with slashes)
// for which keep returns true; the others are neither downloaded nor published nor removed.
func Only(keep func(rel string) bool) CopyOption {
	return func(w *WorkingCopy) { w.include = keep }
}

// OpenWorkingCopy returns a working copy of dir. For a local path it is the path itself and
// Publish does nothing. For an object-store URL it downloads every object under the prefix
// that the local copy lacks or holds in another version, and removes local files the store
// does not hold (the store is the truth: what another host published wins over what an
// interrupted activity left here unpublished).
func OpenWorkingCopy(ctx context.Context, dir string, opts ...CopyOption) (*WorkingCopy, error) {
	w := &WorkingCopy{Dir: dir, include: func(string) bool { return true }}
	for _, o := range opts {
		o(w)
	}
	if !IsStoreURL(dir) {
		return w, nil
	}
	canon, err := ParseStoreURL(dir)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(canon)
	w.url, w.prefix = canon, strings.TrimPrefix(u.Path, "/")+"/"
	if w.bucket, err = openBucket(ctx, u); err != nil {
		return nil, err
	}
	root, err := storeCacheRoot()
	if err != nil {
		w.bucket.Close()
		return nil, err
	}
	sum := sha256.Sum256([]byte(canon))
	w.Dir = filepath.Join(root, u.Host, strings.ReplaceAll(strings.TrimSuffix(w.prefix, "/"), "/", "__")+"-"+hex.EncodeToString(sum[:4]))
	if err := w.pull(ctx); err != nil {
		w.bucket.Close()
		return nil, fmt.Errorf("copy %s to %s: %w", canon, w.Dir, err)
	}
	return w, nil
}

// Close releases the connection to the store. It does not publish.
func (w *WorkingCopy) Close() error {
	if w.bucket == nil {
		return nil
	}
	return w.bucket.Close()
}

// Remote reports whether the working copy stands for an object store.
func (w *WorkingCopy) Remote() bool { return w.url != "" }

// Ref is the name of local (a path under Dir) as the workflow should record it: the store URL
// for a remote copy, local itself otherwise.
func (w *WorkingCopy) Ref(local string) string {
	if !w.Remote() {
		return local
	}
	rel, err := filepath.Rel(w.Dir, local)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return local
	}
	return JoinDir(w.url, filepath.ToSlash(rel))
}

// Local is the path under Dir of ref (what Ref returned, on this host or another). A ref
// outside this copy is an error.
func (w *WorkingCopy) Local(ref string) (string, error) {
	if !w.Remote() || ref == "" {
		return ref, nil
	}
	if !IsStoreURL(ref) {
		return "", fmt.Errorf("%s is a local path, but this run's files are in %s", ref, w.url)
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	base, _ := url.Parse(w.url)
	rel := strings.TrimPrefix(r.Path, "/") + "/"
	if r.Host != base.Host || r.RawQuery != base.RawQuery || !strings.HasPrefix(rel, w.prefix) {
		return "", fmt.Errorf("%s is not under %s", ref, w.url)
	}
	return filepath.Join(w.Dir, filepath.FromSlash(strings.TrimSuffix(strings.TrimPrefix(rel, w.prefix), "/"))), nil
}

// Publish uploads the files of the working copy that changed since it was opened or last
// published, manifests last, and deletes from the store the objects whose local files were
// removed (pruned checkpoints, discarded segments). Hidden files (a leading dot in any path
// element: temporary files of atomic writes) are skipped.
func (w *WorkingCopy) Publish(ctx context.Context) error {
	if !w.Remote() {
		return nil
	}
	local, err := w.localFiles()
	if err != nil {
		return fmt.Errorf("publish %s: %w", w.url, err)
	}
	rels := make([]string, 0, len(local))
	for rel := range local {
		rels = append(rels, rel)
	}
	// Files that describe others (a checkpoint's manifest.json, the run summary) go last: a
	// reader who finds them finds what they describe.
	last := func(rel string) bool {
		b := path.Base(rel)
		return b == "manifest.json" || b == SummaryFile || b == ExperimentFile
	}
	slices.SortFunc(rels, func(a, b string) int {
		if la, lb := last(a), last(b); la != lb {
			if la {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	for _, rel := range rels {
		sum := local[rel]
		if w.record[rel].SHA256 == sum {
			continue
		}
		obj, err := w.upload(ctx, rel, sum)
		if err != nil {
			return fmt.Errorf("publish %s: %w", JoinDir(w.url, rel), err)
		}
		obj.LocalMTime = localMTime(filepath.Join(w.Dir, filepath.FromSlash(rel)))
		w.record[rel] = obj
	}
	for rel := range w.record {
		if _, ok := local[rel]; ok || !w.include(rel) {
			continue
		}
		if err := w.bucket.Delete(ctx, w.prefix+rel); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("publish %s: remove %s: %w", w.url, rel, err)
		}
		delete(w.record, rel)
	}
	return w.saveRecord()
}

// upload writes the file rel under a hidden temporary key, reads it back to check its SHA-256,
// then copies it to its key and removes the temporary one.
func (w *WorkingCopy) upload(ctx context.Context, rel, sum string) (storeObject, error) {
	key := w.prefix + rel
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tmp := path.Join(path.Dir(key), ".upload-"+path.Base(key)+"-"+hex.EncodeToString(nonce[:]))
	defer func() { _ = w.bucket.Delete(context.WithoutCancel(ctx), tmp) }() // a no-op once copied and deleted
	f, err := os.Open(filepath.Join(w.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return storeObject{}, err
	}
	defer f.Close()
	bw, err := w.bucket.NewWriter(ctx, tmp, &blob.WriterOptions{
		ContentType: "application/octet-stream", Metadata: map[string]string{"sha256": sum}})
	if err != nil {
		return storeObject{}, err
	}
	if _, err := io.Copy(bw, f); err != nil {
		bw.Close()
		return storeObject{}, err
	}
	if err := bw.Close(); err != nil {
		return storeObject{}, err
	}
	got, _, err := w.readSHA256(ctx, tmp)
	if err != nil {
		return storeObject{}, err
	}
	if got != sum {
		return storeObject{}, fmt.Errorf("the uploaded copy reads back with SHA-256 %.12s, the file has %.12s (the store or the network corrupts data)", got, sum)
	}
	if err := w.bucket.Copy(ctx, key, tmp, nil); err != nil {
		return storeObject{}, err
	}
	attrs, err := w.bucket.Attributes(ctx, key)
	if err != nil {
		return storeObject{}, err
	}
	if attrs.Metadata["sha256"] != sum {
		return storeObject{}, fmt.Errorf("after the copy the object records SHA-256 %q, not %.12s", attrs.Metadata["sha256"], sum)
	}
	if err := w.bucket.Delete(ctx, tmp); err != nil {
		return storeObject{}, err
	}
	return storeObject{Size: attrs.Size, ModTime: attrs.ModTime, SHA256: sum}, nil
}

// readSHA256 reads the object key through and returns its SHA-256 and size.
func (w *WorkingCopy) readSHA256(ctx context.Context, key string) (string, int64, error) {
	r, err := w.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// pull makes Dir equal to the store's prefix (for the included files): see OpenWorkingCopy.
func (w *WorkingCopy) pull(ctx context.Context) error {
	w.record = map[string]storeObject{}
	_ = ReadJSON(filepath.Join(w.Dir, storeRecordFile), &w.record) // none yet, or unreadable: download all
	seen := map[string]bool{}
	it := w.bucket.List(&blob.ListOptions{Prefix: w.prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(obj.Key, w.prefix)
		if obj.IsDir || rel == "" || hiddenPath(rel) || !w.include(rel) {
			continue
		}
		seen[rel] = true
		local := filepath.Join(w.Dir, filepath.FromSlash(rel))
		if rec, ok := w.record[rel]; ok && rec.Size == obj.Size && rec.ModTime.Equal(obj.ModTime) {
			if st, err := os.Stat(local); err == nil && st.Size() == obj.Size {
				continue
			}
		}
		got, err := w.download(ctx, obj.Key, local)
		if err != nil {
			return fmt.Errorf("download %s: %w", rel, err)
		}
		w.record[rel] = storeObject{Size: obj.Size, ModTime: obj.ModTime, SHA256: got, LocalMTime: localMTime(local)}
	}
	// Local files the store lacks go (only their names are needed: no hashing).
	var stale []string
	if err := w.walkLocal(func(rel, p string, _ fs.DirEntry) error {
		if !seen[rel] {
			stale = append(stale, p)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return err
		}
		// A directory emptied this way goes too: an empty checkpoint directory would be
		// taken for a broken checkpoint.
		for d := filepath.Dir(p); d != w.Dir && os.Remove(d) == nil; d = filepath.Dir(d) {
		}
	}
	for rel := range w.record {
		if !seen[rel] && w.include(rel) {
			delete(w.record, rel)
		}
	}
	return w.saveRecord()
}

// download writes the object key to local atomically and checks it against the SHA-256 that
// Publish recorded on it (objects that another tool wrote have none, and are taken as read).
func (w *WorkingCopy) download(ctx context.Context, key, local string) (string, error) {
	h := sha256.New()
	err := WriteFileAtomic(local, func(f io.Writer) error {
		r, err := w.bucket.NewReader(ctx, key, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(io.MultiWriter(f, h), r)
		return err
	})
	if err != nil {
		return "", err
	}
	got := hex.EncodeToString(h.Sum(nil))
	attrs, err := w.bucket.Attributes(ctx, key)
	if err != nil {
		return "", err
	}
	if want := attrs.Metadata["sha256"]; want != "" && want != got {
		os.Remove(local)
		return "", fmt.Errorf("it reads with SHA-256 %.12s, but was published with %.12s: the object is corrupt or was overwritten by another tool", got, want)
	}
	return got, nil
}

// localFiles maps the included, non-hidden files under Dir (relative, slash-separated) to their
// SHA-256.
func (w *WorkingCopy) localFiles() (map[string]string, error) {
	files := map[string]string{}
	err := w.walkLocal(func(rel, p string, d fs.DirEntry) error {
		// Files are only ever replaced whole (WriteFileAtomic, checkpoint directories renamed
		// into place), which gives them a new modification time: one whose size and time are
		// those recorded at the last sync still holds the recorded bytes.
		if rec, ok := w.record[rel]; ok && !rec.LocalMTime.IsZero() {
			if info, err := d.Info(); err == nil && info.Size() == rec.Size && info.ModTime().Equal(rec.LocalMTime) {
				files[rel] = rec.SHA256
				return nil
			}
		}
		sum, err := FileSHA256(p)
		if err != nil {
			return err
		}
		files[rel] = sum
		return nil
	})
	return files, err
}

// walkLocal calls f for each included, non-hidden regular file under Dir, with its path
// relative to Dir (slash-separated) and on disk.
func (w *WorkingCopy) walkLocal(f func(rel, p string, d fs.DirEntry) error) error {
	return filepath.WalkDir(w.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == w.Dir {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(w.Dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if hiddenPath(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || !w.include(rel) {
			return nil
		}
		return f(rel, p, d)
	})
}

func (w *WorkingCopy) saveRecord() error {
	return WriteJSON(filepath.Join(w.Dir, storeRecordFile), w.record)
}

// hiddenPath reports whether a slash-separated relative path has an element starting with a
// dot: temporary files of atomic writes and uploads, and the working copy's record.
func hiddenPath(rel string) bool {
	for _, e := range strings.Split(rel, "/") {
		if strings.HasPrefix(e, ".") {
			return true
		}
	}
	return false
}

// openBucket opens the bucket of an object-store URL (its host, with its query parameters).
func openBucket(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	bucketURL := *u
	bucketURL.Path = ""
	b, err := blob.OpenBucket(ctx, bucketURL.String())
	if err != nil {
		return nil, fmt.Errorf("open object store %s: %w", bucketURL.String(), err)
	}
	return b, nil
}

func storeCacheRoot() (string, error) {
	if d := os.Getenv(StoreCacheEnv); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for object-store working copies (%v): set %s", err, StoreCacheEnv)
	}
	return filepath.Join(d, "accerl", "store"), nil
}

// ReadStoreFile reads one file of an experiment directory (a local path or an object-store URL
// made with JoinDir), without a working copy: what `accerl status` needs.
func ReadStoreFile(ctx context.Context, file string) ([]byte, error) {
	if !IsStoreURL(file) {
		return os.ReadFile(file)
	}
	u, err := url.Parse(file)
	if err != nil {
		return nil, err
	}
	key := strings.TrimPrefix(u.Path, "/")
	b, err := openBucket(ctx, u)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	data, err := b.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("%s: %w", file, fs.ErrNotExist)
	}
	return data, err
}

// ReadStoreJSON decodes one JSON file of an experiment directory (ReadStoreFile). A missing
// file yields an error that satisfies errors.Is(err, fs.ErrNotExist).
func ReadStoreJSON(ctx context.Context, file string, v any) error {
	data, err := ReadStoreFile(ctx, file)
	if err != nil {
		return fmt.Errorf("read json: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read json %q: %w", file, err)
	}
	return nil
}

// CheckStore opens the object store of dir and lists its prefix, so that `accerl run` can say
// before it starts anything that the store cannot be reached or the credentials are refused.
// A local directory passes.
func CheckStore(ctx context.Context, dir string) error {
	if !IsStoreURL(dir) {
		return nil
	}
	canon, err := ParseStoreURL(dir)
	if err != nil {
		return err
	}
	u, _ := url.Parse(canon)
	b, err := openBucket(ctx, u)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, _, err := b.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: strings.TrimPrefix(u.Path, "/") + "/"}); err != nil {
		return fmt.Errorf("cannot list %s: %v; check the bucket, the endpoint and the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) on this host and on every worker", canon, err)
	}
	return nil
}

package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"fris.dev/pkg/kv"
	backupv1 "fris.dev/proto/backup/v1"
)

// Result is a store file written: by Fetch (a backup) or Restore (the
// service's store).
type Result struct {
	Path   string
	Size   int64
	SHA256 []byte
	// Transaction and FileName are the service's summary (Fetch only).
	Transaction uint64
	FileName    string
}

// tmpSuffix names the file a copy is written to before it is complete.
const tmpSuffix = ".tmp"

// Fetch asks the service for a snapshot of its store and writes it to
// path: into path.tmp first, synced, read back and checked against the
// size and SHA-256 the service sent, opened as a store, and only then
// renamed to path, so path is never a partial copy. An existing path is
// refused unless force.
func Fetch(ctx context.Context, c backupv1.BackupAdminClient, path string, force bool) (Result, error) {
	if err := refuseExisting(path, force); err != nil {
		return Result{}, err
	}
	var sum *backupv1.SnapshotSummary
	res, err := writeNew(path, func(w io.Writer) error {
		stream, err := c.Snapshot(ctx, &backupv1.SnapshotRequest{})
		if err != nil {
			return err
		}
		for {
			m, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if sum != nil {
				return errors.New("the service sent data after its summary")
			}
			if _, err := w.Write(m.GetData()); err != nil {
				return err
			}
			sum = m.GetSummary()
		}
		if sum == nil {
			return errors.New("the service's stream ended without its summary: the copy is incomplete")
		}
		return nil
	}, func(got Result) error {
		if got.Size != sum.GetSizeBytes() || !bytes.Equal(got.SHA256, sum.GetSha256()) {
			return fmt.Errorf("the copy on disk (%d bytes, sha256 %x) differs from what the service sent (%d bytes, sha256 %x)",
				got.Size, got.SHA256, sum.GetSizeBytes(), sum.GetSha256())
		}
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	res.Transaction, res.FileName = sum.GetTransaction(), sum.GetFileName()
	return res, nil
}

// Restore puts the store file from in place as the named service's store
// in dataDir (kv.BoltFile): after checking that it is a whole store file,
// and that no running service holds the store there (bbolt's file lock),
// it is copied next to it and renamed over it, so the service finds
// either its old store or the whole copy. An existing store is replaced
// only with force.
func Restore(dataDir, name, from string, force bool) (Result, error) {
	if err := kv.CheckBoltFile(from); err != nil {
		return Result{}, fmt.Errorf("not restored: %w", err)
	}
	target := kv.BoltFile(dataDir, name)
	inUse, err := kv.BoltInUse(target)
	if err != nil {
		return Result{}, err
	}
	if inUse {
		return Result{}, fmt.Errorf("not restored: %s is in use (a running %s service holds it): stop the service first", target, name)
	}
	if err := refuseExisting(target, force); err != nil {
		return Result{}, fmt.Errorf("not restored: %w (with the service stopped)", err)
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return Result{}, err
	}
	src, err := os.Open(from)
	if err != nil {
		return Result{}, err
	}
	defer src.Close()
	return writeNew(target, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	}, func(Result) error { return nil })
}

func refuseExisting(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: -force replaces it", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeNew writes path through path.tmp: fill writes the content, which
// is synced, read back and hashed; check judges that, the copy must open
// as a store, and then it is renamed to path and the directory synced.
// path.tmp is removed on failure; one that exists already is another
// copy in progress (or one that was killed), and refused.
func writeNew(path string, fill func(io.Writer) error, check func(Result) error) (Result, error) {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return Result{}, fmt.Errorf("%s exists: another copy is being written there, or one was stopped; remove it if none runs", tmp)
	}
	if err != nil {
		return Result{}, err
	}
	done := false
	defer func() {
		if !done {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return Result{}, err
	}
	if err := f.Sync(); err != nil {
		return Result{}, err
	}
	if err := f.Close(); err != nil {
		return Result{}, err
	}
	res, err := hashFile(tmp)
	if err != nil {
		return Result{}, err
	}
	if err := check(res); err != nil {
		return Result{}, err
	}
	if err := kv.CheckBoltFile(tmp); err != nil {
		return Result{}, fmt.Errorf("the copy is no whole store: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return Result{}, err
	}
	done = true
	res.Path = path
	return res, syncDir(filepath.Dir(path))
}

func hashFile(path string) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Result{}, err
	}
	return Result{Size: n, SHA256: h.Sum(nil)}, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

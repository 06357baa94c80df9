package kv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BoltFile is the embedded store file of the named service under dataDir,
// as Open opens it and restore replaces it.
func BoltFile(dataDir, name string) string {
	return filepath.Join(dataDir, name+".db")
}

// SnapshotInfo describes a snapshot Snapshot wrote.
type SnapshotInfo struct {
	// Size is the number of bytes written.
	Size int64
	// Transaction is the id of the last write transaction the snapshot
	// holds.
	Transaction uint64
	// FileName is the store file's name in its directory ("upload.db").
	FileName string
}

// Snapshotter is a store that can copy itself while it serves. The
// embedded store is one; Redis is not (Redis's own persistence backs it
// up).
type Snapshotter interface {
	// Snapshot writes a consistent copy of the whole store to w: a file
	// that opens as the store, holding every write committed before it
	// began and none after.
	Snapshot(ctx context.Context, w io.Writer) (SnapshotInfo, error)
}

// Snapshot writes the store file as of one read transaction (bbolt's
// Tx.WriteTo): writes go on meanwhile, into pages the snapshot does not
// read, because bbolt reuses no page a reader may still see. The copy is
// a store file of its own; ctx ending stops it.
func (b *Bolt) Snapshot(ctx context.Context, w io.Writer) (SnapshotInfo, error) {
	info := SnapshotInfo{FileName: filepath.Base(b.db.Path())}
	err := b.db.View(func(tx *bolt.Tx) error {
		info.Transaction = uint64(tx.ID())
		n, err := tx.WriteTo(ctxWriter{ctx: ctx, w: w})
		info.Size = n
		if err != nil && ctx.Err() != nil {
			// bbolt keeps only the text of the writer's error.
			return ctx.Err()
		}
		return err
	})
	if err != nil {
		return info, fmt.Errorf("kv: snapshot of %s: %w", info.FileName, err)
	}
	return info, nil
}

// ctxWriter fails writes once ctx has ended, so a snapshot whose caller
// went away ends its read transaction at the next write.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// ErrBoltInUse is a store file another process holds open: a running
// service.
var ErrBoltInUse = errors.New("kv: the store file is in use")

// lockWait is how long the checks below wait for bbolt's file lock. A
// running service holds it for as long as it runs, so a short wait tells.
const lockWait = 500 * time.Millisecond

// CheckBoltFile reports whether path is a whole store file of this
// package: it opens (read-only, so it changes nothing) as a bbolt database
// that passes bbolt's consistency check and has the store's buckets.
// ErrBoltInUse when a running process holds it.
func CheckBoltFile(path string) (err error) {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return fmt.Errorf("%s is not a store file: empty or not a regular file", path)
	}
	db, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	if errors.Is(err, bolt.ErrTimeout) {
		return fmt.Errorf("%w: %s", ErrBoltInUse, path)
	}
	if err != nil {
		return fmt.Errorf("%s is not a store file: %w", path, err)
	}
	defer db.Close()
	// A damaged file can make bbolt panic while it walks the pages.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s is not a store file: damaged: %v", path, p)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		// bbolt maps pages past the end of a file cut short without
		// noticing: its pages must all be there.
		if tx.Size() > st.Size() {
			return fmt.Errorf("%s is cut short: %d bytes of the store's %d", path, st.Size(), tx.Size())
		}
		for _, name := range [][]byte{bucketData, bucketExpires} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%s is a bbolt database but not a FRIS store (no bucket %q)", path, name)
			}
		}
		var errs []error
		for e := range tx.Check() {
			// Drain the channel: its goroutine ends only when it is read.
			if len(errs) < 5 {
				errs = append(errs, e)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s is a damaged store file: %w", path, errors.Join(errs...))
		}
		return nil
	})
}

// BoltInUse reports whether a process holds the store file at path open
// (bbolt's file lock). A missing file is not in use; a file that is no
// store at all is not either, as long as nobody locked it.
func BoltInUse(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_ = f.Close()
	db, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	switch {
	case err == nil:
		return false, db.Close()
	case errors.Is(err, bolt.ErrTimeout):
		return true, nil
	default:
		// The file opened above, and bbolt takes the lock before it reads
		// anything: a later error (a damaged or foreign file) means
		// nobody held it.
		return false, nil
	}
}

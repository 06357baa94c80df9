// Package backup copies a service's embedded store while the service runs,
// and puts a copy back while it is stopped: the admin RPC every service
// registers (Register), and the `backup` and `restore` subcommands every
// service binary has (Commands). A store in Redis is Redis's to back up
// (README, "Backup and restore").
package backup

import (
	"context"
	"crypto/sha256"
	"hash"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/rpcerr"
	backupv1 "fris.dev/proto/backup/v1"
)

// chunkBytes is the data in one message: well under gRPC's 4 MiB default
// limit of a received message, large enough that framing costs nothing.
const chunkBytes = 256 << 10

// Register adds the BackupAdmin service for the named service's store to
// s. The access table admits the operator's certificate only to a service
// whose name ends in Admin (pkg/server, defaultAccess).
func Register(s grpc.ServiceRegistrar, name string, store kv.Store, a *audit.Logger, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	backupv1.RegisterBackupAdminServer(s, &server{name: name, store: store, audit: a, log: log})
}

type server struct {
	backupv1.UnimplementedBackupAdminServer
	name  string
	store kv.Store
	audit *audit.Logger
	log   *slog.Logger
}

// Snapshot streams the store as one read transaction sees it, then a
// summary with the size and SHA-256 of what it sent. Every backup is in
// the audit log: a copy of the store is a copy of its secrets.
func (s *server) Snapshot(_ *backupv1.SnapshotRequest, stream grpc.ServerStreamingServer[backupv1.SnapshotChunk]) error {
	ctx := stream.Context()
	start := time.Now()
	sum, err := s.snapshot(ctx, stream)
	err = rpcerr.From(ctx, s.log, err)
	attrs := []slog.Attr{}
	if sum != nil {
		attrs = append(attrs, slog.Int64("bytes", sum.GetSizeBytes()), slog.Uint64("transaction", sum.GetTransaction()))
		s.log.InfoContext(ctx, "backup: snapshot sent", "file", sum.GetFileName(), "bytes", sum.GetSizeBytes(),
			"transaction", sum.GetTransaction(), "seconds", time.Since(start).Seconds())
	}
	s.audit.Record(ctx, audit.Event{Action: s.name + ".admin.Backup", Actor: audit.ActorAdmin, Err: err, Attrs: attrs, Class: audit.ClassAdmin})
	return err
}

func (s *server) snapshot(ctx context.Context, stream grpc.ServerStreamingServer[backupv1.SnapshotChunk]) (*backupv1.SnapshotSummary, error) {
	snap, ok := s.store.(kv.Snapshotter)
	if !ok {
		return nil, rpcerr.New(rpcerr.ErrPrecondition, "the %s service keeps its data in Redis, which this command does not copy: "+
			"back Redis up with its own persistence (redis-cli --rdb FILE, or BGSAVE and a copy of dump.rdb, or the AOF directory; "+
			"README, \"Backup and restore\")", s.name)
	}
	w := &chunks{send: stream.Send, hash: sha256.New()}
	info, err := snap.Snapshot(ctx, w)
	if err == nil {
		err = w.flush()
	}
	if err != nil {
		return nil, err
	}
	sum := &backupv1.SnapshotSummary{SizeBytes: w.n, Sha256: w.hash.Sum(nil), Transaction: info.Transaction, FileName: info.FileName}
	return sum, stream.Send(&backupv1.SnapshotChunk{Summary: sum})
}

// chunks sends what is written to it in messages of chunkBytes, hashing
// and counting it.
type chunks struct {
	send func(*backupv1.SnapshotChunk) error
	buf  []byte
	hash hash.Hash
	n    int64
}

func (c *chunks) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if c.buf == nil {
			// A new buffer per message: a sent message may still be read
			// (stats handlers), so none is reused.
			c.buf = make([]byte, 0, chunkBytes)
		}
		k := min(len(p), chunkBytes-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		written += k
		if len(c.buf) == chunkBytes {
			if err := c.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (c *chunks) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	c.hash.Write(c.buf)
	c.n += int64(len(c.buf))
	err := c.send(&backupv1.SnapshotChunk{Data: c.buf})
	c.buf = nil
	return err
}

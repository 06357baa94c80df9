package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"fris.dev/pkg/backup"
	"fris.dev/pkg/grpctest"
	"fris.dev/pkg/kv"
	backupv1 "fris.dev/proto/backup/v1"
)

// storeFile makes a store file with a record (a snapshot: the size of
// its pages, without the room a store grows into) and returns its path
// and bytes.
func storeFile(t *testing.T, dir, name string) (string, []byte) {
	t.Helper()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "src.db"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Update(ctx, func(tx kv.Tx) error { return tx.Put("k", []byte(name), 0) }); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := db.Snapshot(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// scripted is a BackupAdmin that sends the messages it is given.
type scripted struct {
	backupv1.UnimplementedBackupAdminServer
	msgs []*backupv1.SnapshotChunk
}

func (s scripted) Snapshot(_ *backupv1.SnapshotRequest, stream grpc.ServerStreamingServer[backupv1.SnapshotChunk]) error {
	for _, m := range s.msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// TestFetchChecksTheCopy: a copy that differs from what the service
// summed, a stream cut before its summary, or data that is no store never
// become the backup file, and leave no temporary file behind.
func TestFetchChecksTheCopy(t *testing.T) {
	dir := t.TempDir()
	_, good := storeFile(t, dir, "src.db")
	sum := sha256.Sum256(good)
	summary := func(size int64, h []byte) *backupv1.SnapshotChunk {
		return &backupv1.SnapshotChunk{Summary: &backupv1.SnapshotSummary{SizeBytes: size, Sha256: h, Transaction: 2, FileName: "svc.db"}}
	}
	half := len(good) / 2
	text := []byte(strings.Repeat("no store here\n", 400))
	textSum := sha256.Sum256(text)
	for _, tc := range []struct {
		name string
		msgs []*backupv1.SnapshotChunk
		want string // "" = the backup is written
	}{
		{"whole, in two chunks", []*backupv1.SnapshotChunk{{Data: good[:half]}, {Data: good[half:]}, summary(int64(len(good)), sum[:])}, ""},
		{"a byte changed", []*backupv1.SnapshotChunk{{Data: append(append([]byte{}, good[:half]...), good[half]^1)}, {Data: good[half+1:]}, summary(int64(len(good)), sum[:])}, "differs"},
		{"a chunk lost", []*backupv1.SnapshotChunk{{Data: good[:half]}, summary(int64(len(good)), sum[:])}, "differs"},
		{"no summary", []*backupv1.SnapshotChunk{{Data: good}}, "without its summary"},
		{"data after the summary", []*backupv1.SnapshotChunk{{Data: good}, summary(int64(len(good)), sum[:]), {Data: []byte("x")}}, "after its summary"},
		{"not a store", []*backupv1.SnapshotChunk{{Data: text}, summary(int64(len(text)), textSum[:])}, "no whole store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := grpctest.Serve(t, func(s *grpc.Server) { backupv1.RegisterBackupAdminServer(s, scripted{msgs: tc.msgs}) })
			out := filepath.Join(t.TempDir(), "backup.db")
			res, err := backup.Fetch(context.Background(), backupv1.NewBackupAdminClient(cc), out, false)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(out)
				if !bytes.Equal(b, good) || res.Size != int64(len(good)) || res.FileName != "svc.db" {
					t.Fatalf("wrote %d bytes (result %+v), want the %d sent", len(b), res, len(good))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch = %v, want an error with %q", err, tc.want)
			}
			for _, p := range []string{out, out + ".tmp"} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s is left: %v", p, err)
				}
			}
		})
	}
}

// TestFetchRefusesToOverwrite: an existing backup stays unless -force; a
// temporary file of another backup is not touched.
func TestFetchRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	_, good := storeFile(t, dir, "src.db")
	sum := sha256.Sum256(good)
	msgs := []*backupv1.SnapshotChunk{{Data: good}, {Summary: &backupv1.SnapshotSummary{SizeBytes: int64(len(good)), Sha256: sum[:]}}}
	c := backupv1.NewBackupAdminClient(grpctest.Serve(t, func(s *grpc.Server) { backupv1.RegisterBackupAdminServer(s, scripted{msgs: msgs}) }))
	ctx := context.Background()

	out := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(out, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Fetch(ctx, c, out, false); err == nil || !strings.Contains(err.Error(), "-force") {
		t.Fatalf("Fetch over an existing file: %v, want a refusal naming -force", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "an older backup" {
		t.Fatal("the existing file changed")
	}
	if _, err := backup.Fetch(ctx, c, out, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, good) {
		t.Fatal("-force did not replace the file")
	}

	busy := filepath.Join(dir, "busy.db")
	if err := os.WriteFile(busy+".tmp", []byte("in progress"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Fetch(ctx, c, busy, true); err == nil || !strings.Contains(err.Error(), "busy.db.tmp exists") {
		t.Fatalf("Fetch beside another's temporary file: %v", err)
	}
	if b, _ := os.ReadFile(busy + ".tmp"); string(b) != "in progress" {
		t.Fatal("another backup's temporary file changed")
	}
}

func TestRestore(t *testing.T) {
	src := t.TempDir()
	backupFile, good := storeFile(t, src, "backup.db")
	text := filepath.Join(src, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("not a store\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	// A data directory whose store is held by a running service.
	liveDir := t.TempDir()
	live, err := kv.OpenBolt(kv.BoltFile(liveDir, "svc"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// One with a stopped service's store.
	oldDir := t.TempDir()
	_, old := storeFile(t, oldDir, "svc.db")

	for _, tc := range []struct {
		name    string
		dir     string
		from    string
		force   bool
		want    string // "" = restored
		wantNow []byte // the store file's content afterwards (nil: none)
	}{
		{"into an empty directory", filepath.Join(t.TempDir(), "new", "data"), backupFile, false, "", good},
		{"not a store", t.TempDir(), text, true, "not a store file", nil},
		{"a missing file", t.TempDir(), filepath.Join(src, "none.db"), true, "no such file", nil},
		{"onto a running service's store", liveDir, backupFile, true, "in use", nil},
		{"over a store without -force", oldDir, backupFile, false, "-force", old},
		{"over a store with -force", oldDir, backupFile, true, "", good},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := backup.Restore(tc.dir, "svc", tc.from, tc.force)
			target := kv.BoltFile(tc.dir, "svc")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if sum := sha256.Sum256(good); res.Path != target || !bytes.Equal(res.SHA256, sum[:]) {
					t.Fatalf("result %+v", res)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restore = %v, want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(target + ".tmp"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("temporary file left: %v", err)
			}
			if tc.dir == liveDir {
				return // the live store's content is its own
			}
			got, err := os.ReadFile(target)
			if tc.wantNow == nil {
				if !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a store file appeared: %v", err)
				}
				return
			}
			if !bytes.Equal(got, tc.wantNow) {
				t.Fatalf("the store file holds %d bytes, not the %d expected", len(got), len(tc.wantNow))
			}
		})
	}
	// The running service's store is untouched and still works.
	if err := live.Update(context.Background(), func(tx kv.Tx) error { return tx.Put("still", []byte("here"), 0) }); err != nil {
		t.Fatal(err)
	}
}

package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/backup"
	"fris.dev/pkg/devca"
	"fris.dev/pkg/grpctest"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/mtls"
	"fris.dev/pkg/rpcclient"
	"fris.dev/pkg/server"
	backupv1 "fris.dev/proto/backup/v1"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// fill writes n records of size bytes each.
func fill(t *testing.T, db kv.Store, n, size int) {
	t.Helper()
	for i := range n {
		k := "rec/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()
		if err := db.Update(context.Background(), func(tx kv.Tx) error { return tx.Put(k, bytes.Repeat([]byte{byte(i)}, size), 0) }); err != nil {
			t.Fatal(err)
		}
	}
}

// serve runs a service named "svc" on pkg/server with mutual TLS, its
// BackupAdmin on db, and returns its address and the certificates of the
// deployment's CA by name.
func serve(t *testing.T, db kv.Store) (addr string, cert func(string) mtls.Config, logs *syncBuf) {
	t.Helper()
	dir := t.TempDir()
	if _, err := devca.Ensure(dir, []string{"svc", mtls.Gateway, mtls.Admin}, devca.Options{}); err != nil {
		t.Fatal(err)
	}
	cert = func(name string) mtls.Config {
		return mtls.Config{Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+"-key.pem"), CA: filepath.Join(dir, "ca.pem")}
	}
	logs = &syncBuf{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	auditLog := audit.New(logs, "svc")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, server.Config{GRPCAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, MaxRecvBytes: 1 << 20, TLS: cert("svc")},
			server.Service{Name: "svc", Log: log, Register: func(s *grpc.Server) { backup.Register(s, "svc", db, auditLog, log) }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for range 500 {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec map[string]string
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "listening" {
				return rec["grpc"], cert, logs
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no listening log: %s", logs.String())
	return
}

func client(t *testing.T, addr string, as mtls.Config) backupv1.BackupAdminClient {
	t.Helper()
	opt, err := as.DialOption()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := rpcclient.Dial(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return backupv1.NewBackupAdminClient(cc)
}

// TestBackupOverMutualTLS: the operator's certificate fetches a copy that
// holds every record, several chunks long; every other certificate of the
// deployment is refused, and the backup is in the audit log.
func TestBackupOverMutualTLS(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.OpenBolt(filepath.Join(dir, "svc.db"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fill(t, db, 40, 32<<10) // about 1.3 MiB: several messages
	addr, cert, logs := serve(t, db)
	ctx := context.Background()

	out := filepath.Join(dir, "backup.db")
	res, err := backup.Fetch(ctx, client(t, addr, cert(mtls.Admin)), out, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); res.Size != int64(len(b)) || !bytes.Equal(res.SHA256, sum[:]) || res.FileName != "svc.db" || res.Transaction == 0 {
		t.Fatalf("result %+v for a file of %d bytes, sha256 %x", res, len(b), sum)
	}
	if res.Size < 1<<20 {
		t.Fatalf("backup of %d bytes, want the whole store (over 1 MiB)", res.Size)
	}
	copyDB, err := kv.OpenBolt(out, kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := copyDB.Scan(ctx, "rec/", "", 0)
	_ = copyDB.Close()
	if err != nil || len(got) != 40 {
		t.Fatalf("the copy holds %d records (%v), want 40", len(got), err)
	}
	if _, err := os.Stat(out + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is left: %v", err)
	}
	if !strings.Contains(logs.String(), `"action":"svc.admin.Backup"`) {
		t.Fatalf("no audit record of the backup:\n%s", logs.String())
	}

	for _, name := range []string{mtls.Gateway, "svc"} {
		t.Run("refused to "+name, func(t *testing.T) {
			out := filepath.Join(dir, "as-"+name+".db")
			_, err := backup.Fetch(ctx, client(t, addr, cert(name)), out, false)
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("backup with the %s certificate: %v, want PermissionDenied", name, err)
			}
			for _, p := range []string{out, out + ".tmp"} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s is left after a refusal: %v", p, err)
				}
			}
		})
	}
}

// notSnapshotter is a store that cannot copy itself, as the Redis store.
type notSnapshotter struct{ kv.Store }

func TestBackupOfAStoreWithoutSnapshots(t *testing.T) {
	cc := grpctest.Serve(t, func(s *grpc.Server) { backup.Register(s, "svc", notSnapshotter{}, nil, nil) })
	out := filepath.Join(t.TempDir(), "b.db")
	_, err := backup.Fetch(context.Background(), backupv1.NewBackupAdminClient(cc), out, false)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "Redis") || !strings.Contains(err.Error(), "--rdb") {
		t.Fatalf("backup of a Redis store: %v, want FailedPrecondition pointing at Redis's persistence", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was left: %v", err)
	}
}

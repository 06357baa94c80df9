package service

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/grpctest"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/password"
	brokerv1 "fris.dev/proto/broker/v1"
	uploadv1 "fris.dev/proto/upload/v1"
	"fris.dev/services/upload/internal/storage"
)

// fakeBroker is the broker's site registry.
type fakeBroker struct {
	brokerv1.UnimplementedBrokerAdminServer
	mu      sync.Mutex
	sites   []string
	created []string
	down    bool
}

func (f *fakeBroker) GetSite(_ context.Context, r *brokerv1.GetSiteRequest) (*brokerv1.Site, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, status.Error(codes.Unavailable, "down")
	}
	if !slices.Contains(f.sites, r.GetId()) {
		return nil, status.Errorf(codes.NotFound, "no site %s", r.GetId())
	}
	return &brokerv1.Site{Id: r.GetId()}, nil
}

func (f *fakeBroker) CreateSite(_ context.Context, r *brokerv1.CreateSiteRequest) (*brokerv1.Site, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, status.Error(codes.Unavailable, "down")
	}
	if !r.GetIfMissing() || r.GetNameDe() != r.GetId() || r.GetNameEn() != r.GetId() {
		return nil, status.Error(codes.InvalidArgument, "the migration creates sites named by their ids, if missing")
	}
	if !slices.Contains(f.sites, r.GetId()) {
		f.sites = append(f.sites, r.GetId())
		f.created = append(f.created, r.GetId())
	}
	return &brokerv1.Site{Id: r.GetId()}, nil
}

func sitesFixture(t *testing.T, b *fakeBroker, db kv.Store) (*Service, uploadv1.UploadAdminClient) {
	bc := grpctest.Serve(t, func(s *grpc.Server) { brokerv1.RegisterBrokerAdminServer(s, b) })
	svc := New(Config{MaxDocumentBytes: 4096, MaxDepth: 16, Sites: BrokerSites{Client: brokerv1.NewBrokerAdminClient(bc)}}, storage.New(db),
		password.New(password.Params{Time: 1, Memory: 1024, Threads: 1}, time.Minute), nil, nil, slog.New(slog.DiscardHandler))
	cc := grpctest.Serve(t, func(s *grpc.Server) { uploadv1.RegisterUploadAdminServer(s, Admin{Service: svc}) })
	return svc, uploadv1.NewUploadAdminClient(cc)
}

func openDB(t *testing.T) kv.Store {
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "u.db"), kv.BoltOptions{NoSync: true, Partitions: storage.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestCredentialSiteChecked: a credential names a site of the registry;
// an unknown one is refused with its name, and a registry that does not
// answer refuses for now rather than letting a typo through.
func TestCredentialSiteChecked(t *testing.T) {
	b := &fakeBroker{sites: []string{"charite"}}
	_, admin := sitesFixture(t, b, openDB(t))
	ctx := context.Background()
	for _, c := range []struct {
		name, user, site string
		down             bool
		want             codes.Code
		msg              string
	}{
		{"known", "u1", "charite", false, codes.OK, ""},
		{"unknown", "u2", "dresdn", false, codes.InvalidArgument, `unknown site "dresdn"`},
		{"registry down", "u3", "charite", true, codes.Unavailable, "site registry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b.mu.Lock()
			b.down = c.down
			b.mu.Unlock()
			_, err := admin.CreateCredential(ctx, &uploadv1.CreateCredentialRequest{Username: c.user, Teiler: &uploadv1.Teiler{SiteId: c.site, TeilerId: "t1"}})
			if status.Code(err) != c.want || !strings.Contains(status.Convert(err).Message(), c.msg) {
				t.Fatalf("CreateCredential = %v, want %v %q", err, c.want, c.msg)
			}
		})
	}
	res, err := admin.ListCredentials(ctx, &uploadv1.ListCredentialsRequest{})
	if err != nil || len(res.GetCredentials()) != 1 {
		t.Fatalf("credentials = %v, %v", res, err)
	}
}

// TestMigrateSites: the sites of credentials written before the registry
// are put into it, each once; a broker that is down is an error to retry.
func TestMigrateSites(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	st := storage.New(db)
	for _, c := range []storage.Credential{
		{Username: "a", Teiler: storage.Teiler{SiteID: "leipzig", TeilerID: "t1"}},
		{Username: "b", Teiler: storage.Teiler{SiteID: "leipzig", TeilerID: "t2"}},
		{Username: "c", Teiler: storage.Teiler{SiteID: "charite", TeilerID: "t1"}},
	} {
		if err := st.CreateCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	b := &fakeBroker{sites: []string{"charite"}, down: true}
	svc, _ := sitesFixture(t, b, db)
	if err := svc.MigrateSites(ctx); status.Code(err) != codes.Unavailable {
		t.Fatalf("migration with the broker down = %v", err)
	}
	b.down = false
	for range 2 {
		if err := svc.MigrateSites(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(b.created, []string{"leipzig"}) {
		t.Fatalf("created %v, want [leipzig]", b.created)
	}
}

package service

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"fris.dev/pkg/grpctest"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/importer"
	"fris.dev/services/mdr/internal/storage"
)

// serve starts the public and admin APIs of svc in memory.
func serve(t *testing.T, svc *Service) (mdrv1.MdrServiceClient, mdrv1.MdrAdminClient) {
	t.Helper()
	cc := grpctest.Serve(t, func(s *grpc.Server) {
		mdrv1.RegisterMdrServiceServer(s, Public{Service: svc})
		mdrv1.RegisterMdrAdminServer(s, Admin{Service: svc})
	})
	return mdrv1.NewMdrServiceClient(cc), mdrv1.NewMdrAdminClient(cc)
}

func newStore(t *testing.T) storage.Store {
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "mdr.db"), kv.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return storage.New(db)
}

func demo(t *testing.T) *mdrv1.Registry {
	f, err := os.Open("../../demo/mdr16.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, err := importer.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestCheckValues(t *testing.T) {
	ctx := context.Background()
	svc, err := New(ctx, newStore(t), quiet(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pub, adm := serve(t, svc)
	if _, err := adm.Import(ctx, &mdrv1.ImportRequest{Registry: demo(t)}); err != nil {
		t.Fatal(err)
	}
	res, err := pub.CheckValues(ctx, &mdrv1.CheckValuesRequest{Checks: []*mdrv1.ValueCheck{
		{Urn: "urn:mdr16:dataelement:14:1", Value: "42"},
		{Urn: "urn:mdr16:dataelement:14:1", Value: "121"},
		{Urn: "urn:mdr16:dataelement:13:1", Value: "24.12.2019 13:45:00"},
		{Urn: "urn:mdr16:dataelement:13:1", Value: "2019-12-24 13:45:00"},
		{Urn: "urn:mdr16:dataelement:14:latest", Value: "0"},
		{Urn: "urn:mdr16:dataelement:999:1", Value: "x"},
		{Urn: "garbage", Value: "x"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, false, true, false, true, false, false}
	for i, v := range res.GetVerdicts() {
		if v.GetValid() != want[i] || (v.GetValid() == (v.GetReason() != "")) {
			t.Errorf("check %d (%s=%q): valid=%v reason=%q", i, v.GetUrn(), v.GetValue(), v.GetValid(), v.GetReason())
		}
	}
	// The enumerated element accepts exactly its permissible values.
	el, err := pub.GetDataElement(ctx, &mdrv1.UrnRequest{Urn: "urn:mdr16:dataelement:23:1"})
	if err != nil {
		t.Fatal(err)
	}
	var checks []*mdrv1.ValueCheck
	for _, pv := range el.GetValidation().GetPermissibleValues() {
		checks = append(checks, &mdrv1.ValueCheck{Urn: "urn:mdr16:dataelement:23:1", Value: pv.GetValue()})
	}
	checks = append(checks, &mdrv1.ValueCheck{Urn: "urn:mdr16:dataelement:23:1", Value: "not-a-sex"})
	res, err = pub.CheckValues(ctx, &mdrv1.CheckValuesRequest{Checks: checks})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.GetVerdicts() {
		if v.GetValid() != (i < len(checks)-1) {
			t.Errorf("enumerated %q: valid=%v %s", v.GetValue(), v.GetValid(), v.GetReason())
		}
	}
	_, err = pub.CheckValues(ctx, &mdrv1.CheckValuesRequest{Checks: make([]*mdrv1.ValueCheck, maxChecks+1)})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("too many checks = %v", err)
	}
}

func TestImportErrorsAndPrivateVisibility(t *testing.T) {
	ctx := context.Background()
	svc, err := New(ctx, newStore(t), quiet(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pub, adm := serve(t, svc)
	if _, err := adm.Import(ctx, &mdrv1.ImportRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("empty import = %v", err)
	}
	bad := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{{Name: "x", Members: []string{"urn:x:dataelement:1:1"}}}}
	if _, err := adm.Import(ctx, &mdrv1.ImportRequest{Registry: bad}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("dangling root member = %v", err)
	}
	priv := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{{
		Name: "secret", Private: true, Members: []string{"urn:secret:dataelement:1:1"},
		Elements: []*mdrv1.Element{{Urn: "urn:secret:dataelement:1:1", Designations: []*mdrv1.Designation{{Lang: "en", Designation: "S"}}}},
	}}}
	if _, err := adm.Import(ctx, &mdrv1.ImportRequest{Registry: priv}); err != nil {
		t.Fatal(err)
	}
	as := func(scopes ...string) context.Context {
		id := identity.Identity{Subject: "7", Scopes: scopes}
		return metadata.NewOutgoingContext(ctx, metadata.Pairs(id.Pairs()...))
	}
	for _, tc := range []struct {
		ctx  context.Context
		want int
	}{
		{ctx, 0},
		{as(), 0},
		{as("mdr:other"), 0},
		{as("mdr:secret"), 1},
		{as("openid", "mdr:*"), 1},
		// Scopes without a verified subject are not an identity.
		{metadata.NewOutgoingContext(ctx, metadata.Pairs(identity.KeyScope, "mdr:*")), 0},
	} {
		res, err := pub.ListNamespaces(tc.ctx, &mdrv1.ListNamespacesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetNamespaces()) != tc.want {
			t.Errorf("%v: %d namespaces, want %d", tc.ctx, len(res.GetNamespaces()), tc.want)
		}
	}
	if _, err := pub.GetDataElement(as("mdr:secret"), &mdrv1.UrnRequest{Urn: "urn:secret:dataelement:1:1"}); err != nil {
		t.Fatalf("granted: %v", err)
	}
	if _, err := pub.GetDataElement(ctx, &mdrv1.UrnRequest{Urn: "urn:secret:dataelement:1:1"}); status.Code(err) != codes.NotFound {
		t.Fatalf("anonymous: %v", err)
	}
}

func TestReplicaSeesImportThroughAnother(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	a, err := New(ctx, store, quiet(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ctx, store, quiet(), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	_, admA := serve(t, a)
	pubB, _ := serve(t, b)
	if _, err := admA.Import(ctx, &mdrv1.ImportRequest{Registry: demo(t)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := pubB.ListNamespaces(ctx, &mdrv1.ListNamespacesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetNamespaces()) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica b never saw the import made through replica a")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAdminListNamespacesStatus: the operators' list says how many elements
// each namespace holds, the registry's generation and when it last changed.
func TestAdminListNamespacesStatus(t *testing.T) {
	ctx := context.Background()
	svc, err := New(ctx, newStore(t), quiet(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, admin := serve(t, svc)
	empty, err := admin.ListNamespaces(ctx, &mdrv1.AdminListNamespacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.GetNamespaces()) != 0 || empty.GetGeneration() != 0 || empty.GetLastChange() != nil {
		t.Fatalf("empty registry: %v", empty)
	}
	before := time.Now()
	if _, err := admin.Import(ctx, &mdrv1.ImportRequest{Registry: demo(t)}); err != nil {
		t.Fatal(err)
	}
	res, err := admin.ListNamespaces(ctx, &mdrv1.AdminListNamespacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetNamespaces()) != 1 || res.GetNamespaces()[0].GetName() != "mdr16" || res.GetNamespaces()[0].GetElements() == 0 {
		t.Fatalf("namespaces %v", res.GetNamespaces())
	}
	at := res.GetLastChange().AsTime()
	if res.GetGeneration() != 1 || at.Before(before.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
		t.Fatalf("generation %d, last change %v (import began %v)", res.GetGeneration(), at, before)
	}
}

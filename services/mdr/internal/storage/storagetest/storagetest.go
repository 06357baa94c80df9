// Package storagetest is the registry store's conformance suite, run against
// every backend.
package storagetest

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	mdrv1 "fris.dev/proto/mdr/v1"
	"fris.dev/services/mdr/internal/storage"
)

func ns(name string, urns ...string) *mdrv1.NamespaceDef {
	d := &mdrv1.NamespaceDef{Name: name, Designations: []*mdrv1.Designation{{Lang: "de", Designation: "Größe " + name}}}
	for _, u := range urns {
		d.Elements = append(d.Elements, &mdrv1.Element{Urn: u, Designations: []*mdrv1.Designation{{Lang: "en", Designation: u}}})
		d.Members = append(d.Members, u)
	}
	return d
}

// Run runs the suite; open returns a fresh, empty store for each case,
// which runs as a subtest of its name.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s storage.Store)
	}{
		{"Empty", testEmpty},
		{"ImportLoadRoundTrip", testImportLoadRoundTrip},
		{"ImportMergesByURN", testImportMergesByURN},
		{"ReimportIsIdempotent", testReimportIsIdempotent},
		{"RejectedImportChangesNothing", testRejectedImportChangesNothing},
		{"DeleteNamespace", testDeleteNamespace},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func testEmpty(t *testing.T, s storage.Store) {
	ctx := context.Background()
	gen, defs, err := s.Load(ctx)
	if err != nil || gen != 0 || len(defs) != 0 {
		t.Fatalf("Load on empty = %d, %v, %v", gen, defs, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func testImportLoadRoundTrip(t *testing.T, s storage.Store) {
	ctx := context.Background()
	reg := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{
		ns("b", "urn:b:dataelement:1:1"),
		ns("a", "urn:a:dataelement:1:1", "urn:a:dataelement:2:1"),
	}}
	gen, err := s.Import(ctx, reg, nil)
	if err != nil || gen != 1 {
		t.Fatalf("Import = %d, %v", gen, err)
	}
	g2, defs, err := s.Load(ctx)
	if err != nil || g2 != 1 || len(defs) != 2 {
		t.Fatalf("Load = %d, %d defs, %v", g2, len(defs), err)
	}
	if defs[0].GetName() != "a" || !proto.Equal(defs[0], reg.Namespaces[1]) {
		t.Fatalf("namespace a changed in storage: %v", defs[0])
	}
	if g, _ := s.Generation(ctx); g != 1 {
		t.Fatalf("Generation = %d", g)
	}
}

func testImportMergesByURN(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if _, err := s.Import(ctx, &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{ns("a", "urn:a:dataelement:1:1", "urn:a:dataelement:2:1")}}, nil); err != nil {
		t.Fatal(err)
	}
	upd := ns("a", "urn:a:dataelement:2:1", "urn:a:dataelement:3:1")
	upd.Elements[0].Designations[0].Designation = "changed"
	upd.Private = true
	gen, err := s.Import(ctx, &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{upd}}, nil)
	if err != nil || gen != 2 {
		t.Fatalf("second Import = %d, %v", gen, err)
	}
	_, defs, _ := s.Load(ctx)
	var urns []string
	for _, e := range defs[0].GetElements() {
		urns = append(urns, e.GetUrn())
	}
	if len(urns) != 3 || urns[0] != "urn:a:dataelement:1:1" || urns[1] != "urn:a:dataelement:2:1" || urns[2] != "urn:a:dataelement:3:1" {
		t.Fatalf("merged elements = %v", urns)
	}
	if defs[0].GetElements()[1].GetDesignations()[0].GetDesignation() != "changed" || !defs[0].GetPrivate() {
		t.Fatalf("import did not replace: %v", defs[0])
	}
	if len(defs[0].GetMembers()) != 2 {
		t.Fatalf("root members not replaced: %v", defs[0].GetMembers())
	}
}

func testReimportIsIdempotent(t *testing.T, s storage.Store) {
	ctx := context.Background()
	reg := &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{ns("a", "urn:a:dataelement:1:1")}}
	_, _ = s.Import(ctx, reg, nil)
	_, first, _ := s.Load(ctx)
	_, _ = s.Import(ctx, reg, nil)
	_, second, _ := s.Load(ctx)
	if len(first) != len(second) || !proto.Equal(first[0], second[0]) {
		t.Fatalf("re-import changed content:\n%v\n%v", first, second)
	}
}

func testRejectedImportChangesNothing(t *testing.T, s storage.Store) {
	ctx := context.Background()
	_, _ = s.Import(ctx, &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{ns("a", "urn:a:dataelement:1:1")}}, nil)
	bad := errors.New("dangling member")
	var seen int
	_, err := s.Import(ctx, &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{ns("a", "urn:a:dataelement:9:1"), ns("z")}}, func(all []*mdrv1.NamespaceDef) error {
		seen = len(all)
		return bad
	})
	if !errors.Is(err, bad) {
		t.Fatalf("Import = %v, want the check's error", err)
	}
	if seen != 2 {
		t.Fatalf("check saw %d namespaces, want the merged 2", seen)
	}
	gen, defs, _ := s.Load(ctx)
	if gen != 1 || len(defs) != 1 || len(defs[0].GetElements()) != 1 {
		t.Fatalf("rejected import left gen %d, %v", gen, defs)
	}
}

func testDeleteNamespace(t *testing.T, s storage.Store) {
	ctx := context.Background()
	_, _ = s.Import(ctx, &mdrv1.Registry{Namespaces: []*mdrv1.NamespaceDef{ns("a"), ns("b")}}, nil)
	gen, err := s.DeleteNamespace(ctx, "a", nil)
	if err != nil || gen != 2 {
		t.Fatalf("DeleteNamespace = %d, %v", gen, err)
	}
	if _, err := s.DeleteNamespace(ctx, "a", nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete = %v, want ErrNotFound", err)
	}
	_, defs, _ := s.Load(ctx)
	if len(defs) != 1 || defs[0].GetName() != "b" {
		t.Fatalf("after delete: %v", defs)
	}
	veto := errors.New("still referenced")
	if _, err := s.DeleteNamespace(ctx, "b", func(rest []*mdrv1.NamespaceDef) error {
		if len(rest) != 0 {
			t.Errorf("check saw %d namespaces, want 0", len(rest))
		}
		return veto
	}); !errors.Is(err, veto) {
		t.Fatalf("vetoed delete = %v", err)
	}
	if _, defs, _ := s.Load(ctx); len(defs) != 1 {
		t.Fatalf("vetoed delete removed the namespace")
	}
}

package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"

	mdrv1 "fris.dev/proto/mdr/v1"
)

// fakeAdmin is a registry holding the given namespaces that counts imports.
type fakeAdmin struct {
	mdrv1.UnimplementedMdrAdminServer
	namespaces []string
	imports    int
}

func (f *fakeAdmin) ListNamespaces(context.Context, *mdrv1.AdminListNamespacesRequest) (*mdrv1.AdminListNamespacesResponse, error) {
	res := &mdrv1.AdminListNamespacesResponse{}
	for _, n := range f.namespaces {
		res.Namespaces = append(res.Namespaces, &mdrv1.NamespaceInfo{Name: n})
	}
	return res, nil
}

func (f *fakeAdmin) Import(context.Context, *mdrv1.ImportRequest) (*mdrv1.ImportResponse, error) {
	f.imports++
	return &mdrv1.ImportResponse{Namespaces: 1}, nil
}

// serveAdmin serves f on a loopback port, as `mdr serve` would.
func serveAdmin(t *testing.T, f *fakeAdmin) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	mdrv1.RegisterMdrAdminServer(s, f)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func TestImportIfEmpty(t *testing.T) {
	for _, tc := range []struct {
		name       string
		namespaces []string
		flags      []string
		imports    int
		out        string
	}{
		{"empty registry", nil, []string{"-if-empty"}, 1, "imported 1 namespace(s)"},
		{"operator's registry", []string{"dktk", "gbn"}, []string{"-if-empty"}, 0,
			"not importing ../../demo/mdr16.json: the registry already has 2 namespace(s)"},
		{"without the flag, imports over it", []string{"dktk"}, nil, 1, "imported 1 namespace(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAdmin{namespaces: tc.namespaces}
			addr := serveAdmin(t, f)
			args := append([]string{"import", "-addr", addr, "-insecure-plaintext"}, tc.flags...)
			args = append(args, "../../demo/mdr16.json")
			var out bytes.Buffer
			if err := Run(context.Background(), args, strings.NewReader(""), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if f.imports != tc.imports {
				t.Errorf("%d import(s), want %d", f.imports, tc.imports)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("output %q, want it to contain %q", out.String(), tc.out)
			}
		})
	}
}

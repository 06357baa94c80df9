package storage

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"fris.dev/pkg/kv"
)

// TestDecodedRecordsAreCopies: the users and clients the store keeps
// decoded are handed out as copies, so a caller that changes one in place
// changes no other caller's. The clone functions copy the slice fields;
// a new field of a kind shared by reference fails here until they copy it.
func TestDecodedRecordsAreCopies(t *testing.T) {
	cloned := map[reflect.Type][]string{
		reflect.TypeOf(User{}):   {"Scopes", "Removed", "TOTP", "TOTPPending", "RequiredActions"},
		reflect.TypeOf(Client{}): {"RedirectURLs"},
	}
	var walk func(t *testing.T, typ reflect.Type, path string, want map[string]bool)
	walk = func(t *testing.T, typ reflect.Type, path string, want map[string]bool) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
				if !want[path+f.Name] {
					t.Errorf("%s%s is shared by reference: the store's clone function must copy it", path, f.Name)
				}
			case reflect.Struct:
				walk(t, f.Type, path+f.Name+".", want)
			}
		}
	}
	for typ, names := range cloned {
		want := map[string]bool{}
		for _, n := range names {
			want[n] = true
		}
		walk(t, typ, "", want)
	}

	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := New(db, nil)
	ctx := context.Background()
	if err := db.Update(ctx, func(tx kv.Tx) error {
		if err := kv.PutJSON(tx, pUser+id32(7), User{ID: 7, Email: "a@b.example", Scopes: []string{"x"}}, 0); err != nil {
			return err
		}
		return kv.PutJSON(tx, pClient+"c", Client{ID: "c", RedirectURLs: []string{"https://a.example/cb"}}, 0)
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		u, err := s.GetUser(ctx, 7)
		if err != nil || len(u.Scopes) != 1 || u.Scopes[0] != "x" {
			t.Fatalf("user %+v, %v", u, err)
		}
		u.Scopes[0] = "changed"
		c, err := s.GetClient(ctx, "c")
		if err != nil || len(c.RedirectURLs) != 1 || c.RedirectURLs[0] != "https://a.example/cb" {
			t.Fatalf("client %+v, %v", c, err)
		}
		c.RedirectURLs[0] = "changed"
	}
}

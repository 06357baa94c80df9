package storagetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"fris.dev/services/auth/internal/storage"
)

func testClients(t *testing.T, s storage.Store) {
	ctx := context.Background()
	now := time.Now()
	c := storage.Client{ID: "c1", Name: "Client", RedirectURLs: []string{"https://a/cb", "https://b/cb"}, Type: "MDR", SecretHash: "h", Created: now.Unix()}
	if err := s.CreateClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateClient(ctx, c); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("duplicate client = %v", err)
	}
	got, err := s.GetClient(ctx, "c1")
	if err != nil || got.Name != "Client" || len(got.RedirectURLs) != 2 {
		t.Fatalf("GetClient = %+v, %v", got, err)
	}
	if err := s.UpdateClient(ctx, "c1", func(c *storage.Client) error { c.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetClient(ctx, "c1"); !got.Disabled {
		t.Fatal("update lost")
	}
	if _, err := s.GetClient(ctx, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown client = %v", err)
	}
	if err := s.UpdateClient(ctx, "nope", func(*storage.Client) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("update unknown = %v", err)
	}
	_ = s.CreateClient(ctx, storage.Client{ID: "c0", Name: "Zero"})
	cs, _ := s.ListClients(ctx)
	if len(cs) != 2 || cs[0].ID != "c0" {
		t.Fatalf("ListClients = %+v", cs)
	}
}

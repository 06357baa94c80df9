package storagetest

import (
	"context"
	"errors"
	"testing"

	"fris.dev/services/broker/internal/storage"
)

func testSites(t *testing.T, s storage.Store) {
	ctx := context.Background()
	if got, err := s.Sites(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Sites of an empty store = %+v, %v", got, err)
	}
	dd := storage.Site{ID: "dresden", NameDE: "Universitätsklinikum Dresden", NameEN: "University Hospital Dresden", CreatedAt: 1}
	ch := storage.Site{ID: "charite", NameDE: "Charité", NameEN: "Charité", Contact: "info@charite.de", LogoURL: "https://charite.de/logo.png", CreatedAt: 2}
	for _, site := range []storage.Site{dd, ch} {
		if err := s.CreateSite(ctx, site); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSite(ctx, storage.Site{ID: "charite", NameDE: "other"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("CreateSite of a taken id = %v, want ErrExists", err)
	}
	if got, err := s.Site(ctx, "charite"); err != nil || got != ch {
		t.Fatalf("Site = %+v, %v; want %+v", got, err, ch)
	}
	if _, err := s.Site(ctx, "dresdn"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown site: %v", err)
	}
	// Replies' times: the latest wins, whatever order they arrive in.
	for _, at := range []int64{50, 70, 60} {
		if err := s.SiteReplied(ctx, "dresden", at); err != nil {
			t.Fatal(err)
		}
	}
	up, err := s.UpdateSite(ctx, "dresden", func(site *storage.Site) error {
		site.NameEN, site.Contact = "Dresden University Hospital", "x@ukdd.de"
		return nil
	})
	if err != nil || up.NameEN != "Dresden University Hospital" || up.NameDE != dd.NameDE || up.LastReplyAt != 70 {
		t.Fatalf("UpdateSite = %+v, %v", up, err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateSite(ctx, "dresden", func(site *storage.Site) error { site.NameDE = "x"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateSite error = %v", err)
	}
	if _, err := s.UpdateSite(ctx, "nosuch", func(*storage.Site) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("UpdateSite of an unknown site = %v", err)
	}
	got, err := s.Sites(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("Sites = %+v, %v", got, err)
	}
	if got[0].ID != "charite" || got[0].LastReplyAt != 0 || got[1].ID != "dresden" || got[1].NameDE != dd.NameDE || got[1].LastReplyAt != 70 {
		t.Fatalf("Sites = %+v", got)
	}
}

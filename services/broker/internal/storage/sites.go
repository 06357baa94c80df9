package storage

import (
	"context"
	"encoding/binary"
	"errors"

	"fris.dev/pkg/kv"
)

// Site is one site of the network, the site registry's record.
type Site struct {
	ID        string `json:"id"`
	NameDE    string `json:"name_de"`
	NameEN    string `json:"name_en"`
	Contact   string `json:"contact,omitempty"`
	LogoURL   string `json:"logo_url,omitempty"`
	CreatedAt int64  `json:"created_at"`
	// LastReplyAt (unix nanoseconds, 0: never) is read from its own record,
	// which every reply updates, so that replies and an operator's edits
	// never contend for one key.
	LastReplyAt int64 `json:"-"`
}

const (
	sitePrefix  = "site/"
	replyAtPref = "site-reply/"
)

func (s *KV) CreateSite(ctx context.Context, site Site) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if err := absent(ctx, tx, sitePrefix+site.ID); err != nil {
			return err
		}
		return kv.PutJSON(tx, sitePrefix+site.ID, site, 0)
	})
}

func (s *KV) Site(ctx context.Context, id string) (Site, error) {
	site, err := kv.GetJSON[Site](ctx, s.db, sitePrefix+id)
	if err != nil {
		return Site{}, err
	}
	site.LastReplyAt, err = s.replyAt(ctx, s.db, id)
	return site, err
}

func (s *KV) replyAt(ctx context.Context, r kv.Reader, id string) (int64, error) {
	v, err := r.Get(ctx, replyAtPref+id)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil || len(v) != 8 {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func (s *KV) UpdateSite(ctx context.Context, id string, fn func(*Site) error) (Site, error) {
	var out Site
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		site, err := kv.GetJSON[Site](ctx, tx, sitePrefix+id)
		if err != nil {
			return err
		}
		if err := fn(&site); err != nil {
			return err
		}
		site.ID = id
		out = site
		return kv.PutJSON(tx, sitePrefix+id, site, 0)
	})
	if err != nil {
		return Site{}, err
	}
	out.LastReplyAt, err = s.replyAt(ctx, s.db, id)
	return out, err
}

func (s *KV) Sites(ctx context.Context) ([]Site, error) {
	sites, err := kv.ScanJSON[Site](ctx, s.db, sitePrefix, "", 0)
	if err != nil {
		return nil, err
	}
	times, err := s.db.Scan(ctx, replyAtPref, "", 0)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int64, len(times))
	for _, e := range times {
		if len(e.Value) == 8 {
			at[e.Key[len(replyAtPref):]] = int64(binary.BigEndian.Uint64(e.Value))
		}
	}
	for i := range sites {
		sites[i].LastReplyAt = at[sites[i].ID]
	}
	return sites, nil
}

func (s *KV) SiteReplied(ctx context.Context, id string, at int64) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		old, err := s.replyAt(ctx, tx, id)
		if err != nil || old >= at {
			// A reply that overtook this one on another replica keeps its time.
			return err
		}
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(at))
		return tx.Put(replyAtPref+id, b[:], 0)
	})
}

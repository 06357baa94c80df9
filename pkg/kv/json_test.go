package kv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/kv/kvtest"
)

type record struct {
	Name  string   `json:"name"`
	Count int      `json:"count,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// TestJSON holds the JSON helpers to their contract on both backends.
func TestJSON(t *testing.T) {
	kvtest.Backends(t, func(t *testing.T, open func(t *testing.T) kv.Store) {
		for _, c := range []struct {
			name string
			run  func(t *testing.T, s kv.Store)
		}{
			{"RoundTrip", testJSONRoundTrip},
			{"MissingIsNotFound", testJSONMissing},
			{"CorruptRecordNamesItsKey", testJSONCorrupt},
			{"UnencodableWritesNothing", testJSONUnencodable},
			{"ScanOrderPrefixAndPaging", testJSONScan},
			{"ScanFailsOnACorruptRecord", testJSONScanCorrupt},
			{"InsideATransaction", testJSONInTx},
			{"CacheDecodesOnlyNewBytes", testJSONCache},
		} {
			t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
		}
	})
}

func putJSON(t *testing.T, s kv.Store, key string, v any) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx kv.Tx) error { return kv.PutJSON(tx, key, v, 0) }); err != nil {
		t.Fatalf("PutJSON %s: %v", key, err)
	}
}

func putRaw(t *testing.T, s kv.Store, key, v string) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx kv.Tx) error { return tx.Put(key, []byte(v), 0) }); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func testJSONRoundTrip(t *testing.T, s kv.Store) {
	ctx := context.Background()
	want := record{Name: "ä/\"x\"", Count: 3, Tags: []string{"a", "b"}}
	putJSON(t, s, "r/1", want)
	got, err := kv.GetJSON[record](ctx, s, "r/1")
	if err != nil || got.Name != want.Name || got.Count != 3 || fmt.Sprint(got.Tags) != "[a b]" {
		t.Fatalf("GetJSON = %+v, %v; want %+v", got, err, want)
	}
	// Stored as plain JSON, so records written before the helper still read.
	raw, _ := s.Get(ctx, "r/1")
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m["name"] != want.Name {
		t.Fatalf("stored %s (%v), want the record as JSON", raw, err)
	}
	// A pointer type decodes too.
	if p, err := kv.GetJSON[*record](ctx, s, "r/1"); err != nil || p == nil || p.Count != 3 {
		t.Fatalf("GetJSON[*record] = %+v, %v", p, err)
	}
}

func testJSONMissing(t *testing.T, s kv.Store) {
	got, err := kv.GetJSON[record](context.Background(), s, "nope")
	// Exactly what Get returns, not wrapped: an absent record reads as it
	// did before the helper, message included.
	if err != kv.ErrNotFound || got.Name != "" {
		t.Fatalf("GetJSON missing = %+v, %v; want ErrNotFound", got, err)
	}
}

func testJSONCorrupt(t *testing.T, s kv.Store) {
	putRaw(t, s, "r/bad", `{"name":"half`)
	got, err := kv.GetJSON[record](context.Background(), s, "r/bad")
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) || !strings.Contains(err.Error(), "r/bad") || errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("GetJSON corrupt = %v, want a decode error naming the key", err)
	}
	if got.Name != "" {
		t.Fatalf("GetJSON corrupt returned %+v, want the zero record", got)
	}
	putRaw(t, s, "r/type", `{"name":7}`)
	if _, err := kv.GetJSON[record](context.Background(), s, "r/type"); err == nil {
		t.Fatal("GetJSON with a number for a string succeeded")
	}
}

func testJSONUnencodable(t *testing.T, s kv.Store) {
	ctx := context.Background()
	err := s.Update(ctx, func(tx kv.Tx) error {
		if err := kv.PutJSON(tx, "r/ok", record{Name: "ok"}, 0); err != nil {
			return err
		}
		return kv.PutJSON(tx, "r/chan", make(chan int), 0)
	})
	var unsupported *json.UnsupportedTypeError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "r/chan") {
		t.Fatalf("PutJSON of a channel = %v, want an encode error naming the key", err)
	}
	if _, err := s.Get(ctx, "r/ok"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("the failed transaction wrote r/ok: %v", err)
	}
}

func testJSONScan(t *testing.T, s kv.Store) {
	ctx := context.Background()
	for _, k := range []string{"r/c", "r/a", "r/b", "q/a", "r"} {
		putJSON(t, s, k, record{Name: k})
	}
	names := func(rs []record) string {
		var ns []string
		for _, r := range rs {
			ns = append(ns, r.Name)
		}
		return fmt.Sprint(ns)
	}
	if got, err := kv.ScanJSON[record](ctx, s, "r/", "", 0); err != nil || names(got) != "[r/a r/b r/c]" {
		t.Fatalf("ScanJSON r/ = %v, %v", names(got), err)
	}
	if got, err := kv.ScanJSON[record](ctx, s, "r/", "r/a", 1); err != nil || names(got) != "[r/b]" {
		t.Fatalf("ScanJSON after r/a, limit 1 = %v, %v", names(got), err)
	}
	// Nothing under the prefix: an empty list, not nil, and no error.
	if got, err := kv.ScanJSON[record](ctx, s, "none/", "", 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ScanJSON none/ = %#v, %v", got, err)
	}
}

func testJSONScanCorrupt(t *testing.T, s kv.Store) {
	putJSON(t, s, "r/a", record{Name: "a"})
	putRaw(t, s, "r/b", "not json")
	got, err := kv.ScanJSON[record](context.Background(), s, "r/", "", 0)
	if err == nil || !strings.Contains(err.Error(), "r/b") || got != nil {
		t.Fatalf("ScanJSON over a corrupt record = %v, %v; want an error naming r/b", got, err)
	}
}

func testJSONInTx(t *testing.T, s kv.Store) {
	ctx := context.Background()
	putJSON(t, s, "r/n", record{Name: "n", Count: 1})
	// The read-modify-write every store does: read, change, write back.
	for i := 0; i < 3; i++ {
		err := s.Update(ctx, func(tx kv.Tx) error {
			r, err := kv.GetJSON[record](ctx, tx, "r/n")
			if err != nil {
				return err
			}
			r.Count++
			return kv.PutJSON(tx, "r/n", r, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, err := kv.GetJSON[record](ctx, s, "r/n"); err != nil || got.Count != 4 {
		t.Fatalf("after three increments = %+v, %v", got, err)
	}
	err := s.Update(ctx, func(tx kv.Tx) error {
		if err := kv.PutJSON(tx, "r/new", record{Name: "new"}, 0); err != nil {
			return err
		}
		rs, err := kv.ScanJSON[record](ctx, tx, "r/", "", 0)
		if err != nil || len(rs) != 2 || rs[1].Name != "new" {
			return fmt.Errorf("ScanJSON in tx = %+v, %v; want its own write", rs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// counted counts how often it is decoded.
type counted struct{ record }

var decodeCount int

func (c *counted) UnmarshalJSON(b []byte) error {
	decodeCount++
	return json.Unmarshal(b, &c.record)
}

func testJSONCache(t *testing.T, s kv.Store) {
	ctx := context.Background()
	clone := func(c counted) counted { c.Tags = slices.Clone(c.Tags); return c }
	cache := kv.NewJSONCache[counted](2, clone)
	putJSON(t, s, "c/1", record{Name: "one", Tags: []string{"a"}})
	decodeCount = 0
	get := func(key string) counted {
		t.Helper()
		v, err := cache.Get(ctx, s, key)
		if err != nil {
			t.Fatalf("Get %s: %v", key, err)
		}
		return v
	}
	first := get("c/1")
	first.Tags[0] = "changed by a caller"
	if again := get("c/1"); again.Name != "one" || again.Tags[0] != "a" || decodeCount != 1 {
		t.Fatalf("unchanged record read again: %+v after %d decodes, want one decode and the stored value", again.record, decodeCount)
	}
	// Any write, whoever made it, changes the bytes: decoded anew.
	putJSON(t, s, "c/1", record{Name: "two"})
	if v := get("c/1"); v.Name != "two" || v.Tags != nil || decodeCount != 2 {
		t.Fatalf("after a write: %+v after %d decodes", v.record, decodeCount)
	}
	// More records than it holds: each still reads right.
	putJSON(t, s, "c/2", record{Name: "2"})
	putJSON(t, s, "c/3", record{Name: "3"})
	for round := 0; round < 2; round++ {
		for _, k := range []string{"c/1", "c/2", "c/3"} {
			if v := get(k); v.Name != map[string]string{"c/1": "two", "c/2": "2", "c/3": "3"}[k] {
				t.Fatalf("%s read %+v", k, v.record)
			}
		}
	}
	if _, err := cache.Get(ctx, s, "c/none"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	putRaw(t, s, "c/bad", "{")
	if _, err := cache.Get(ctx, s, "c/bad"); err == nil || !strings.Contains(err.Error(), "c/bad") {
		t.Fatalf("corrupt: %v", err)
	}
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Delete("c/2") }); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Get(ctx, s, "c/2"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("deleted record still read: %v", err)
	}
}

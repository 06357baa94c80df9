package respcache

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fris.dev/gateway/internal/authn"
	"fris.dev/pkg/identity"
)

func counting(status int, body string) (http.Handler, *atomic.Int32) {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "%s %s %s", body, r.URL.RequestURI(), r.Header.Get("Accept-Language"))
	}), &n
}

func get(h http.Handler, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHitsMissesAndKeys(t *testing.T) {
	next, calls := counting(200, "ok")
	h := New(10, time.Hour, 1<<10).Handler(next)
	first := get(h, "/a?x=1")
	second := get(h, "/a?x=1")
	if calls.Load() != 1 || second.Body.String() != first.Body.String() || second.Header().Get("X-Cache") != "hit" {
		t.Fatalf("second GET not from cache: calls=%d %q", calls.Load(), second.Body)
	}
	if second.Header().Get("Content-Type") != "application/json; charset=utf-8" || second.Header().Get("Content-Length") != fmt.Sprint(len(first.Body.String())) {
		t.Fatalf("cached headers: %v", second.Header())
	}
	get(h, "/a?x=2")
	get(h, "/a?x=1", "Accept-Language", "de")
	if calls.Load() != 3 {
		t.Fatalf("query and language must be part of the key: calls=%d", calls.Load())
	}
	if de := get(h, "/a?x=1", "Accept-Language", "de"); !strings.HasSuffix(de.Body.String(), " de") {
		t.Fatalf("language variant mixed up: %q", de.Body)
	}
}

func TestNotCached(t *testing.T) {
	next, calls := counting(404, "gone")
	h := New(10, time.Hour, 1<<10).Handler(next)
	get(h, "/a")
	get(h, "/a")
	if calls.Load() != 2 {
		t.Fatalf("404 was cached")
	}

	ok, okCalls := counting(200, strings.Repeat("x", 2048))
	h = New(10, time.Hour, 1<<10).Handler(ok)
	get(h, "/big")
	if w := get(h, "/big"); okCalls.Load() != 2 || len(w.Body.String()) < 2048 {
		t.Fatalf("body over the limit was cached or cut: calls=%d len=%d", okCalls.Load(), w.Body.Len())
	}

	ok, okCalls = counting(200, "private")
	h = New(10, time.Hour, 1<<10).Handler(ok)
	r := httptest.NewRequest("GET", "/p", nil)
	r = r.WithContext(authn.With(r.Context(), identity.Identity{Subject: "7", Scopes: []string{"mdr:*"}}))
	h.ServeHTTP(httptest.NewRecorder(), r)
	get(h, "/p")
	if okCalls.Load() != 2 {
		t.Fatalf("a response for a verified identity was served to an anonymous caller")
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/p", nil))
	if okCalls.Load() != 3 {
		t.Fatalf("POST served from cache")
	}
}

func TestExpiryAndDisabled(t *testing.T) {
	next, calls := counting(200, "ok")
	h := New(10, 30*time.Millisecond, 1<<10).Handler(next)
	get(h, "/a")
	time.Sleep(80 * time.Millisecond)
	get(h, "/a")
	if calls.Load() != 2 {
		t.Fatalf("entry outlived its TTL")
	}
	if New(10, 0, 1<<10) != nil || New(0, time.Second, 1<<10) != nil {
		t.Fatal("zero TTL or size must disable the cache")
	}
	var c *Cache
	next, calls = counting(200, "ok")
	h = c.Handler(next)
	get(h, "/a")
	get(h, "/a")
	if calls.Load() != 2 {
		t.Fatal("nil cache cached")
	}
}

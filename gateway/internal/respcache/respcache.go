// Package respcache keeps rendered anonymous GET responses of the read-only
// registry for a short time, so hot reads skip the gRPC hop and the JSON
// rendering. The registry's replicas already serve up to their refresh
// interval stale; a TTL of the same order adds no new kind of staleness.
package respcache

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/httpx"
)

// Cache is safe for concurrent use. A nil *Cache caches nothing.
type Cache struct {
	lru     *expirable.LRU[string, *entry]
	maxBody int
}

type entry struct {
	contentType string
	etag        string
	body        []byte
}

// New returns a cache of at most size responses, each kept for ttl and at
// most maxBody bytes long. ttl <= 0 or size <= 0 disables caching (nil).
func New(size int, ttl time.Duration, maxBody int) *Cache {
	if ttl <= 0 || size <= 0 {
		return nil
	}
	return &Cache{lru: expirable.NewLRU[string, *entry](size, nil, ttl), maxBody: maxBody}
}

// key separates what changes the response: path and query, and the language
// asked for. Callers with a verified identity are never cached (their view
// may include private namespaces).
func key(r *http.Request) string {
	return r.URL.RequestURI() + "\x00" + r.Header.Get("Accept-Language")
}

// Handler serves cached responses and fills the cache from next.
func (c *Cache) Handler(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !authn.From(r.Context()).Anonymous() {
			next.ServeHTTP(w, r)
			return
		}
		k := key(r)
		if e, ok := c.lru.Get(k); ok {
			h := w.Header()
			h.Set("Content-Type", e.contentType)
			h.Set("Content-Length", strconv.Itoa(len(e.body)))
			h.Set("ETag", e.etag)
			h.Set("X-Cache", "hit")
			_, _ = w.Write(e.body)
			return
		}
		rec := &capture{ResponseWriter: w, status: http.StatusOK, max: c.maxBody}
		next.ServeHTTP(rec, r)
		if rec.status == http.StatusOK && !rec.tooBig {
			body := bytes.Clone(rec.buf.Bytes())
			c.lru.Add(k, &entry{contentType: w.Header().Get("Content-Type"), etag: httpx.Tag(body), body: body})
		}
	})
}

// capture writes through and keeps a copy of the body up to the limit.
type capture struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
	tooBig bool
	max    int
}

func (c *capture) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(b []byte) (int, error) {
	if !c.tooBig {
		if c.buf.Len()+len(b) > c.max {
			c.tooBig = true
			c.buf = bytes.Buffer{}
		} else {
			c.buf.Write(b)
		}
	}
	return c.ResponseWriter.Write(b)
}

func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

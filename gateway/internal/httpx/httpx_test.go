package httpx

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{``, false},
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x", "abc"`, true},
		{`*`, true},
		{`"abcd"`, false},
		{`abc`, false},
	} {
		if got := matches(tc.header, `"abc"`); got != tc.want {
			t.Errorf("matches(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestETagOnlyForSuccessfulGET(t *testing.T) {
	status := http.StatusOK
	h := ETag(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"a":1}`)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	tag := rec.Header().Get("ETag")
	if rec.Code != 200 || tag == "" || rec.Body.String() != `{"a":1}` || rec.Header().Get("Content-Length") != "7" {
		t.Fatalf("GET: %d %q %q", rec.Code, tag, rec.Body)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("If-None-Match", tag)
	h.ServeHTTP(rec, req)
	if rec.Code != 304 || rec.Body.Len() != 0 {
		t.Fatalf("conditional GET: %d %q", rec.Code, rec.Body)
	}
	status = http.StatusNotFound
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 404 || rec.Header().Get("ETag") != "" {
		t.Fatalf("404 got an ETag or wrong code: %d %q", rec.Code, rec.Header().Get("ETag"))
	}
	status = http.StatusOK
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
	if rec.Header().Get("ETag") != "" {
		t.Fatal("POST got an ETag")
	}
}

func TestRequestID(t *testing.T) {
	var seen string
	h := WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = RequestID(r.Context()) }))
	for _, tc := range []struct {
		in   string
		keep bool
	}{
		{"abc-123", true},
		{"", false},
		{"has space", false},
		{strings.Repeat("x", 129), false},
		{"ümlaut", false},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		if tc.in != "" {
			req.Header.Set("X-Request-Id", tc.in)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get("X-Request-Id")
		if got != seen || got == "" {
			t.Fatalf("%q: header %q, context %q", tc.in, got, seen)
		}
		if (got == tc.in) != tc.keep {
			t.Fatalf("%q: kept = %v, want %v", tc.in, got == tc.in, tc.keep)
		}
	}
}

func TestLimitBody(t *testing.T) {
	h := LimitBody(10, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(200)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader("0123456789")))
	if rec.Code != 200 {
		t.Fatalf("10 bytes: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader("0123456789a")))
	if rec.Code != 413 {
		t.Fatalf("11 bytes with Content-Length: %d", rec.Code)
	}
	req := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader("0123456789a")))
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("11 bytes chunked: %d", rec.Code)
	}
}

// TestLimitBodyLate: a request the handler answers itself is let in over
// its declared length, and still reads no more than the limit.
func TestLimitBodyLate(t *testing.T) {
	var read int
	h := LimitBodyLate(10, func(r *http.Request) bool { return r.URL.Path == "/form" }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		read = len(b)
		if err != nil {
			w.WriteHeader(299)
			return
		}
		w.WriteHeader(200)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/form", strings.NewReader(strings.Repeat("a", 100))))
	if rec.Code != 299 || read != 10 {
		t.Fatalf("the form: %d, %d bytes read", rec.Code, read)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/other", strings.NewReader(strings.Repeat("a", 100))))
	if rec.Code != 413 {
		t.Fatalf("another path: %d", rec.Code)
	}
}

func TestRecover(t *testing.T) {
	h := Recover(discard(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("panic: %d %q", rec.Code, rec.Body)
	}
}

func TestETagKeepsAHandlerSetTag(t *testing.T) {
	h := ETag(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"pre"`)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "body")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || rec.Header().Get("ETag") != `"pre"` || rec.Body.String() != "body" || rec.Header().Get("Vary") == "" {
		t.Fatalf("pre-tagged GET: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("If-None-Match", `"pre"`)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 304 || rec.Body.Len() != 0 {
		t.Fatalf("pre-tagged conditional GET: %d %q", rec.Code, rec.Body)
	}
	if Tag([]byte("body")) == Tag([]byte("body2")) || Tag([]byte("x")) != Tag([]byte("x")) {
		t.Fatal("Tag is not a function of the body")
	}
}

func TestETagSkipsNoStore(t *testing.T) {
	h := ETag(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		_, _ = io.WriteString(w, `{"secret":1}`)
	}))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("If-None-Match", "*")
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("ETag") != "" || rec.Header().Get("Vary") != "" || rec.Body.String() != `{"secret":1}` {
		t.Fatalf("no-store response: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	if !strings.Contains(rec.Header().Get("Cache-Control"), "no-store") {
		t.Fatal("Cache-Control changed")
	}
}

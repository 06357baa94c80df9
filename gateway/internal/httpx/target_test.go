package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanTarget(t *testing.T) {
	text := func(p string) bool { return Under(p, "/dktk") || Under(p, "/broker/rest/") }
	h := CleanTarget(text, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	for _, tc := range []struct {
		target   string
		status   int
		ctype    string
		inReason string
	}{
		{"/v3/api/mdr/dataelements/urn:mdr16:dataelement:1:1", http.StatusTeapot, "", ""},
		{"/v3/api/mdr/namespaces/mdr16/search?query=K%C3%B6rper", http.StatusTeapot, "", ""},
		{"/dktk/sites/a/teiler/b/pats/x%3D%3D", http.StatusTeapot, "", ""},
		{"/oauth2/authorize?client_id=%ZZ", http.StatusTeapot, "", ""}, // undecodable: the handler's call
		{"/v3/api/mdr/dataelements/%FF%FE", 400, "application/json; charset=utf-8", "path is not valid UTF-8"},
		{"/v3/api/mdr/dataelements/a%00b", 400, "application/json; charset=utf-8", "path holds a NUL byte"},
		{"/v3/api/mdr/namespaces/mdr16/search?query=%FF", 400, "application/json; charset=utf-8", "query is not valid UTF-8"},
		{"/oauth2/authorize?client_id=a%00", 400, "application/json; charset=utf-8", "query holds a NUL byte"},
		{"/dktk/sites/%FF/teiler/b/uploadStats", 400, "text/plain; charset=utf-8", "path is not valid UTF-8"},
		{"/broker/rest/searchbroker/banks/%FF%FE/status", 400, "text/plain; charset=utf-8", "path is not valid UTF-8"},
		{"/broker/rest/searchbroker/inquiries/1%00/query", 400, "text/plain; charset=utf-8", "path holds a NUL byte"},
		{"/dktkx/%FF", 400, "application/json; charset=utf-8", "not valid UTF-8"}, // not under /dktk/
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.target, rec.Code, tc.status)
			continue
		}
		if tc.status == http.StatusTeapot {
			continue
		}
		if ct := rec.Header().Get("Content-Type"); ct != tc.ctype {
			t.Errorf("%s: Content-Type %q, want %q", tc.target, ct, tc.ctype)
		}
		if !strings.Contains(rec.Body.String(), tc.inReason) {
			t.Errorf("%s: body %q lacks %q", tc.target, rec.Body, tc.inReason)
		}
	}
}

// FuzzCleanTarget: whatever the target, a request reaches the handler only
// with a UTF-8, NUL-free path, and a refusal is a 400 with a reason.
func FuzzCleanTarget(f *testing.F) {
	for _, s := range []string{"/v3/api/mdr/dataelements/%FF%FE", "/a?b=%00", "/dktk/x", "/broker/rest/%C3%28", "/a?%", "/ok?q=K%C3%B6rper+x"} {
		f.Add(s)
	}
	var reached *http.Request
	h := CleanTarget(func(p string) bool { return Under(p, "/dktk") }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = r }))
	f.Fuzz(func(t *testing.T, target string) {
		req, err := http.NewRequest(http.MethodGet, "http://gw"+target, nil)
		if err != nil || req.URL.Path == "" || req.URL.Path[0] != '/' {
			return
		}
		reached = nil
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if reached != nil {
			if p := reached.URL.Path; !utf8.ValidString(p) || strings.IndexByte(p, 0) >= 0 {
				t.Fatalf("%q: the unclean path %q reached the handler", target, p)
			}
			return
		}
		if rec.Code != http.StatusBadRequest || rec.Body.Len() == 0 {
			t.Fatalf("%q: refused with %d %q", target, rec.Code, rec.Body)
		}
	})
}

func TestLimitSegments(t *testing.T) {
	h := LimitSegments(8, func(p string) bool { return Under(p, "/dktk") }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	for _, tc := range []struct {
		target string
		status int
		ctype  string
	}{
		{"/v3/api/mdr/12345678", http.StatusTeapot, ""},
		{"/v3/api/mdr/123456789", 400, "application/json; charset=utf-8"},
		{"/dktk/pats/123456789", 400, "text/plain; charset=utf-8"},
		{"/dktk/pats/%41%41%41%41%41%41%41%41", http.StatusTeapot, ""},             // 24 bytes escaped, 8 decoded
		{"/dktk/pats/a%2Fb%2Fc%2Fd%2Fe", 400, "text/plain; charset=utf-8"},         // escaped slashes stay in the segment
		{"/v3/api/mdr/x?query=" + strings.Repeat("q", 100), http.StatusTeapot, ""}, // the query is no segment
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.target, rec.Code, tc.status)
			continue
		}
		if tc.status == 400 {
			if ct := rec.Header().Get("Content-Type"); ct != tc.ctype {
				t.Errorf("%s: Content-Type %q, want %q", tc.target, ct, tc.ctype)
			}
			if !strings.Contains(rec.Body.String(), "longer than 8 bytes") {
				t.Errorf("%s: body %q names no limit", tc.target, rec.Body)
			}
		}
	}
}

package httpx

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLatin1Segments(t *testing.T) {
	var got *http.Request
	h := Latin1Segments(func(p string) bool { return Under(p, "/dktk/sites") }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }))
	for _, tc := range []struct{ target, path, raw string }{
		// The connector's URLEncoder(id, "ISO-8859-1").
		{"/dktk/sites/a/teiler/b/pats/M%FCller-1", "/dktk/sites/a/teiler/b/pats/Müller-1", "/dktk/sites/a/teiler/b/pats/M%C3%BCller-1"},
		// Its other escapes stay as sent: %2B is a plus, + a space to the handler.
		{"/dktk/sites/a/teiler/b/pats/%C4+%2B%2F", "/dktk/sites/a/teiler/b/pats/Ä++/", "/dktk/sites/a/teiler/b/pats/%C3%84+%2B%2F"},
		{"/dktk/sites/a/teiler/b/patsPrefix/Stra%DFe", "/dktk/sites/a/teiler/b/patsPrefix/Straße", "/dktk/sites/a/teiler/b/patsPrefix/Stra%C3%9Fe"},
		// UTF-8 is read as UTF-8.
		{"/dktk/sites/a/teiler/b/pats/M%C3%BCller", "/dktk/sites/a/teiler/b/pats/Müller", ""},
		// Elsewhere nothing changes: CleanTarget refuses it there.
		{"/v3/api/mdr/dataelements/M%FCller", "/v3/api/mdr/dataelements/M\xfcller", ""},
	} {
		got = nil
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tc.target, nil))
		if got == nil {
			t.Fatalf("%s: not passed on", tc.target)
		}
		if got.URL.Path != tc.path {
			t.Errorf("%s: path %q, want %q", tc.target, got.URL.Path, tc.path)
		}
		if tc.raw != "" && got.URL.EscapedPath() != tc.raw {
			t.Errorf("%s: escaped %q, want %q", tc.target, got.URL.EscapedPath(), tc.raw)
		}
	}
}

// FuzzLatin1Segments: on the paths it applies to, the path passed on is
// UTF-8 and its escaped form decodes to it.
func FuzzLatin1Segments(f *testing.F) {
	for _, s := range []string{"/dktk/sites/a/teiler/b/pats/M%FCller", "/dktk/sites/%FF/x%C3", "/dktk/sites/a%2F%E4/b+c", "/dktk/sites/%C3%28"} {
		f.Add(s)
	}
	var got *http.Request
	h := Latin1Segments(func(p string) bool { return Under(p, "/dktk/sites") }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }))
	f.Fuzz(func(t *testing.T, target string) {
		req, err := http.NewRequest(http.MethodGet, "http://gw"+target, nil)
		if err != nil || !strings.HasPrefix(req.URL.Path, "/dktk/sites/") {
			return
		}
		got = nil
		h.ServeHTTP(httptest.NewRecorder(), req)
		if got == nil {
			t.Fatal("not passed on")
		}
		if !utf8.ValidString(got.URL.Path) {
			t.Fatalf("%q: path %q is not UTF-8", target, got.URL.Path)
		}
		if got.URL.Path != req.URL.Path {
			if d, err := url.PathUnescape(got.URL.EscapedPath()); err != nil || d != got.URL.Path {
				t.Fatalf("%q: escaped %q does not decode to %q", target, got.URL.EscapedPath(), got.URL.Path)
			}
		}
	})
}

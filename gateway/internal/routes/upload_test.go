package routes

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseUploadPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want UploadPath
		ok   bool
	}{
		{"charite_teiler/teiler1/uploadStats", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpUploadStats}, true},
		{"charite/teiler/teiler1/uploadStats", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpUploadStats}, true},
		{"charite_teiler/teiler1/pats/abc%3D%3D", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpPatient, Arg: "abc=="}, true},
		{"charite/teiler/teiler1/pats/abc==", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpPatient, Arg: "abc=="}, true},
		{"charite/teiler/teiler1/patsPrefix/TEST", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpPatientPrefix, Arg: "TEST"}, true},
		// java.net.URLEncoder's output: '+' is a space, %2B a '+'.
		{"charite/teiler/teiler1/pats/a+b%2Bc%3D%3D", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpPatient, Arg: "a b+c=="}, true},
		{"charite_teiler/teiler1/pats/a%20b", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpPatient, Arg: "a b"}, true},
		{"charite/teiler/teiler1/patsPrefix/TEST+RUN%2B", UploadPath{Site: "charite", Teiler: "teiler1", Op: OpPatientPrefix, Arg: "TEST RUN+"}, true},
		// '+' stays itself in the site and teiler.
		{"a+b/teiler/c+d/uploadStats", UploadPath{Site: "a+b", Teiler: "c+d", Op: OpUploadStats}, true},
		// An encoded slash stays inside the id.
		{"charite_teiler/t/pats/a%2Fb", UploadPath{Site: "charite", Teiler: "t", Op: OpPatient, Arg: "a/b"}, true},
		// A site id ending in _teiler, in the connector's form.
		{"x_teiler/teiler/t/uploadStats", UploadPath{Site: "x_teiler", Teiler: "t", Op: OpUploadStats}, true},
		// ... and in the spec's form.
		{"x_teiler_teiler/t/uploadStats", UploadPath{Site: "x_teiler", Teiler: "t", Op: OpUploadStats}, true},
		// A site called "teiler" in the spec's form.
		{"teiler_teiler/teiler/pats/p", UploadPath{Site: "teiler", Teiler: "teiler", Op: OpPatient, Arg: "p"}, true},
		{"_teiler/t/uploadStats", UploadPath{}, false},
		{"charite/t/uploadStats", UploadPath{}, false},
		{"charite_teiler/t/pats", UploadPath{}, false},
		{"charite_teiler/t/pats/", UploadPath{}, false},
		{"charite_teiler/t/pats/a/b", UploadPath{}, false},
		{"charite_teiler/t/uploadStats/x", UploadPath{}, false},
		{"charite_teiler/t/other", UploadPath{}, false},
		{"charite_teiler/t/pats/%zz", UploadPath{}, false},
		{"", UploadPath{}, false},
	} {
		got, ok := ParseUploadPath(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseUploadPath(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseUploadPath(f *testing.F) {
	for _, s := range []string{"charite_teiler/teiler1/uploadStats", "a/teiler/b/pats/c%3D", "a_teiler/b/patsPrefix/x", "%", "//", "s/teiler/t/pats/a+b%2B%3D%3D", "s_teiler/t/patsPrefix/+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := ParseUploadPath(s)
		if !ok {
			return
		}
		if p.Site == "" || p.Teiler == "" {
			t.Fatalf("%q: empty site or teiler in %+v", s, p)
		}
		switch p.Op {
		case OpUploadStats:
			if p.Arg != "" {
				t.Fatalf("%q: uploadStats with an argument", s)
			}
		case OpPatient, OpPatientPrefix:
			if p.Arg == "" {
				t.Fatalf("%q: %s without an argument", s, p.Op)
			}
		default:
			t.Fatalf("%q: unknown op %q", s, p.Op)
		}
		// Rebuilding the connector's form from the parts parses back to
		// them; it encodes the id as java.net.URLEncoder does.
		parts := []string{url.PathEscape(p.Site), "teiler", url.PathEscape(p.Teiler), p.Op}
		if p.Arg != "" {
			parts = append(parts, url.QueryEscape(p.Arg))
		}
		if again, ok := ParseUploadPath(strings.Join(parts, "/")); !ok || again != p {
			t.Fatalf("%q -> %+v does not round-trip: %+v %v", s, p, again, ok)
		}
	})
}

// The media types and charsets read are the upload service's to decide
// (services/upload/internal/contenttype); the gateway only has to hand the
// header over as a valid proto string.
func TestUploadContentType(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"text/plain; charset=ISO-8859-1":    "text/plain; charset=ISO-8859-1",
		"text/xml; charset=\"grüße\"":       "text/xml; charset=\"grüße\"",
		"text/xml; charset=\"gr\xfc\xdfe\"": "text/xml; charset=\"gr\ufffde\"",
	} {
		r := httptest.NewRequest(http.MethodPut, "/x", nil)
		if in != "" {
			r.Header.Set("Content-Type", in)
		}
		if got := contentType(r); got != want || !utf8.ValidString(got) {
			t.Errorf("contentType(%q) = %q, want %q", in, got, want)
		}
	}
}

package contenttype

import (
	"errors"
	"mime"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	const (
		patsType  = "send application/xml"
		statsType = "send application/xml or a text type"
	)
	for _, tc := range []struct {
		ct     string
		b      Body
		want   Charset
		reason string // "" when accepted
	}{
		{"", Patient, Unnamed, ""},
		{"", Stats, Unnamed, ""},
		{"application/xml", Patient, Unnamed, ""},
		{"text/xml; charset=UTF-8", Patient, UTF8, ""},
		{"Application/XML; charset=\" US-ASCII \"", Patient, UTF8, ""},
		{"application/samply+xml", Patient, Unnamed, ""},
		{"application/xml; charset=\"\"", Patient, Unnamed, ""},
		{"text/plain", Patient, Unnamed, "Content-Type text/plain is not supported: " + patsType},
		{"application/json", Patient, Unnamed, "Content-Type application/json is not supported: " + patsType},
		{"application/xml;;", Patient, Unnamed, "Content-Type application/xml;; is not supported: " + patsType},
		{"application/xml; charset=iso-8859-1", Patient, Unnamed, `charset "iso-8859-1" is not supported: send UTF-8`},
		{"application/xml; charset=KOI8-R", Patient, Unnamed, `charset "koi8-r" is not supported: send UTF-8`},
		// The connector's upload statistics.
		{"text/plain; charset=ISO-8859-1", Stats, Latin1, ""},
		{"text/html; charset=latin1", Stats, Latin1, ""},
		{"text/plain; charset=US-ASCII", Stats, UTF8, ""},
		{"application/xml; charset=\"iso-8859-1\"", Stats, Latin1, ""},
		{"text/plain; charset=utf-16", Stats, Unnamed, `charset "utf-16" is not supported: send UTF-8 or ISO-8859-1`},
		{"text/plain", Stats, Unnamed, ""},
		{"application/json", Stats, Unnamed, "Content-Type application/json is not supported: " + statsType},
		{"text/", Stats, Unnamed, "Content-Type text/ is not supported: " + statsType},
		{"text/plain; charset=koi8-r", Stats, Unnamed, `charset "koi8-r" is not supported: send UTF-8 or ISO-8859-1`},
		{"text/plain; charset=" + strings.Repeat("x", 50), Stats, Unnamed, `charset "` + strings.Repeat("x", 40) + `" is not supported: send UTF-8 or ISO-8859-1`},
		// A cut through a character is escaped, so the reason stays UTF-8.
		{"text/plain; charset=\"" + strings.Repeat("x", 39) + "ü\"", Stats, Unnamed, `charset "` + strings.Repeat("x", 39) + `\xc3" is not supported: send UTF-8 or ISO-8859-1`},
	} {
		got, err := Parse(tc.ct, tc.b)
		var ue *UnsupportedError
		switch {
		case tc.reason == "" && (err != nil || got != tc.want):
			t.Errorf("Parse(%q, %d) = %d, %v; want %d", tc.ct, tc.b, got, err, tc.want)
		case tc.reason != "" && (!errors.As(err, &ue) || ue.Reason != tc.reason):
			t.Errorf("Parse(%q, %d) = %v; want %q", tc.ct, tc.b, err, tc.reason)
		}
	}
}

func TestLookupCharset(t *testing.T) {
	for name, want := range map[string]Charset{"UTF-8": UTF8, "ascii": UTF8, "ISO_8859-1:1987": Latin1, "Latin1": Latin1} {
		if got, ok := LookupCharset(name); !ok || got != want {
			t.Errorf("LookupCharset(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"", "koi8-r", "utf-16", " utf-8"} {
		if _, ok := LookupCharset(name); ok {
			t.Errorf("LookupCharset(%q) reads a charset it should not", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "application/xml", "text/plain; charset=ISO-8859-1", "text/xml; charset=\"utf-8\"",
		"application/a+xml; charset=latin1", "text/plain; charset=koi8-r", "text/", "a/b; c=\"\xff\"", "text/xml; charset=\"" + strings.Repeat("ü", 30) + "\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		for _, b := range []Body{Patient, Stats} {
			cs, err := Parse(ct, b)
			if err != nil {
				var ue *UnsupportedError
				if !errors.As(err, &ue) || ue.Reason == "" {
					t.Fatalf("Parse(%q, %d): error of an unexpected kind: %v", ct, b, err)
				}
				// The reason travels as a gRPC status message, which must be UTF-8.
				if utf8.ValidString(ct) && !utf8.ValidString(ue.Reason) {
					t.Fatalf("Parse(%q, %d): reason %q is not UTF-8", ct, b, ue.Reason)
				}
				if b == Stats {
					if _, err := Parse(ct, Patient); err == nil {
						t.Fatalf("%q: a patient's type refused for upload statistics", ct)
					}
				}
				continue
			}
			if ct == "" {
				if cs != Unnamed {
					t.Fatalf("no Content-Type read as charset %d", cs)
				}
				continue
			}
			mt, params, perr := mime.ParseMediaType(ct)
			if perr != nil {
				t.Fatalf("Parse(%q, %d) accepted what mime cannot parse: %v", ct, b, perr)
			}
			if !strings.HasSuffix(mt, "xml") && (b == Patient || !strings.HasPrefix(mt, "text/")) {
				t.Fatalf("Parse(%q, %d) accepted media type %q", ct, b, mt)
			}
			name := strings.TrimSpace(params["charset"])
			if want, ok := LookupCharset(name); name != "" && (!ok || want != cs) || name == "" && cs != Unnamed {
				t.Fatalf("Parse(%q, %d) = charset %d for %q", ct, b, cs, name)
			}
			if b == Patient && cs == Latin1 {
				t.Fatalf("Parse(%q): a patient in ISO-8859-1", ct)
			}
		}
	})
}

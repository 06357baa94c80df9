package authheader

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestBearer(t *testing.T) {
	for h, want := range map[string]string{
		"":                   "",
		"Bearer abc":         "abc",
		"bearer abc":         "abc",
		"BEARER  abc ":       "abc",
		"  Bearer abc":       "abc",
		"Bearer":             "",
		"Bearer ":            "",
		"Bearer null":        "",
		"Bearer undefined":   "",
		"Basic abc":          "",
		"Samply abc":         "",
		"abc":                "",
		"Bearer a b":         "a b",
		"Bearer\tabc":        "",
		"Bearerabc":          "",
		"Bearer Bearer abc":  "Bearer abc",
		"Bearer \xff\xfe":    "\xff\xfe",
		"Bearer eyJ.a.b-_==": "eyJ.a.b-_==",
	} {
		if got := Bearer(h); got != want {
			t.Errorf("Bearer(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestBasic(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		h          string
		user, pass string
		err        error
	}{
		{"", "", "", ErrNotBasic},
		{"Bearer x", "", "", ErrNotBasic},
		{"Basic", "", "", ErrNotBasic},
		{"Basic " + enc("u:p"), "u", "p", nil},
		{"basic " + enc("u:p"), "u", "p", nil},
		{" BASIC   " + enc("u:p:q") + " ", "u", "p:q", nil},
		{"Basic " + enc(":p"), "", "p", nil},
		{"Basic " + enc("u:"), "u", "", nil},
		{"Basic !!", "", "", ErrNotBase64},
		{"Basic " + enc("u:p")[:3], "", "", ErrNotBase64},
		{"Basic " + enc("up"), "", "", ErrNoSeparator},
		{"Basic \xff\xfe", "", "", ErrNotBase64},
	} {
		user, pass, err := Basic(tc.h)
		if user != tc.user || pass != tc.pass || !errors.Is(err, tc.err) {
			t.Errorf("Basic(%q) = %q, %q, %v; want %q, %q, %v", tc.h, user, pass, err, tc.user, tc.pass, tc.err)
		}
	}
}

func TestSamply(t *testing.T) {
	for _, tc := range []struct{ h, token, code string }{
		{"", "", ""},
		{"Samply tok", "tok", ""},
		{"samply  tok ", "tok", ""},
		{"tok", "tok", ""}, // bare: a token, never a code
		{" tok ", "tok", ""},
		{"Bearer tok", "", ""},
		{"SamplyRegistration 12345678", "", "12345678"},
		{"samplyregistration 12345678", "", "12345678"},
		{"SamplyRegistration", "SamplyRegistration", ""},
		{"Samply", "Samply", ""},
	} {
		if got := Samply(tc.h); got != tc.token {
			t.Errorf("Samply(%q) = %q, want %q", tc.h, got, tc.token)
		}
		if got := SamplyRegistration(tc.h); got != tc.code {
			t.Errorf("SamplyRegistration(%q) = %q, want %q", tc.h, got, tc.code)
		}
	}
}

// FuzzSchemes: whatever the header, at most one scheme's parser claims it,
// what a parser returns is trimmed and found in the header as sent, and
// Basic's user and password encode back to themselves.
func FuzzSchemes(f *testing.F) {
	for _, s := range []string{"", "Bearer abc", "bearer null", "Basic dTpw", "Basic !!", "Samply t", "t", "SamplyRegistration 1", " \t", "Basic " + base64.StdEncoding.EncodeToString([]byte("a:b:c"))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		claims := 0
		if tok := Bearer(h); tok != "" {
			claims++
			if tok != strings.TrimSpace(tok) || !strings.Contains(h, tok) {
				t.Fatalf("Bearer(%q) = %q", h, tok)
			}
		}
		if user, pass, err := Basic(h); !errors.Is(err, ErrNotBasic) {
			claims++
			if err == nil {
				// The user holds no ':', so the pair encodes back to itself.
				again := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
				if u, p, err := Basic(again); strings.Contains(user, ":") || err != nil || u != user || p != pass {
					t.Fatalf("Basic(%q) = %q, %q does not round-trip", h, user, pass)
				}
			}
		}
		if code := SamplyRegistration(h); code != "" {
			claims++
			if code != strings.TrimSpace(code) || !strings.Contains(h, code) {
				t.Fatalf("SamplyRegistration(%q) = %q", h, code)
			}
		}
		// A bare value is a Samply token whatever it looks like, so Samply
		// only claims a value with its own scheme exclusively.
		if tok := Samply(h); tok != "" {
			if tok != strings.TrimSpace(tok) || !strings.Contains(h, tok) {
				t.Fatalf("Samply(%q) = %q", h, tok)
			}
			if scheme, _, ok := strings.Cut(strings.TrimSpace(h), " "); ok && strings.EqualFold(scheme, SchemeSamply) {
				claims++
			}
		}
		if claims > 1 {
			t.Fatalf("%q claimed by %d schemes", h, claims)
		}
	})
}

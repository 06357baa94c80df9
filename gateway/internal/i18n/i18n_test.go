package i18n

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name, query, cookie, accept string
		want                        Lang
		explicit                    bool
	}{
		{name: "nothing", want: English},
		{name: "german browser", accept: "de-DE,de;q=0.9,en;q=0.5", want: German},
		{name: "swiss german matches german", accept: "de-CH", want: German},
		{name: "english preferred", accept: "en-GB,de;q=0.8", want: English},
		{name: "unsupported falls back to english", accept: "fr-FR,fr;q=0.9", want: English},
		{name: "unsupported first, german later", accept: "fr;q=1,de;q=0.5", want: German},
		{name: "garbage header", accept: ";;;q=x,,", want: English},
		{name: "cookie beats header", cookie: "de", accept: "en", want: German},
		{name: "bad cookie ignored", cookie: "xx", accept: "de", want: German},
		{name: "query beats cookie", query: "lang=en", cookie: "de", accept: "de", want: English, explicit: true},
		{name: "query case-insensitive", query: "lang=DE", want: German, explicit: true},
		{name: "bad query ignored", query: "lang=fr", cookie: "de", want: German},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/explorer/?"+tc.query, nil)
			if tc.cookie != "" {
				r.AddCookie(&http.Cookie{Name: Cookie, Value: tc.cookie})
			}
			if tc.accept != "" {
				r.Header.Set("Accept-Language", tc.accept)
			}
			got, explicit := Choose(r)
			if got != tc.want || explicit != tc.explicit {
				t.Errorf("Choose = %q, %t; want %q, %t", got, explicit, tc.want, tc.explicit)
			}
		})
	}
}

func TestSwitchURL(t *testing.T) {
	for target, want := range map[string]string{
		"/explorer/namespaces/mdr16?q=alter": "/explorer/namespaces/mdr16?lang=de&q=alter",
		"/explorer/?lang=en":                 "/explorer/?lang=de",
		"//evil.example/x":                   "/?lang=de",
	} {
		r := httptest.NewRequest(http.MethodGet, "http://gw"+target, nil)
		if got := SwitchURL(r, German); got != want {
			t.Errorf("SwitchURL(%q) = %q, want %q", target, got, want)
		}
	}
}

func TestCatalogue(t *testing.T) {
	c := Catalogue{"a": {English: "A", German: "Ä"}, "b": {English: "B"}}
	if c.Text(German, "a") != "Ä" || c.Text(German, "b") != "B" || c.Text(English, "zz") != "zz" {
		t.Fatal("Text does not fall back to English, then to the key")
	}
	if m := c.Missing(); len(m) != 1 || m[0] != "b/de" {
		t.Fatalf("Missing = %v", m)
	}
}

// FuzzChoose: any header, cookie or parameter yields a supported language.
func FuzzChoose(f *testing.F) {
	f.Add("de-DE,de;q=0.9", "en", "de")
	f.Add("*", "", "")
	f.Add(strings.Repeat("x-", 200), "\x00", "%")
	f.Fuzz(func(t *testing.T, accept, cookie, param string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.RawQuery = "lang=" + param
		r.Header.Set("Accept-Language", accept)
		r.Header.Set("Cookie", Cookie+"="+cookie)
		l, _ := Choose(r)
		if l != English && l != German {
			t.Fatalf("Choose = %q", l)
		}
		if u := SwitchURL(r, l); !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
			t.Fatalf("SwitchURL = %q", u)
		}
	})
}

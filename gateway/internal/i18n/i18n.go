// Package i18n chooses the language of the gateway's own web pages (the
// login page and the Explorer) and holds the rule they share: an explicit
// choice (the lang query parameter, remembered in the lang cookie) wins
// over the browser's Accept-Language; English when nothing matches.
package i18n

import (
	"net/http"
	"strings"
	"time"

	"golang.org/x/text/language"

	"fris.dev/gateway/internal/clientaddr"
)

// Lang is a supported language's code as pages write it in <html lang>.
type Lang string

// The supported languages; English first, the fallback.
const (
	English Lang = "en"
	German  Lang = "de"
)

// Supported lists every language a catalogue must cover.
var Supported = []Lang{English, German}

// Param and Cookie carry an explicit choice.
const (
	Param  = "lang"
	Cookie = "lang"
)

var matcher = language.NewMatcher([]language.Tag{language.English, language.German})

// Parse reads a language code the user chose; ok is false for anything
// but a supported language.
func Parse(s string) (Lang, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "en":
		return English, true
	case "de":
		return German, true
	}
	return "", false
}

// Match picks the supported language an Accept-Language header prefers.
func Match(acceptLanguage string) Lang {
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return English
	}
	_, idx, conf := matcher.Match(tags...)
	if conf == language.No {
		return English
	}
	return Supported[idx]
}

// Choose is the language of a request: its lang parameter, else its lang
// cookie, else Accept-Language. explicit reports a valid lang parameter,
// which the caller remembers with Remember.
func Choose(r *http.Request) (l Lang, explicit bool) {
	if l, ok := Parse(r.URL.Query().Get(Param)); ok {
		return l, true
	}
	if c, err := r.Cookie(Cookie); err == nil {
		if l, ok := Parse(c.Value); ok {
			return l, false
		}
	}
	return Match(r.Header.Get("Accept-Language")), false
}

// Remember sets the lang cookie: for the whole site, so the login page and
// the Explorer agree; not HttpOnly-sensitive (it is no secret) but kept
// HttpOnly anyway, since no script needs it.
func Remember(w http.ResponseWriter, r *http.Request, l Lang) {
	http.SetCookie(w, &http.Cookie{
		Name: Cookie, Value: string(l), Path: "/", MaxAge: int((365 * 24 * time.Hour).Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: TLS(r),
	})
}

// TLS reports whether the browser reached the gateway over TLS, directly
// or through a trusted proxy that says so (clientaddr.TLS: a client's own
// X-Forwarded-Proto is not believed).
func TLS(r *http.Request) bool { return clientaddr.TLS(r) }

// Catalogue is one package's messages: key -> language -> text.
type Catalogue map[string]map[Lang]string

// Text is the message in l, else in English, else the key itself (so a
// missing text shows up on the page rather than as an empty string).
func (c Catalogue) Text(l Lang, key string) string {
	if m, ok := c[key]; ok {
		if s, ok := m[l]; ok {
			return s
		}
		if s, ok := m[English]; ok {
			return s
		}
	}
	return key
}

// Missing lists the keys that lack a text in some supported language, for
// a test to fail on.
func (c Catalogue) Missing() []string {
	var out []string
	for k, m := range c {
		for _, l := range Supported {
			if strings.TrimSpace(m[l]) == "" {
				out = append(out, k+"/"+string(l))
			}
		}
	}
	return out
}

// SwitchURL is the current page's URL with lang set to l: the target of a
// language switch link, on this origin (path and query only).
func SwitchURL(r *http.Request, l Lang) string {
	q := r.URL.Query()
	q.Set(Param, string(l))
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.HasPrefix(path, "/\\") {
		path = "/" // never a link to another host
	}
	return path + "?" + q.Encode()
}

// Name is a language's name in itself, for the switch.
func (l Lang) Name() string {
	switch l {
	case German:
		return "Deutsch"
	}
	return "English"
}

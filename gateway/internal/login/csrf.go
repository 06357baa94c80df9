package login

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"time"

	"fris.dev/gateway/internal/clientaddr"
)

// CSRFCookie is the double-submit cookie, scoped to the auth prefix;
// CSRFField the form field that must carry the same value.
const (
	CSRFCookie = "fris_csrf"
	CSRFField  = "csrf_token"
)

// csrfToken reuses the browser's token (so several open tabs keep
// working) or makes a new one.
func (h *Handler) csrfToken(r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil && wellFormed(c.Value) {
		return c.Value
	}
	return token(32)
}

func (h *Handler) csrfOK(r *http.Request, field string) bool {
	c, err := r.Cookie(CSRFCookie)
	if err != nil || !wellFormed(c.Value) || !wellFormed(field) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(field)) == 1
}

func (h *Handler) setCSRF(w http.ResponseWriter, r *http.Request, value string, maxAge time.Duration) {
	c := &http.Cookie{
		Name:     CSRFCookie,
		Value:    value,
		Path:     h.cfg.Prefix,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   secureRequest(r),
		MaxAge:   int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	if c.Path == "" {
		c.Path = "/"
	}
	http.SetCookie(w, c)
}

// DeviceCookie keeps the known-device token the auth service gave this
// browser at its last successful sign-in; shown on the next one, it lets
// the sign-in past the account's abuse ceiling that guessing strangers may
// have reached (docs/security.md, Abuse limits). HttpOnly, scoped to the
// auth prefix, SameSite=Lax: another site's form post does not carry it.
const DeviceCookie = "fris_device"

// deviceMaxAge is the cookie's lifetime, the auth service's memory of the
// token (ratelimit.KnownFor).
const deviceMaxAge = 30 * 24 * time.Hour

// device is the browser's known-device token, "" when it has none.
func (h *Handler) device(r *http.Request) string {
	if c, err := r.Cookie(DeviceCookie); err == nil && wellFormed(c.Value) {
		return c.Value
	}
	return ""
}

func (h *Handler) setDevice(w http.ResponseWriter, r *http.Request, token string) {
	if !wellFormed(token) {
		return
	}
	path := h.cfg.Prefix
	if path == "" {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{
		Name: DeviceCookie, Value: token, Path: path, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: secureRequest(r), MaxAge: int(deviceMaxAge / time.Second),
	})
}

// secureRequest is whether the browser reached us over TLS (directly or
// via a proxy in -trusted-proxies): cookies are Secure then.
func secureRequest(r *http.Request) bool {
	return clientaddr.TLS(r)
}

// wellFormed is a token as token(32) makes them.
func wellFormed(s string) bool {
	if len(s) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

func token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

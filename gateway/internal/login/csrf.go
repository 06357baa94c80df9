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
		// Secure whenever the browser reached us over TLS (directly or via
		// a trusted terminating proxy).
		Secure: clientaddr.TLS(r),
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	if c.Path == "" {
		c.Path = "/"
	}
	http.SetCookie(w, c)
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

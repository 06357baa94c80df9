package explorer

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// A sign-in in progress lives in the browser, not in the gateway: its
// PKCE verifier, state, redirect URI and return path are sealed into a
// short-lived cookie of their own (one per tab). The gateway then holds
// nothing for a visitor who has not signed in, so strangers who start
// sign-ins by the thousand cannot push out a user's sign-in in progress
// (docs/security.md, "Explorer sessions").

// FlowCookiePrefix starts the name of a sign-in's cookie; the rest of the
// name is the start of its state, so tabs signing in at once do not share
// one.
const FlowCookiePrefix = "fris_explorer_flow_"

// flowNameLen is how much of the state names the cookie: enough that two
// of a browser's sign-ins never collide (the state itself is 256 bits).
const flowNameLen = 16

// KeySize is the length of a cookie key: an XChaCha20-Poly1305 key.
const KeySize = chacha20poly1305.KeySize

// maxFlowCookie bounds a sealed cookie's value read from a request; ours
// are well under it (the return path is bounded by maxReturn).
const maxFlowCookie = 3000

// maxReturn bounds the page to return to; a longer one returns home (a
// cookie holds about 4 KB).
const maxReturn = 1024

// flowLabel starts the associated data: a sealed value opens only as a
// sign-in flow, and only under its own cookie name; inside, the whole
// state must be the callback's.
const flowLabel = "fris-explorer-flow\x00"

var (
	errFlowCorrupt = errors.New("sign-in cookie does not open: altered, another state's, or sealed under an unknown key")
	errFlowExpired = errors.New("sign-in cookie expired")
	errFlowSpent   = errors.New("sign-in cookie used already")
)

// Flow is a pending authorization code request, as its cookie holds it.
type Flow struct {
	State       string `json:"s"`
	Verifier    string `json:"v"`
	RedirectURI string `json:"r"`
	ReturnTo    string `json:"t"`
	// Expires is the flow's end, in Unix seconds.
	Expires int64 `json:"e"`
}

// sealer seals flows with its first key and opens them with any, so the
// key can rotate (and several gateway replicas can share keys).
type sealer struct {
	aeads []cipher.AEAD
	// spent remembers the states of callbacks already taken, until their
	// flows expire, so a cookie replayed with its state is refused here
	// too (the identity provider's codes are single-use anyway). Bounded:
	// when full, the oldest is forgotten, which weakens only this second
	// line and never refuses a sign-in.
	mu    sync.Mutex
	spent map[string]int64
	order []string
	cap   int
}

// newSealer uses keys (KeySize bytes each; the first seals), or a random
// key when there are none: flows then open only in this process.
func newSealer(keys [][]byte, spentCap int) (*sealer, error) {
	if len(keys) == 0 {
		k := make([]byte, KeySize)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		keys = [][]byte{k}
	}
	s := &sealer{spent: map[string]int64{}, cap: max(spentCap, 1)}
	for i, k := range keys {
		if len(k) != KeySize {
			return nil, fmt.Errorf("cookie key %d has %d bytes, want %d (make one with: head -c 32 /dev/urandom | base64)", i+1, len(k), KeySize)
		}
		a, err := chacha20poly1305.NewX(k)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, a)
	}
	return s, nil
}

func flowAD(name string) []byte { return []byte(flowLabel + name) }

// seal is f as a cookie value: base64url of nonce and ciphertext.
func (s *sealer) seal(f Flow) (string, error) {
	plain, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	a := s.aeads[0]
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plain)+a.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(a.Seal(nonce, nonce, plain, flowAD(flowCookieName(f.State)))), nil
}

// open reads the value of the cookie name, valid at now (Unix seconds). It
// does not spend it; the caller compares the state.
func (s *sealer) open(name, value string, now int64) (Flow, error) {
	if len(value) > maxFlowCookie || len(name) != len(FlowCookiePrefix)+flowNameLen {
		return Flow{}, errFlowCorrupt
	}
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return Flow{}, errFlowCorrupt
	}
	for _, a := range s.aeads {
		n := a.NonceSize()
		if len(raw) < n+a.Overhead() {
			return Flow{}, errFlowCorrupt
		}
		plain, err := a.Open(nil, raw[:n], raw[n:], flowAD(name))
		if err != nil {
			continue
		}
		var f Flow
		// What we sealed always parses and names its state; anything else
		// is a bug or a key misused elsewhere, refused all the same.
		if json.Unmarshal(plain, &f) != nil || !wellFormedID(f.State) || flowCookieName(f.State) != name || f.Verifier == "" {
			return Flow{}, errFlowCorrupt
		}
		if now >= f.Expires {
			return Flow{}, errFlowExpired
		}
		return f, nil
	}
	return Flow{}, errFlowCorrupt
}

// spend marks a flow's state used; false when it was already.
func (s *sealer) spend(f Flow, now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.spent[f.State]; ok && now < until {
		return false
	}
	// Expired ones go from the old end; when full, the oldest goes anyway.
	for len(s.order) > 0 && (len(s.order) >= s.cap || now >= s.spent[s.order[0]]) {
		delete(s.spent, s.order[0])
		s.order = s.order[1:]
	}
	s.spent[f.State] = f.Expires
	s.order = append(s.order, f.State)
	return true
}

// flowCookieName is the cookie of the flow with this state.
func flowCookieName(state string) string {
	return FlowCookiePrefix + state[:flowNameLen]
}

// flowCookie is a sign-in's cookie: HttpOnly, SameSite=Lax (the callback
// is a top-level navigation from the login page), Secure as the session
// cookie, for the Explorer's paths, for the flow's lifetime. An empty
// value deletes it.
func (a *App) flowCookie(r *http.Request, name, value string, ttl time.Duration) *http.Cookie {
	c := a.cookie(r, value)
	c.Name = name
	c.MaxAge = int(ttl / time.Second)
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// flowCookies are the request's sign-in cookies, by name.
func flowCookies(r *http.Request) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range r.Cookies() {
		if strings.HasPrefix(c.Name, FlowCookiePrefix) {
			out = append(out, c)
		}
	}
	return out
}

// ParseCookieKeys reads -explorer-cookie-key-file: base64 of KeySize
// random bytes a key (standard or URL alphabet, padding optional), one a
// line or separated by commas or blanks, # starts a comment line; the
// first seals, all open. The format of the auth service's -key-secret-file.
func ParseCookieKeys(text string) ([][]byte, error) {
	var out [][]byte
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			f = strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(f), "=")
			k, err := base64.RawStdEncoding.DecodeString(f)
			if err != nil {
				return nil, fmt.Errorf("cookie key %d: not base64", len(out)+1)
			}
			if len(k) != KeySize {
				return nil, fmt.Errorf("cookie key %d has %d bytes, want %d (make one with: head -c 32 /dev/urandom | base64)", len(out)+1, len(k), KeySize)
			}
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no cookie key (one base64 key a line; make one with: head -c 32 /dev/urandom | base64)")
	}
	return out, nil
}

package explorer

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	brokerv1 "fris.dev/proto/broker/v1"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestSealedFlow(t *testing.T) {
	s, err := newSealer([][]byte{testKey(1)}, 10)
	if err != nil {
		t.Fatal(err)
	}
	const now = 1_700_000_000
	f := Flow{State: randomID(), Verifier: "verifier", RedirectURI: "http://gw.test/explorer/callback", ReturnTo: "/explorer/x", Expires: now + 900}
	name := flowCookieName(f.State)
	v, err := s.seal(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.open(name, v, now); err != nil || got != f {
		t.Fatalf("open = %+v, %v; want %+v", got, err, f)
	}
	for _, secret := range []string{f.State, f.Verifier, "callback"} {
		if strings.Contains(v, secret) {
			t.Fatalf("the sealed value shows %q", secret)
		}
	}
	if v2, _ := s.seal(f); v2 == v {
		t.Fatal("two seals of one flow are equal: no fresh nonce")
	}

	t.Run("tampered", func(t *testing.T) {
		raw, _ := base64.RawURLEncoding.DecodeString(v)
		for _, i := range []int{0, 30, len(raw) - 1} {
			bad := bytes.Clone(raw)
			bad[i] ^= 1
			if _, err := s.open(name, base64.RawURLEncoding.EncodeToString(bad), now); !errors.Is(err, errFlowCorrupt) {
				t.Errorf("byte %d flipped: %v", i, err)
			}
		}
		for _, bad := range []string{"", "x", v[:40], v + "A", "!!" + v[2:], strings.Repeat("A", maxFlowCookie+1)} {
			if _, err := s.open(name, bad, now); !errors.Is(err, errFlowCorrupt) {
				t.Errorf("%.20q...: %v", bad, err)
			}
		}
	})
	t.Run("expired", func(t *testing.T) {
		if _, err := s.open(name, v, now+900); !errors.Is(err, errFlowExpired) {
			t.Fatalf("at expiry: %v", err)
		}
	})
	t.Run("another state's name", func(t *testing.T) {
		other := flowCookieName(randomID())
		if _, err := s.open(other, v, now); !errors.Is(err, errFlowCorrupt) {
			t.Fatalf("under another name: %v", err)
		}
		if _, err := s.open("short", v, now); !errors.Is(err, errFlowCorrupt) {
			t.Fatalf("under a malformed name: %v", err)
		}
	})
	t.Run("another key", func(t *testing.T) {
		other, _ := newSealer(nil, 10) // another process's random key
		if _, err := other.open(name, v, now); !errors.Is(err, errFlowCorrupt) {
			t.Fatalf("another key opened it: %v", err)
		}
		// Rotation: a new first key seals, the old one still opens.
		rotated, _ := newSealer([][]byte{testKey(2), testKey(1)}, 10)
		if got, err := rotated.open(name, v, now); err != nil || got != f {
			t.Fatalf("the old key no longer opens: %v", err)
		}
		v2, _ := rotated.seal(f)
		if _, err := s.open(name, v2, now); !errors.Is(err, errFlowCorrupt) {
			t.Fatal("sealed with the old key after rotation")
		}
		if _, err := newSealer([][]byte{testKey(1)[:16]}, 1); err == nil {
			t.Fatal("a short key was accepted")
		}
	})
	t.Run("replay", func(t *testing.T) {
		if !s.spend(f, now) {
			t.Fatal("first use refused")
		}
		if s.spend(f, now+1) {
			t.Fatal("second use accepted")
		}
		// The set is bounded: others push the oldest out (the identity
		// provider's single-use code still refuses that replay).
		for range 10 {
			s.spend(Flow{State: randomID(), Expires: now + 900}, now)
		}
		if len(s.spent) > 10 || len(s.order) > 10 {
			t.Fatalf("%d spent states held, cap 10", len(s.spent))
		}
		// Expired ones go without waiting for the cap.
		s.spend(Flow{State: randomID(), Expires: now + 2000}, now+1000)
		if len(s.spent) != 1 {
			t.Fatalf("%d spent states after all expired, want 1", len(s.spent))
		}
	})
}

// FuzzOpenFlow: whatever a browser sends as a sign-in cookie, opening it
// never panics, and only a value this sealer made opens, under its name.
func FuzzOpenFlow(f *testing.F) {
	// Fixed key and state: fuzzing workers are other processes (the nonce
	// still differs, so a worker's seals differ from the seeds').
	s, _ := newSealer([][]byte{testKey(3)}, 10)
	const state = "c3RhdGUtb2YtdGhlLWZ1enotdGFyZ2V0LTAxMjM0NTY"
	good, _ := s.seal(Flow{State: state, Verifier: "v", Expires: 2_000_000_000})
	f.Add(flowCookieName(state), good)
	f.Add(flowCookieName(state), good[:len(good)-2])
	f.Add(FlowCookiePrefix+"AAAAAAAAAAAAAAAA", "AAAA")
	f.Add("x", "")
	f.Fuzz(func(t *testing.T, name, value string) {
		got, err := s.open(name, value, 1_700_000_000)
		if err != nil {
			return
		}
		if name != flowCookieName(state) || got.State != state || got.Verifier != "v" {
			t.Fatalf("opened %q under %q: %+v", value, name, got)
		}
	})
}

// TestAnonymousStoresNothing: visiting, starting sign-ins, and callbacks
// that fail leave the session store empty.
func TestAnonymousStoresNothing(t *testing.T) {
	e := newEnv(t, true)
	for i := range 50 {
		b := e.browser()
		for _, p := range []string{"/", "/explorer/", LoginPath, "/explorer/namespaces/mdr16", CallbackPath + "?state=" + randomID() + "&code=x", "/explorer/nope"} {
			b.do("GET", p, nil)
		}
		if i%10 == 0 {
			b.do("POST", LogoutPath, url.Values{CSRFField: {"x"}})
		}
	}
	if n := e.store.Len(); n != 0 {
		t.Fatalf("%d sessions stored by anonymous visits", n)
	}
	// One browser starting sign-in after sign-in keeps at most maxFlows.
	b := e.browser()
	var first string
	for i := range 2 * maxFlows {
		s, _ := b.startSignIn("/explorer/")
		if i == 0 {
			first = s
		}
		e.clock.t = e.clock.t.Add(time.Second)
	}
	n := 0
	for name := range b.cookies {
		if strings.HasPrefix(name, FlowCookiePrefix) {
			n++
		}
	}
	if n != maxFlows {
		t.Fatalf("%d sign-in cookies, want %d", n, maxFlows)
	}
	if _, ok := b.cookies[flowCookieName(first)]; ok {
		t.Fatal("the oldest sign-in was kept, a newer one dropped")
	}
	// A sign-in survives strangers' sign-ins and visits: nothing of theirs
	// is stored, so nothing pushes it out.
	ada := e.browser()
	state, code := ada.startSignIn("/explorer/namespaces/mdr16")
	for range 500 {
		e.browser().startSignIn("/explorer/")
	}
	rec := ada.do("GET", CallbackPath+"?"+url.Values{"state": {state}, "code": {code}}.Encode(), nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-in after strangers' sign-ins: %d\n%s", rec.Code, rec.Body)
	}
	if n := e.store.Len(); n != 1 {
		t.Fatalf("%d sessions, want Ada's", n)
	}
}

// TestLongReturn: a return path too long for a cookie signs in all the
// same, and comes back home.
func TestLongReturn(t *testing.T) {
	e := newEnv(t, true)
	for _, tc := range []struct{ ret, want string }{
		{"/explorer/namespaces/mdr16/search?q=" + strings.Repeat("a", 900), "/explorer/namespaces/mdr16/search?q=" + strings.Repeat("a", 900)},
		{"/explorer/namespaces/mdr16/search?q=" + strings.Repeat("a", 2000), Home},
		{"/explorer/" + strings.Repeat("<&>", 300), Home},
	} {
		b := e.browser()
		state, code := b.startSignIn(tc.ret)
		if c := b.cookies[flowCookieName(state)]; c == nil || len(c.Value) > maxFlowCookie {
			t.Fatalf("return of %d bytes: no sign-in cookie, or too long", len(tc.ret))
		}
		rec := b.do("GET", CallbackPath+"?"+url.Values{"state": {state}, "code": {code}}.Encode(), nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.want {
			t.Errorf("return of %d bytes: %d to %.60q", len(tc.ret), rec.Code, rec.Header().Get("Location"))
		}
	}
}

// TestCallbackAcrossReplicas: with a shared key, a sign-in begun on one
// gateway finishes on another; with each its own random key, it cannot.
func TestCallbackAcrossReplicas(t *testing.T) {
	for _, shared := range []bool{true, false} {
		e := newEnv(t, true)
		cfg := e.app.cfg
		if shared {
			cfg.CookieKeys = [][]byte{testKey(7)}
		}
		var mux [2]*http.ServeMux
		for i := range mux {
			a, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			mux[i] = http.NewServeMux()
			a.Register(mux[i])
		}
		e.h = mux[0]
		b := e.browser()
		state, code := b.startSignIn("/explorer/")
		e.h = mux[1]
		rec := b.do("GET", CallbackPath+"?"+url.Values{"state": {state}, "code": {code}}.Encode(), nil)
		if shared && rec.Code != http.StatusSeeOther || !shared && rec.Code != http.StatusBadRequest {
			t.Errorf("shared key %t: callback on the other replica: %d\n%s", shared, rec.Code, rec.Body)
		}
	}
}

// TestEventsEndWithSession: an open results stream ends when its session
// is signed out, and when its user's token is revoked.
func TestEventsEndWithSession(t *testing.T) {
	for _, how := range []string{"sign-out", "revoke"} {
		t.Run(how, func(t *testing.T) {
			e, fb, _ := newInqEnv(t)
			e.app.cfg.SessionCheck = 10 * time.Millisecond
			fb.ins["1"], fb.authors["1"] = &brokerv1.Inquiry{Id: "1", Status: brokerv1.InquiryStatus_RELEASED, TargetSites: []string{"berlin"}}, "42"
			fb.watch, fb.hold = []*brokerv1.ListRepliesResponse{{InquiryId: "1"}}, true
			b := e.browser()
			b.signIn()
			id := b.cookies[SessionCookie].Value
			sess, err := e.store.Get(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			ended := make(chan *httptest.ResponseRecorder, 1)
			go func() {
				r := httptest.NewRequest("GET", "http://gw.test"+InquiriesPath+"/1/events", nil)
				r.AddCookie(&http.Cookie{Name: SessionCookie, Value: id})
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, r)
				ended <- rec
			}()
			// The stream is open and checked many times over before anything
			// happens; it does not end by itself.
			select {
			case rec := <-ended:
				t.Fatalf("the stream ended by itself: %d\n%s", rec.Code, rec.Body)
			case <-time.After(200 * time.Millisecond):
			}
			switch how {
			case "sign-out":
				rec := b.do("POST", LogoutPath, url.Values{CSRFField: {sess.CSRF}}, "Origin", "http://gw.test")
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("logout: %d", rec.Code)
				}
			case "revoke":
				e.v.mu.Lock()
				e.v.refused[sess.Token.AccessToken] = true
				e.v.mu.Unlock()
			}
			// Guard against a hang only: before, the stream ran streamLife.
			select {
			case rec := <-ended:
				if rec.Code != 200 || !strings.Contains(rec.Body.String(), "event: results") {
					t.Fatalf("stream: %d\n%s", rec.Code, rec.Body)
				}
			case <-time.After(streamLife / 2):
				t.Fatal("the stream outlived its session")
			}
		})
	}
}

func TestParseCookieKeys(t *testing.T) {
	k1, k2 := testKey(1), testKey(2)
	std, urlSafe := base64.StdEncoding.EncodeToString(k1), base64.RawURLEncoding.EncodeToString(k2)
	keys, err := ParseCookieKeys("# rotated 2026-11\n" + std + "\n\n  " + urlSafe + " \r\n")
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], k1) || !bytes.Equal(keys[1], k2) {
		t.Fatalf("keys %x, %v", keys, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "not base64!", base64.StdEncoding.EncodeToString(k1[:16])} {
		if _, err := ParseCookieKeys(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

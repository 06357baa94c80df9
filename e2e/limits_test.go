package e2e

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestInputLimits sends every kind of oversized input to the real gateway:
// a field over its documented limit is 400 naming the field, a body over
// the route's limit is 413, an overlong path segment is 400, and in every
// case nothing was stored (docs/security.md, "Input limits").
func TestInputLimits(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{})
	seedAuth(t, s)
	seedSites(t, s)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key := spkiB64(t, &k.PublicKey)
	register := func(email, name, description, pub string) (*http.Response, any) {
		return postJSON(t, s, oauth+"/register", fmt.Sprintf(`{"email":%q,"name":%q,"description":%q,"base64EncodedPublicKey":%q}`, email, name, description, pub))
	}
	long := func(n int) string { return strings.Repeat("x", n) }

	t.Run("register fields", func(t *testing.T) {
		for _, c := range []struct {
			name, email, who, description, pub string
			status                             int
			reason                             string
		}{
			{"name", "long-name@fris.test", long(257), "", key, 400, "name is longer than 256 bytes"},
			{"description", "long-desc@fris.test", "N", long(4097), key, 400, "description is longer than 4096 bytes"},
			{"public key", "long-key@fris.test", "N", "", key + strings.Repeat("A", 8<<10), 400, "base64EncodedPublicKey is longer than 8192 bytes"},
			{"email", long(250) + "@fris.test", "N", "", key, 400, "email is longer than 254 bytes"},
			// The 4 MiB name of the review, ten times, grew auth.db by
			// 100 MiB: now the gateway stops it at 64 KiB.
			{"whole body", "huge@fris.test", long(4 << 20), "", key, 413, "request body larger than 65536 bytes"},
			{"body just over", "over@fris.test", "N", long(64 << 10), key, 413, "request body larger than 65536 bytes"},
		} {
			res, v := register(c.email, c.who, c.description, c.pub)
			wantStatus(t, res, v, c.status)
			if d, _ := field(t, v, "error_description").(string); !strings.Contains(d, c.reason) {
				t.Errorf("%s: error_description %q lacks %q", c.name, d, c.reason)
			}
			// Nothing was stored: the address (and the key) are free. A
			// fresh key each time, since the one above may not be reused
			// once registered.
			fresh, _ := rsa.GenerateKey(rand.Reader, 2048)
			email := c.email
			if len(email) > 254 {
				email = "short-" + c.name[:2] + "@fris.test"
			}
			res, v = register(email, "N", "", spkiB64(t, &fresh.PublicKey))
			if res.StatusCode != 200 {
				t.Errorf("%s: registering %s after the refusal = %d %v: something was stored", c.name, email, res.StatusCode, v)
			}
		}
		users := s.AuthCLI(t, 0, "users")
		if strings.Contains(users, long(257)) || strings.Contains(users, long(250)) {
			t.Fatal("an oversized field reached the user store")
		}
	})

	t.Run("token and login bodies", func(t *testing.T) {
		body := fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, demoClient, long(70<<10))
		res, v := postJSON(t, s, oauth+"/token", body)
		wantStatus(t, res, v, 413)
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {demoClient}, "client_secret": {long(70 << 10)}}
		res, v = postForm(t, s, oauth+"/token", form, "", "")
		wantStatus(t, res, v, 413)
		// Under the body limit but over the field's: 400, named.
		res, v = postJSON(t, s, oauth+"/token", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, demoClient, long(2000)))
		wantStatus(t, res, v, 400)
		wantContains(t, field(t, v, "error_description").(string), "client_secret is longer than 1024 bytes")
		// The login form: a page, 413.
		c := browser(t)
		f := loginForm(t, s, c, "client_id="+demoClient)
		f.Set("email", demoEmail)
		f.Set("password", long(70<<10))
		res, page := submit(t, s, c, f)
		if res.StatusCode != 413 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("oversized login form = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		wantContains(t, page, "too large")
	})

	t.Run("clients and users", func(t *testing.T) {
		out := s.AuthCLI(t, 1, "create-client", "-client-id", "long-named", "-name", long(300), "-redirect-url", callback)
		wantContains(t, out, "name is longer than 256 bytes")
		_, b := s.Get(t, oauth+"/clients", 200)
		if strings.Contains(string(b), "long-named") {
			t.Fatal("the refused client was stored")
		}
		out = s.AuthCLI(t, 1, "create-user", "-email", "long-user@fris.test", "-name", long(300), "-password", "long enough pw")
		wantContains(t, out, "real_name is longer than 256 bytes")
		if strings.Contains(s.AuthCLI(t, 0, "users"), "long-user@fris.test") {
			t.Fatal("the refused user was stored")
		}
	})

	t.Run("path segments", func(t *testing.T) {
		seg := long(513)
		res, b := s.Do(t, http.MethodGet, mdr+"/dataelements/"+seg, nil)
		if res.StatusCode != 400 || !strings.Contains(string(b), "path segment is longer than 512 bytes") {
			t.Fatalf("long mdr segment = %d %s", res.StatusCode, b)
		}
		res, b = s.Do(t, http.MethodPut, charite.spec()+"/pats/"+seg, strings.NewReader(patientDoc(seg, "Patient", "")), charite.xml()...)
		if res.StatusCode != 400 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("long patient id = %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		// At the limit the request reaches the service (which stores a
		// patient id of 512 bytes).
		at := long(512)
		res, b = s.Do(t, http.MethodPut, charite.spec()+"/pats/"+at, strings.NewReader(patientDoc(at, "Patient", "")), charite.xml()...)
		if res.StatusCode >= 300 {
			t.Fatalf("a 512-byte patient id = %d %s", res.StatusCode, b)
		}
	})
}

// limited are the small abuse limits TestAbuseLimits runs with, so a few
// attempts reach them; the gateway trusts loopback as a proxy so each case
// can come from an address of its own (X-Forwarded-For).
func limitedStack(t *testing.T, o Options) *Stack {
	o.GatewayArgs = append(o.GatewayArgs, "-trusted-proxies", "127.0.0.0/8,::1")
	o.AuthArgs = append(o.AuthArgs, "-limit-login", "3/1h", "-limit-client-secret", "3/1h", "-limit-addr", "6/1h")
	o.UploadArgs = append(o.UploadArgs, "-limit-basic", "3/1h", "-limit-addr", "1000/1h")
	o.BrokerArgs = append(o.BrokerArgs, "-limit-bank-token", "3/1h", "-limit-activation-code", "3/1h", "-limit-addr", "1000/1h",
		"-limit-mail", "3/1h", "-limit-mail-addr", "100/1h", "-registration", "activation-code")
	return NewStack(t, o)
}

func from(addr string, headers ...string) []string {
	return append([]string{"X-Forwarded-For", addr}, headers...)
}

// throttled asserts a refusal by an abuse limit: 429 with a Retry-After of
// whole seconds; it returns the body.
func throttled(t *testing.T, what string, res *http.Response, b []byte) string {
	t.Helper()
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("%s = %d %s, want 429", what, res.StatusCode, b)
	}
	ra, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 3600 {
		t.Fatalf("%s: Retry-After %q, want whole seconds within the limit's hour", what, res.Header.Get("Retry-After"))
	}
	return string(b)
}

// refusedTotal reads fris_ratelimit_refused_total{flow} from a service's
// operations port.
func refusedTotal(t *testing.T, ops, flow string) float64 {
	t.Helper()
	res, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	prefix := `fris_ratelimit_refused_total{flow="` + flow + `"} `
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s on %s/metrics", prefix, ops)
	return 0
}

// TestAbuseLimits: after the configured number of failures from an
// address every credential flow answers that address 429 with
// Retry-After, the same for an account that does not exist, counts the
// refusal in its metrics and logs it, while the holder from another
// address is admitted; activation mails are capped per address.
func TestAbuseLimits(t *testing.T) {
	t.Parallel()
	for _, o := range []struct {
		name string
		opts Options
	}{{"bolt", Options{}}, {"redis", Options{Redis: true}}, {"cluster", Options{Cluster: true}}} {
		t.Run(o.name, func(t *testing.T) { abuseLimits(t, o.opts) })
	}
}

func abuseLimits(t *testing.T, o Options) {
	s := limitedStack(t, o)
	seedAuth(t, s)
	seedSites(t, s)

	// Three failures each for an existing and an unknown account (from
	// separate addresses, so the address limit stays out of it); the
	// fourth attempt is refused without looking, with the same answer.
	guess := func(t *testing.T, what string, attempt func(i int) (*http.Response, []byte), failed int) string {
		t.Helper()
		for i := range 3 {
			if res, b := attempt(i); res.StatusCode != failed {
				t.Fatalf("%s attempt %d = %d %s, want %d", what, i+1, res.StatusCode, b, failed)
			}
		}
		res, b := attempt(3)
		return throttled(t, what+" after 3 failures", res, b)
	}
	sameAnswer := func(t *testing.T, known, unknown string) {
		t.Helper()
		if known != unknown {
			t.Fatalf("the refusal tells accounts apart:\nknown:   %s\nunknown: %s", known, unknown)
		}
	}

	t.Run("login form", func(t *testing.T) {
		attempt := func(addr, email, password string) (*http.Response, []byte) {
			res, b, err := formLoginPage(browser(t), s.URL, addr, email, password)
			if err != nil {
				t.Fatal(err)
			}
			return res, b
		}
		before := refusedTotal(t, s.AuthOps, "login")
		known := guess(t, "wrong password", func(int) (*http.Response, []byte) { return attempt("198.51.100.1", demoEmail, "wrong password") }, 401)
		unknown := guess(t, "unknown account", func(int) (*http.Response, []byte) {
			return attempt("198.51.100.2", "nobody@fris.test", "wrong password")
		}, 401)
		// The page carries a fresh nonce each time; nothing else may
		// differ.
		nonce := regexp.MustCompile(`nonce="[^"]*"|'nonce-[^']*'`)
		sameAnswer(t, nonce.ReplaceAllString(known, ""), nonce.ReplaceAllString(unknown, ""))
		wantContains(t, known, "oo many attempts")
		// The lock holds the guessing address only: the right password
		// from there is refused too (the lock would be worthless
		// otherwise), from the holder's own address it signs in.
		res, b := attempt("198.51.100.1", demoEmail, demoPass)
		throttled(t, "the right password from the guessing address", res, b)
		if res, b := attempt("198.51.100.9", demoEmail, demoPass); res.StatusCode != http.StatusFound {
			t.Fatalf("the right password from another address while one guesses = %d %s, want 302", res.StatusCode, b)
		}
		// Per address: six failures on six accounts from one address,
		// then the seventh account is refused too.
		for i := range 6 {
			if res, b := attempt("198.51.100.3", fmt.Sprintf("user%d@fris.test", i), "x"); res.StatusCode != 401 {
				t.Fatalf("address failure %d = %d %s", i+1, res.StatusCode, b)
			}
		}
		res, b = attempt("198.51.100.3", "user6@fris.test", "x")
		throttled(t, "a seventh account from the same address", res, b)
		if after := refusedTotal(t, s.AuthOps, "login"); after < before+4 {
			t.Fatalf("fris_ratelimit_refused_total{flow=login} went %v -> %v, want 4 more", before, after)
		}
		// Logged, and a refused sign-in is an audit event.
		eventually(t, func() bool {
			logs := s.Auth.logs()
			return strings.Contains(logs, `"msg":"attempt refused by an abuse limit"`) &&
				regexp.MustCompile(`"log":"audit".*"action":"auth.login".*"outcome":"failure".*ResourceExhausted`).MatchString(logs)
		})
	})

	t.Run("client secret", func(t *testing.T) {
		tokenAttempt := func(addr, id string) func(int) (*http.Response, []byte) {
			return func(int) (*http.Response, []byte) {
				body := fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":"wrong-secret-0123456789"}`, id)
				return s.Do(t, http.MethodPost, oauth+"/token", strings.NewReader(body), from(addr, "Content-Type", "application/json")...)
			}
		}
		known := guess(t, "wrong client secret", tokenAttempt("198.51.100.11", demoClient), 401)
		unknown := guess(t, "unknown client", tokenAttempt("198.51.100.12", "no-such-client"), 401)
		sameAnswer(t, known, unknown)
		// The client's holder, with the right secret from its own
		// address, is not refused because another address guesses.
		res, b := s.Do(t, http.MethodPost, oauth+"/token", strings.NewReader(fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, demoClient, demoSecret)),
			from("198.51.100.13", "Content-Type", "application/json")...)
		if res.StatusCode != 200 {
			t.Fatalf("the right secret from another address while one guesses = %d %s, want 200", res.StatusCode, b)
		}
		if n := refusedTotal(t, s.AuthOps, "client_secret"); n != 2 {
			t.Fatalf("fris_ratelimit_refused_total{flow=client_secret} = %v, want 2", n)
		}
	})

	t.Run("upload Basic", func(t *testing.T) {
		attempt := func(addr, user string) func(int) (*http.Response, []byte) {
			return func(int) (*http.Response, []byte) {
				return s.Do(t, http.MethodGet, charite.spec()+"/uploadStats", nil, from(addr, "Authorization", basic(user, "wrong password"))...)
			}
		}
		known := guess(t, "wrong upload password", attempt("198.51.100.21", charite.user), 401)
		unknown := guess(t, "unknown upload user", attempt("198.51.100.22", "no-such-user"), 401)
		sameAnswer(t, known, unknown)
		// Another site's right credentials are not affected, nor the
		// guessed site's own from another address.
		s.Get(t, dresden.spec()+"/uploadStats", 200, from("198.51.100.21", dresden.auth()...)...)
		s.Get(t, charite.spec()+"/uploadStats", 200, from("198.51.100.29", charite.auth()...)...)
		if n := refusedTotal(t, s.UploadOps, "basic"); n != 2 {
			t.Fatalf("fris_ratelimit_refused_total{flow=basic} = %v, want 2", n)
		}
	})

	t.Run("bank token", func(t *testing.T) {
		// An active bank exists for the known case.
		email := "bank-known@fris.test"
		if res, b := s.Do(t, http.MethodPut, sb+"/banks/"+email, nil, from("198.51.100.30")...); res.StatusCode != 401 {
			t.Fatalf("registering %s = %d %s, want 401 (activation pending)", email, res.StatusCode, b)
		}
		code := brokerLogCode(t, s, email)
		res, tok := s.Do(t, http.MethodPut, sb+"/banks/"+email, nil, from("198.51.100.30", "Authorization", "SamplyRegistration "+code)...)
		if res.StatusCode != 201 {
			t.Fatalf("activating %s = %d %s", email, res.StatusCode, tok)
		}
		attempt := func(addr, bank string) func(int) (*http.Response, []byte) {
			return func(int) (*http.Response, []byte) {
				return s.Do(t, http.MethodGet, sb+"/banks/"+bank+"/status", nil, from(addr, "Authorization", "Samply "+strings.Repeat("0", 64))...)
			}
		}
		known := guess(t, "wrong bank token", attempt("198.51.100.31", email), 403)
		unknown := guess(t, "unknown bank", attempt("198.51.100.32", "bank-unknown@fris.test"), 404)
		sameAnswer(t, known, unknown)
		if n := refusedTotal(t, s.BrokerOps, "bank_token"); n != 2 {
			t.Fatalf("fris_ratelimit_refused_total{flow=bank_token} = %v, want 2", n)
		}
	})

	t.Run("activation codes and mails", func(t *testing.T) {
		pending := "bank-pending@fris.test"
		if res, b := s.Do(t, http.MethodPut, sb+"/banks/"+pending, nil, from("198.51.100.40")...); res.StatusCode != 401 {
			t.Fatalf("registering %s = %d %s", pending, res.StatusCode, b)
		}
		attempt := func(addr, bank string) func(int) (*http.Response, []byte) {
			return func(i int) (*http.Response, []byte) {
				return s.Do(t, http.MethodPut, sb+"/banks/"+bank, nil, from(addr, "Authorization", fmt.Sprintf("SamplyRegistration 0000000%d", i))...)
			}
		}
		known := guess(t, "wrong activation code", attempt("198.51.100.41", pending), 401)
		unknown := guess(t, "no activation pending", attempt("198.51.100.42", "bank-none@fris.test"), 401)
		sameAnswer(t, known, unknown)

		// Mails: three per bank email (the first registration above was
		// one), then 429; the log shows exactly three codes.
		for i := range 2 {
			if res, b := s.Do(t, http.MethodPut, sb+"/banks/"+pending, nil, from(fmt.Sprintf("198.51.100.%d", 50+i))...); res.StatusCode != 401 {
				t.Fatalf("mail %d = %d %s", i+2, res.StatusCode, b)
			}
		}
		res, b := s.Do(t, http.MethodPut, sb+"/banks/"+pending, nil, from("198.51.100.59")...)
		throttled(t, "a fourth activation mail", res, b)
		mails := 0
		for _, line := range strings.Split(s.Broker.logs(), "\n") {
			if strings.Contains(line, `"msg":"activation code`) && strings.Contains(line, `"bank":"`+pending+`"`) {
				mails++
			}
		}
		if mails != 3 {
			t.Fatalf("%d activation mails to %s, want 3", mails, pending)
		}
		if n := refusedTotal(t, s.BrokerOps, "activation_mail"); n != 1 {
			t.Fatalf("fris_ratelimit_refused_total{flow=activation_mail} = %v, want 1", n)
		}
	})
}

// TestLoginUnderGuessing: 64 goroutines guess passwords at the login form
// from one address while a real user signs in from another. With the
// default limits the guessers are soon refused without a hash, so the
// user's sign-ins all succeed and stay fast. Hashing costs what it does in
// production (argon2id's 19 MiB), and no check is cached.
func TestLoginUnderGuessing(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{
		GatewayArgs: []string{"-trusted-proxies", "127.0.0.0/8"},
		AuthArgs:    []string{"-argon2-memory-kib", "19456", "-secret-cache-ttl", "0"},
	})
	seedAuth(t, s)
	const guessers = 64
	var (
		stop             atomic.Bool
		wg               sync.WaitGroup
		refused, guessed atomic.Int64
	)
	for g := range guessers {
		wg.Go(func() {
			c := browser(t)
			for i := 0; !stop.Load(); i++ {
				// Accounts that do not exist and the real user's: its lock
				// holds the guessing address only (docs/security.md,
				// Abuse limits).
				email := fmt.Sprintf("guess%d-%d@fris.test", g, i)
				if i%2 == 0 {
					email = demoEmail
				}
				status := formLogin(c, s.URL, "203.0.113.66", email, fmt.Sprintf("guess %d-%d", g, i))
				switch status {
				case http.StatusTooManyRequests:
					refused.Add(1)
				case http.StatusUnauthorized:
					guessed.Add(1)
				case 0:
					return
				}
			}
		})
	}
	// The guessers' first wave (up to the address's burst of 30 checks)
	// passes; the measurement is of what follows.
	time.Sleep(time.Second)
	var took []time.Duration
	c := browser(t)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) || len(took) < 10 {
		start := time.Now()
		if st := formLogin(c, s.URL, "198.51.100.7", demoEmail, demoPass); st != http.StatusFound {
			stop.Store(true)
			t.Fatalf("the real user's sign-in %d = %d, want 302", len(took)+1, st)
		}
		took = append(took, time.Since(start))
	}
	stop.Store(true)
	wg.Wait()
	slices.Sort(took)
	p99 := took[(len(took)*99+99)/100-1]
	t.Logf("real user: %d sign-ins under %d guessers, p50 %v, p99 %v; guesses: %d checked (401), %d refused (429)",
		len(took), guessers, took[len(took)/2].Round(time.Millisecond), p99.Round(time.Millisecond), guessed.Load(), refused.Load())
	if refused.Load() == 0 {
		t.Fatal("no guess was refused: the abuse limit did not apply")
	}
	// What keeps the user fast is that guesses stop being hashed, which the
	// count below proves deterministically; the latency itself depends on
	// how busy the machine is (make test runs packages side by side under
	// -race), so it is only logged here (each sign-in is bounded against a
	// hang by the browser's 30 s timeout) and held to its target on a quiet
	// machine by `make bench` (suite guess, -guess-max-p99; BENCHMARKS.md,
	// "Login under guessing").
	// Default -limit-addr: 30 failures, then a back-off; a few more pass
	// while the first are in flight.
	if guessed.Load() > 30+guessers {
		t.Fatalf("%d guesses were checked from one address, want at most %d", guessed.Load(), 30+guessers)
	}
}

// formLogin signs in through the login form from addr (X-Forwarded-For)
// and returns the POST's status, 0 when the request failed.
func formLogin(c *http.Client, base, addr, email, password string) int {
	res, _, err := formLoginPage(c, base, addr, email, password)
	if err != nil {
		return 0
	}
	return res.StatusCode
}

// formLoginPage gets the login page and posts it filled in, both from addr;
// it returns the POST's response and body.
func formLoginPage(c *http.Client, base, addr, email, password string) (*http.Response, []byte, error) {
	req, _ := http.NewRequest(http.MethodGet, base+oauth+"/authorize?client_id="+demoClient, nil)
	req.Header.Set("X-Forwarded-For", addr)
	res, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	f := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(page), -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	f.Set("email", email)
	f.Set("password", password)
	req, _ = http.NewRequest(http.MethodPost, base+oauth+"/authorize", strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("X-Forwarded-For", addr)
	res, err = c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

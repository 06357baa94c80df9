package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The attack suite for the credential checks (docs/security.md, "Abuse
// limits"): each lever an attacker with a few addresses has, pulled from
// loopback source addresses of its own (127.0.1.x attack, 127.0.2.x are
// the holders' usual addresses, 127.0.3.x addresses a holder never used),
// against the real gateway, which trusts no proxy here: the connection's
// address is the client's. What must hold: the holder's right credential
// works during and after the attack.

// attackStack runs with small limits, so a bounded attack reaches them:
// per account and address 3 failures, per account from all addresses 10,
// and a secret cache too short to help (the known address must).
func attackStack(t *testing.T, o Options) *Stack {
	o.AuthArgs = append(o.AuthArgs, "-limit-login", "3/1h:1s..1m", "-limit-client-secret", "3/1h:1s..1m", "-limit-addr", "1000/1h",
		"-limit-account-ceiling", "10/1h", "-limit-register", "5/1h", "-secret-cache-ttl", "1ms")
	o.UploadArgs = append(o.UploadArgs, "-limit-basic", "3/1h:1s..1m", "-limit-addr", "1000/1h", "-limit-account-ceiling", "10/1h", "-secret-cache-ttl", "1ms")
	o.BrokerArgs = append(o.BrokerArgs, "-limit-bank-token", "3/1h:1s..1m", "-limit-addr", "1000/1h", "-limit-account-ceiling", "10/1h",
		"-registration", "activation-code", "-token-cache-ttl", "0")
	return NewStack(t, o)
}

// peer is an HTTP client whose connections come from one loopback
// address, with a cookie jar (nil: a new one), not following redirects.
type peer struct {
	*http.Client
	s *Stack
}

func from127(t *testing.T, s *Stack, src string, jar http.CookieJar) peer {
	t.Helper()
	ip := net.ParseIP(src)
	if ip == nil || !ip.IsLoopback() {
		t.Fatalf("%s is no loopback address", src)
	}
	if jar == nil {
		var err error
		if jar, err = cookiejar.New(nil); err != nil {
			t.Fatal(err)
		}
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return peer{&http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: checked(t, tr, nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, s}
}

// do sends a request and returns its status and body; headers are pairs.
func (p peer) do(t *testing.T, method, path string, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := p.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func (p peer) clientCredentials(t *testing.T, secret string) (*http.Response, []byte) {
	t.Helper()
	return p.do(t, http.MethodPost, oauth+"/token", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q}`, demoClient, secret),
		"Content-Type", "application/json")
}

// form gets the login page and returns its fields.
func (p peer) form(t *testing.T) url.Values {
	t.Helper()
	res, b := p.do(t, http.MethodGet, oauth+"/authorize?client_id="+demoClient, "")
	if res.StatusCode != 200 {
		t.Fatalf("login page = %d %s", res.StatusCode, b)
	}
	f := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(b), -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	return f
}

// post submits a login form filled in with email and password.
func (p peer) post(t *testing.T, f url.Values, email, password string) (*http.Response, []byte) {
	t.Helper()
	f.Set("email", email)
	f.Set("password", password)
	return p.do(t, http.MethodPost, oauth+"/authorize", f.Encode(), "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
}

func (p peer) signIn(t *testing.T, email, password string) (*http.Response, []byte) {
	t.Helper()
	return p.post(t, p.form(t), email, password)
}

// codeFlow signs the demo user in and exchanges the code with the demo
// client's secret, all from p's address; it returns the exchange's status.
func (p peer) codeFlow(t *testing.T) int {
	t.Helper()
	res, b := p.signIn(t, demoEmail, demoPass)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("sign-in for the code flow = %d %s", res.StatusCode, b)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %q has no code", res.Header.Get("Location"))
	}
	res, b = p.do(t, http.MethodPost, oauth+"/token", codeRequest(loc.Query().Get("code")), "Content-Type", "application/json")
	if res.StatusCode != 200 && res.StatusCode != 429 {
		t.Fatalf("code exchange = %d %s", res.StatusCode, b)
	}
	return res.StatusCode
}

// metric reads one unlabelled counter from a service's operations port.
func metric(t *testing.T, ops, name string) float64 {
	t.Helper()
	res, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s on %s/metrics", name, ops)
	return 0
}

// guessFrom sends n attempts from each of addrs and returns how many were
// checked (failed) and how many refused; any other answer fails the test.
func guessFrom(t *testing.T, addrs []peer, n int, attempt func(p peer, i int) (*http.Response, []byte), failed int) (checked, refused int) {
	t.Helper()
	for _, p := range addrs {
		for i := range n {
			res, b := attempt(p, i)
			switch res.StatusCode {
			case failed:
				checked++
			case http.StatusTooManyRequests:
				throttled(t, "a guess", res, b)
				refused++
			default:
				t.Fatalf("guess = %d %s, want %d or 429", res.StatusCode, b, failed)
			}
		}
	}
	return checked, refused
}

func attackers(t *testing.T, s *Stack, n int) []peer {
	var ps []peer
	for i := range n {
		ps = append(ps, from127(t, s, fmt.Sprintf("127.0.1.%d", i+1), nil))
	}
	return ps
}

// TestAttackClientSecret: twenty addresses guess the demo client's secret
// (ids are public) until every limit holds them; the client's holder, from
// its usual address, keeps getting tokens by client_credentials and by the
// code flow, during and after; a browser through the code flow from a new
// address too (its fresh code shows the client's own flow). Only an
// address with no such evidence meets the account ceiling.
func TestAttackClientSecret(t *testing.T) {
	t.Parallel()
	s := attackStack(t, Options{})
	seedAuth(t, s)
	holder := from127(t, s, "127.0.2.1", nil)
	if res, b := holder.clientCredentials(t, demoSecret); res.StatusCode != 200 {
		t.Fatalf("the holder before the attack = %d %s", res.StatusCode, b)
	}
	checked, refused := 0, 0
	for _, p := range attackers(t, s, 20) {
		c, r := guessFrom(t, []peer{p}, 5, func(p peer, i int) (*http.Response, []byte) {
			return p.clientCredentials(t, "wrong-secret-"+strconv.Itoa(i)+"-0123456789")
		}, 401)
		checked, refused = checked+c, refused+r
		// During: the holder's every request succeeds.
		if res, b := holder.clientCredentials(t, demoSecret); res.StatusCode != 200 {
			t.Fatalf("the holder during the attack (after %d guesses) = %d %s", checked+refused, res.StatusCode, b)
		}
	}
	if checked > 10 || refused < 90 {
		t.Fatalf("100 guesses from 20 addresses: %d checked, %d refused; want at most the ceiling's 10 checked", checked, refused)
	}
	if st := holder.codeFlow(t); st != 200 {
		t.Fatalf("the holder's code flow during the attack = %d", st)
	}
	if st := from127(t, s, "127.0.3.1", nil).codeFlow(t); st != 200 {
		t.Fatalf("a code flow from a new address during the attack = %d", st)
	}
	// The documented limit: client_credentials from an address the client
	// never used, with nothing else to show, meets the ceiling.
	res, b := from127(t, s, "127.0.3.2", nil).clientCredentials(t, demoSecret)
	throttled(t, "the right secret from a new address at a full ceiling", res, b)
	// After: the holder still succeeds.
	for range 3 {
		if res, b := holder.clientCredentials(t, demoSecret); res.StatusCode != 200 {
			t.Fatalf("the holder after the attack = %d %s", res.StatusCode, b)
		}
	}
}

// TestAttackLogin: one address guesses a user's password until locked, and
// more until the account's ceiling is full; the user signs in from the
// usual address, and from a new address with the browser's known-device
// cookie. The guessing address is refused even with the right password.
func TestAttackLogin(t *testing.T) {
	t.Parallel()
	s := attackStack(t, Options{})
	seedAuth(t, s)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	home := from127(t, s, "127.0.2.1", jar)
	if res, b := home.signIn(t, demoEmail, demoPass); res.StatusCode != http.StatusFound {
		t.Fatalf("sign-in before the attack = %d %s", res.StatusCode, b)
	}
	u, _ := url.Parse(s.URL + oauth + "/authorize")
	device := false
	for _, c := range jar.Cookies(u) {
		device = device || c.Name == "fris_device"
	}
	if !device {
		t.Fatal("no known-device cookie after a successful sign-in")
	}
	wrong := func(p peer, i int) (*http.Response, []byte) {
		return p.signIn(t, demoEmail, "wrong password "+strconv.Itoa(i))
	}
	one := attackers(t, s, 1)
	checked, _ := guessFrom(t, one, 6, wrong, 401)
	if checked != 3 {
		t.Fatalf("one address: %d guesses checked, want the pair's 3", checked)
	}
	if res, b := home.signIn(t, demoEmail, demoPass); res.StatusCode != http.StatusFound {
		t.Fatalf("the user from the usual address while another guesses = %d %s", res.StatusCode, b)
	}
	more, _ := guessFrom(t, attackers(t, s, 12)[1:], 2, wrong, 401)
	if checked+more != 10 {
		t.Fatalf("%d guesses checked from 12 addresses, want the ceiling's 10", checked+more)
	}
	res, b := one[0].signIn(t, demoEmail, demoPass)
	throttled(t, "the right password from the guessing address", res, b)
	for _, p := range []peer{home, from127(t, s, "127.0.3.1", jar)} {
		if res, b := p.signIn(t, demoEmail, demoPass); res.StatusCode != http.StatusFound {
			t.Fatalf("the user (usual address, or a new one with the device cookie) at a full ceiling = %d %s", res.StatusCode, b)
		}
	}
	// The documented limit: a new address without the cookie meets the
	// ceiling.
	res, b = from127(t, s, "127.0.3.2", nil).signIn(t, demoEmail, demoPass)
	throttled(t, "a new browser at a full ceiling", res, b)
}

// TestAttackSiteBasic: the site user's name is in the upload path; twenty
// addresses guess its password, the connector's uploads with the right
// one go on.
func TestAttackSiteBasic(t *testing.T) {
	t.Parallel()
	s := attackStack(t, Options{})
	seedSites(t, s)
	connector := from127(t, s, "127.0.2.1", nil)
	upload := func(id string) {
		t.Helper()
		res, b := connector.do(t, http.MethodPut, charite.spec()+"/pats/"+id, patientDoc(id, "Patient", ""), charite.xml()...)
		if res.StatusCode >= 300 {
			t.Fatalf("the connector's upload %s = %d %s", id, res.StatusCode, b)
		}
	}
	upload("attack-before")
	checked := 0
	for i, p := range attackers(t, s, 20) {
		c, _ := guessFrom(t, []peer{p}, 4, func(p peer, i int) (*http.Response, []byte) {
			return p.do(t, http.MethodGet, charite.spec()+"/uploadStats", "", "Authorization", basic(charite.user, "guess "+strconv.Itoa(i)))
		}, 401)
		checked += c
		upload("attack-during-" + strconv.Itoa(i))
	}
	if checked > 10 {
		t.Fatalf("%d guesses checked from 20 addresses, want at most the ceiling's 10", checked)
	}
	upload("attack-after")
	res, b := connector.do(t, http.MethodGet, charite.spec()+"/uploadStats", "", charite.auth()...)
	if res.StatusCode != 200 {
		t.Fatalf("the connector's stats after the attack = %d %s", res.StatusCode, b)
	}
}

// TestAttackBankToken: the bank's email is in its paths; twenty addresses
// guess its token, the bank's own polls with the right one go on (no
// token cache here: its usual address is what counts).
func TestAttackBankToken(t *testing.T) {
	t.Parallel()
	s := attackStack(t, Options{})
	bank := from127(t, s, "127.0.2.1", nil)
	const email = "bank-attacked@fris.test"
	if res, b := bank.do(t, http.MethodPut, sb+"/banks/"+email, ""); res.StatusCode != 401 {
		t.Fatalf("registering = %d %s, want 401 (activation pending)", res.StatusCode, b)
	}
	res, tok := bank.do(t, http.MethodPut, sb+"/banks/"+email, "", "Authorization", "SamplyRegistration "+brokerLogCode(t, s, email))
	if res.StatusCode != 201 {
		t.Fatalf("activating = %d %s", res.StatusCode, tok)
	}
	poll := func(when string) {
		t.Helper()
		if res, b := bank.do(t, http.MethodGet, sb+"/banks/"+email+"/status", "", "Authorization", "Samply "+strings.TrimSpace(string(tok))); res.StatusCode >= 300 {
			t.Fatalf("the bank's poll %s = %d %s", when, res.StatusCode, b)
		}
	}
	poll("before the attack")
	checked := 0
	for _, p := range attackers(t, s, 20) {
		c, _ := guessFrom(t, []peer{p}, 4, func(p peer, i int) (*http.Response, []byte) {
			return p.do(t, http.MethodGet, sb+"/banks/"+email+"/status", "", "Authorization", "Samply "+strings.Repeat(strconv.Itoa(i), 64))
		}, 403)
		checked += c
		poll("during the attack")
	}
	if checked > 10 {
		t.Fatalf("%d guesses checked from 20 addresses, want at most the ceiling's 10", checked)
	}
	poll("after the attack")
}

// TestAttackConcurrentGuesses: fifty wrong passwords for one account sent
// at once from fifty addresses cost at most the ceiling's ten hashes
// (fris_password_hashes_total), on every store: each attempt reserves its
// budget before its hash.
func TestAttackConcurrentGuesses(t *testing.T) {
	t.Parallel()
	for _, o := range []struct {
		name string
		opts Options
	}{{"bolt", Options{}}, {"redis", Options{Redis: true}}, {"cluster", Options{Cluster: true}}} {
		t.Run(o.name, func(t *testing.T) {
			s := attackStack(t, o.opts)
			seedAuth(t, s)
			for _, account := range []string{demoEmail, "nobody@fris.test"} {
				ps := make([]peer, 50)
				forms := make([]url.Values, 50)
				for i := range ps {
					ps[i] = from127(t, s, fmt.Sprintf("127.0.%d.%d", 10+len(account)%2, i+1), nil)
					forms[i] = ps[i].form(t)
				}
				before := metric(t, s.AuthOps, "fris_password_hashes_total")
				var wg sync.WaitGroup
				statuses := make([]int, 50)
				start := make(chan struct{})
				for i := range ps {
					wg.Go(func() {
						<-start
						res, _ := ps[i].post(t, forms[i], account, "wrong password "+strconv.Itoa(i))
						statuses[i] = res.StatusCode
					})
				}
				close(start)
				wg.Wait()
				hashes := metric(t, s.AuthOps, "fris_password_hashes_total") - before
				failed := 0
				for _, st := range statuses {
					if st == 401 {
						failed++
					} else if st != 429 {
						t.Fatalf("a concurrent guess = %d, want 401 or 429", st)
					}
				}
				if hashes > 10 || failed > 10 || hashes < 1 {
					t.Fatalf("%s: 50 concurrent guesses from 50 addresses: %v hashes, %d checked; want 1 to 10", account, hashes, failed)
				}
			}
		})
	}
}

// TestAttackRegisterEnumeration: POST /oauth2/register's 409 tells which
// emails have accounts; one address gets five answers, then 429; another
// address is not affected.
func TestAttackRegisterEnumeration(t *testing.T) {
	t.Parallel()
	s := attackStack(t, Options{})
	seedAuth(t, s)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	register := func(p peer, email string) (*http.Response, []byte) {
		return p.do(t, http.MethodPost, oauth+"/register", fmt.Sprintf(`{"email":%q,"name":"N","base64EncodedPublicKey":%q}`, email, spkiB64(t, &k.PublicKey)),
			"Content-Type", "application/json")
	}
	enum := from127(t, s, "127.0.1.1", nil)
	for i := range 5 {
		if res, b := register(enum, demoEmail); res.StatusCode != 409 {
			t.Fatalf("enumeration request %d = %d %s, want 409", i+1, res.StatusCode, b)
		}
	}
	for range 3 {
		res, b := register(enum, demoEmail)
		throttled(t, "a sixth registration from one address", res, b)
	}
	res, b := register(enum, "new-from-the-same@fris.test")
	throttled(t, "a new email from the enumerating address", res, b)
	if res, b := register(from127(t, s, "127.0.2.1", nil), "newcomer@fris.test"); res.StatusCode != 200 {
		t.Fatalf("registering from another address = %d %s", res.StatusCode, b)
	}
}

// TestAttackIntrospectConcurrent: a resource server introspecting with the
// right client secret, 64 requests at once, in rounds longer than its
// cached check lives, with the default limits, is never refused: a
// verified secret is not charged, and concurrent checks share one hash.
func TestAttackIntrospectConcurrent(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{AuthArgs: []string{"-secret-cache-ttl", "1ms"}})
	seedAuth(t, s)
	rs := from127(t, s, "127.0.2.1", nil)
	res, b := rs.clientCredentials(t, demoSecret)
	if res.StatusCode != 200 {
		t.Fatalf("token = %d %s", res.StatusCode, b)
	}
	access := field(t, JSON(t, b), "access_token").(string)
	basicAuth := "Basic " + basicEncode(demoClient, demoSecret)
	var mu sync.Mutex
	counts := map[int]int{}
	for range 5 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 64 {
			wg.Go(func() {
				<-start
				res, _ := rs.do(t, http.MethodPost, oauth+"/introspect", url.Values{"token": {access}}.Encode(),
					"Content-Type", "application/x-www-form-urlencoded", "Authorization", basicAuth)
				mu.Lock()
				counts[res.StatusCode]++
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		time.Sleep(5 * time.Millisecond) // the cached check expires between rounds
	}
	if counts[200] != 5*64 {
		t.Fatalf("320 introspections with the right secret: %v, want all 200", counts)
	}
}

func basicEncode(user, pass string) string {
	return strings.TrimPrefix(basic(url.QueryEscape(user), url.QueryEscape(pass)), "Basic ")
}

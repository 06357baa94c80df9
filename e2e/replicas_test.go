package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fris.dev/pkg/rpcclient"
	uploadv1 "fris.dev/proto/upload/v1"
)

// replica is one process of a service; restart starts it again on the
// same gRPC address.
type replica struct {
	bin       string
	args      []string
	addr, ops string
	p         *proc
}

// start runs the replica: on addresses the kernel picks the first time,
// on the same ones again after (the gateway's list and -jwks-url name them).
func (r *replica) start(t *testing.T) {
	t.Helper()
	addr, ops := r.addr, r.ops
	if addr == "" {
		addr, ops = "127.0.0.1:0", "127.0.0.1:0"
	}
	r.p = start(t, r.bin, append([]string{"serve", "-grpc-addr", addr, "-ops-addr", ops, "-log-level", "info"}, r.args...)...)
	r.addr, r.ops = r.p.addrs["grpc"], r.p.addrs["ops"]
}

// tally counts the load's answers; a 5xx other than 503 is a failure.
type tally struct {
	mu       sync.Mutex
	ok, s503 int
	bad      []string
	first503 time.Time
	last503  time.Time
	// sent503 is when the latest-sent request that got a 503 was sent:
	// one sent during a failover may be answered long after it.
	sent503   time.Time
	transport int
	// inflight holds the send times of the requests not answered yet.
	inflight map[time.Time]int
}

// send notes a request sent now; its answer goes to note with the time.
func (c *tally) send() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.inflight == nil {
		c.inflight = map[time.Time]int{}
	}
	c.inflight[now]++
	return now
}

// oldestInFlight is when the oldest request not answered yet was sent
// (zero when none is in flight).
func (c *tally) oldestInFlight() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old time.Time
	for t := range c.inflight {
		if old.IsZero() || t.Before(old) {
			old = t
		}
	}
	return old
}

// note counts the answer to a request sent at sent (send).
func (c *tally) note(what string, sent time.Time, status int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight[sent]--; c.inflight[sent] <= 0 {
		delete(c.inflight, sent)
	}
	switch {
	case err != nil:
		c.transport++
	case status == 503:
		c.s503++
		if c.first503.IsZero() {
			c.first503 = time.Now()
		}
		c.last503 = time.Now()
		if sent.After(c.sent503) {
			c.sent503 = sent
		}
	case status >= 500:
		c.bad = append(c.bad, fmt.Sprintf("%s: %d", what, status))
	default:
		c.ok++
	}
}

// window is the span of 503s since the last reset.
func (c *tally) window() (time.Duration, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first503.IsZero() {
		return 0, 0
	}
	return c.last503.Sub(c.first503), c.s503
}

func (c *tally) reset503() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.first503, c.last503, c.sent503 = time.Time{}, time.Time{}, time.Time{}
}

// TestReplicasAndFailover runs two replicas of every service on a Redis
// Cluster behind one gateway under a bounded mixed load, kills one replica
// of each, restarts it, restarts all one by one, and kills a Redis master:
// no acknowledged upload may be lost or changed, no refresh token may be
// spent twice, and the only 5xx allowed is 503 while something is down.
func TestReplicasAndFailover(t *testing.T) {
	// Not parallel: it restarts its replicas on the addresses they had, which a parallel test's listener could take while they are down.
	began := time.Now()
	url := ownCluster(t)
	store := []string{"-store", "redis", "-redis-url", url, "-redis-prefix", "rep"}
	secret := NewKeySecret(t)
	var mdrs, auths, uploads, brokers []*replica
	mk := func(bin string, extra ...string) []*replica {
		var rs []*replica
		for range 2 {
			r := &replica{bin: bin, args: append(append([]string{}, store...), extra...)}
			r.start(t)
			rs = append(rs, r)
		}
		return rs
	}
	addrs := func(rs []*replica) string {
		var a []string
		for _, r := range rs {
			a = append(a, r.addr)
		}
		return strings.Join(a, ",")
	}
	mdrs = mk("mdr")
	auths = mk("auth", "-issuer", Issuer, "-argon2-memory-kib", "1024", "-key-secrets", secret)
	uploads = mk("upload", "-argon2-memory-kib", "1024", "-validation", "off")
	brokers = mk("broker", "-name", brokerName, "-registration", "approval")
	s := &Stack{client: &http.Client{Timeout: 30 * time.Second, Transport: checked(t, nil, nil)},
		MDRAddr: mdrs[0].addr, AuthAddr: auths[0].addr, AuthOps: auths[0].ops, UploadAddr: uploads[0].addr, BrokerAddr: brokers[0].addr}
	s.MDRCLI(t, 0, "import", filepath.Join(repoRoot, "services/mdr/demo/mdr16.json"))
	s.Gateway = start(t, "gateway", "-addr", "127.0.0.1:0", "-ops-addr", "127.0.0.1:0", "-mdr-addr", addrs(mdrs), "-auth-addr", addrs(auths),
		"-upload-addr", addrs(uploads), "-broker-addr", addrs(brokers), "-jwks-url", "http://"+s.AuthOps+"/jwks", "-issuer", Issuer)
	s.URL = "http://" + s.Gateway.addrs["http"]
	s.client.Transport.(*apiCheck).gateway = s.Gateway.addrs["http"]
	s.waitFor(t, "/health/groups", 200, 15*time.Second)
	s.registerSites(t)
	seedSites(t, s)
	seedAuth(t, s)
	// Two banks poll one released inquiry and reply to it, each reply a
	// higher count than its last.
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	banks := []bank{registerBank(t, s, "bank@charite.example"), registerBank(t, s, "bank@dresden.example")}
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", banks[0].email)
	s.BrokerCLI(t, 0, "approve-bank", "-site", "dresden", banks[1].email)
	inquiry := researcherDo(t, s, http.MethodPost, "/inquiries", access, inquiryJSON("Replicas", []string{"charite", "dresden"}, ""), 200)["id"].(string)
	researcherDo(t, s, http.MethodPost, "/inquiries/"+inquiry+"/release", access, "", 200)

	var load tally
	var acked sync.Map // upload id -> document
	var refreshes, reusesRefused atomic.Int64
	var reuseAccepted atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path, body string, headers ...string) (int, []byte, error) {
		req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
	paced := func(every time.Duration, f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(every)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				f(i)
			}
		}()
	}
	// Uploads: two connectors, 100 a second in all.
	for w := range 2 {
		paced(20*time.Millisecond, func(i int) {
			id := fmt.Sprintf("R-%d-%05d", w, i)
			doc := patientDoc(id, "Patient", strings.Repeat(`<c:Case id="pad"/>`, i%20))
			sent := load.send()
			st, _, err := do(http.MethodPut, charite.spec()+"/pats/"+id, doc, charite.xml()...)
			load.note("upload", sent, st, err)
			if err == nil && (st == 200 || st == 201) {
				acked.Store(id, doc)
			}
		})
	}
	// Bank polls and replies, 20 a second each bank. A reply is
	// acknowledged by 200; one that failed may still have been stored.
	lastAcked := make([]atomic.Int64, len(banks))
	lastSent := make([]atomic.Int64, len(banks))
	for b, bk := range banks {
		paced(50*time.Millisecond, func(i int) {
			if i%2 == 0 {
				sent := load.send()
				st, _, err := do(http.MethodGet, sb+"/inquiries", "", bk.auth()...)
				load.note("bank poll", sent, st, err)
				return
			}
			lastSent[b].Store(int64(i))
			sent := load.send()
			st, _, err := do(http.MethodPut, sb+"/inquiries/"+inquiry+"/replies/"+bk.email, fmt.Sprint(i), append(bk.auth(), "Content-Type", "text/plain")...)
			load.note("bank reply", sent, st, err)
			if err == nil && st == 200 {
				lastAcked[b].Store(int64(i))
			}
		})
	}
	// Registry reads, 50 a second.
	paced(20*time.Millisecond, func(int) {
		sent := load.send()
		st, _, err := do(http.MethodGet, mdr+"/namespaces", "")
		load.note("registry", sent, st, err)
	})
	// Token refreshes: each refresh token is spent once; every tenth
	// spent one is tried again (the gateway's round robin sends it to the
	// other replica) and must be refused, which ends the chain, so the
	// worker signs in again.
	signIn := func() string {
		for {
			select {
			case <-stop:
				return ""
			default:
			}
			st, body, err := func() (int, []byte, error) {
				code := loginQuiet(s)
				if code == "" {
					return 0, nil, fmt.Errorf("no code")
				}
				return do(http.MethodPost, oauth+"/token", codeRequest(code), "Content-Type", "application/json")
			}()
			if err == nil && st == 200 {
				return refreshOf(body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := signIn()
		for i := 0; r != ""; i++ {
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
			sent := load.send()
			st, body, err := do(http.MethodPost, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, r), "Content-Type", "application/json")
			load.note("refresh", sent, st, err)
			if err != nil || st != 200 {
				// Spent or not, the outcome is unknown: start a new chain.
				r = signIn()
				continue
			}
			refreshes.Add(1)
			spent := r
			r = refreshOf(body)
			if i%10 == 9 {
				st, _, err := do(http.MethodPost, oauth+"/token", fmt.Sprintf(`{"refresh_token":%q}`, spent), "Content-Type", "application/json")
				if err == nil && st == 200 {
					reuseAccepted.Add(1)
				} else if err == nil && st < 500 {
					reusesRefused.Add(1)
				}
				r = signIn()
			}
		}
	}()

	time.Sleep(2 * time.Second)
	// One replica of each service dies hard and comes back.
	for _, rs := range [][]*replica{mdrs, auths, uploads, brokers} {
		_ = rs[0].p.cmd.Process.Kill()
		<-rs[0].p.done
		rs[0].p.done <- nil
	}
	time.Sleep(time.Second)
	for _, rs := range [][]*replica{mdrs, auths, uploads, brokers} {
		rs[0].start(t)
	}
	w, n := load.window()
	t.Logf("SIGKILL of one replica each: %d 503s over %v", n, w)
	time.Sleep(time.Second)
	// A rolling restart of all: each stops gracefully and is started again
	// before the next one goes.
	for _, rs := range [][]*replica{mdrs, auths, uploads, brokers} {
		for _, r := range rs {
			if err := r.p.stop(t); err != nil {
				t.Errorf("%s %s: graceful stop: %v", r.bin, r.addr, err)
			}
			r.start(t)
		}
	}
	w, n = load.window()
	t.Logf("after the rolling restart: %d 503s in all, over %v", n, w)
	time.Sleep(time.Second)

	// A Redis master dies; the cluster promotes its replica.
	load.reset503()
	killedAt := time.Now() // SHUTDOWN stops writes while the replica catches up
	killed := killMaster(t, url)
	waitClusterOK(t, url, killed, 20*time.Second)
	t.Logf("cluster ok again %v after the master on %s died", time.Since(killedAt).Round(time.Millisecond), killed)
	// The services recover by themselves: wait until no request sent in
	// the last two seconds got a 503 and every request sent before them
	// has its answer (30 s at most, a hang guard; how long the failover's
	// 503s last is logged). Requests are judged by when they were sent:
	// one sent during the failover may be answered 503 long after it, when
	// its call's deadline ends.
	clean := time.Now().Add(30 * time.Second)
	for time.Now().Before(clean) {
		load.mu.Lock()
		sent := load.sent503
		load.mu.Unlock()
		old := load.oldestInFlight()
		if time.Since(sent) > 2*time.Second && (old.IsZero() || time.Since(old) < 2*time.Second) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopped := time.Now()
	close(stop)
	wg.Wait()
	load.mu.Lock()
	last, sent := load.last503, load.sent503
	load.mu.Unlock()
	fw, fn := load.window()
	t.Logf("failover: %d 503s in the whole run; the failover's 503 window %v, the last %v after the kill", fn, fw.Round(time.Millisecond), last.Sub(killedAt).Round(time.Millisecond))
	if stopped.Sub(sent) < 2*time.Second {
		t.Errorf("still 503s at the end (the last to a request sent %v before the load stopped): the services did not recover from the failover", stopped.Sub(sent).Round(time.Millisecond))
	}

	load.mu.Lock()
	t.Logf("load: %d answered, %d 503s, %d transport errors, %d refreshes, %d reuses refused", load.ok, load.s503, load.transport, refreshes.Load(), reusesRefused.Load())
	if len(load.bad) > 0 {
		t.Errorf("5xx other than 503: %v", load.bad)
	}
	load.mu.Unlock()
	if reuseAccepted.Load() > 0 {
		t.Errorf("%d spent refresh tokens were accepted again", reuseAccepted.Load())
	}
	if refreshes.Load() < 20 || reusesRefused.Load() < 2 {
		t.Errorf("too little refresh load to prove anything: %d refreshes, %d reuses", refreshes.Load(), reusesRefused.Load())
	}

	// Each bank's stored reply is its last acknowledged one or a later one
	// that was sent.
	replies := researcherDo(t, s, http.MethodGet, "/inquiries/"+inquiry+"/replies", access, "", 200)
	for b, bk := range banks {
		got := int64(-1)
		for _, r := range replies["replies"].([]any) {
			m := r.(map[string]any)
			if m["bankEmail"] == bk.email || m["bank_email"] == bk.email {
				fmt.Sscan(m["body"].(string), &got)
			}
		}
		if got < lastAcked[b].Load() || got > lastSent[b].Load() || lastAcked[b].Load() < 20 {
			t.Errorf("%s: stored reply %d, last acknowledged %d, last sent %d", bk.email, got, lastAcked[b].Load(), lastSent[b].Load())
		}
	}

	// Every acknowledged upload is there, byte for byte, on either replica.
	cc, err := rpcclient.Dial(addrs(uploads), dialAs(t, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	admin := uploadv1.NewUploadAdminClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	teiler := &uploadv1.Teiler{SiteId: charite.id, TeilerId: charite.teiler}
	count, lost := 0, 0
	acked.Range(func(k, v any) bool {
		count++
		res, err := admin.GetPatient(ctx, &uploadv1.GetPatientRequest{Teiler: teiler, PatientId: k.(string)})
		if err != nil || string(res.GetDocument()) != v.(string) {
			lost++
			t.Errorf("acknowledged upload %s lost or changed: %v", k, err)
			return lost < 5
		}
		return true
	})
	if count < 200 {
		t.Errorf("only %d uploads acknowledged", count)
	}
	t.Logf("%d acknowledged uploads read back; the whole test took %v", count, time.Since(began).Round(time.Millisecond))
}

// loginQuiet is login without a testing.T (it runs in a load goroutine):
// "" when the sign-in did not go through.
func loginQuiet(s *Stack) string {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(s.URL + oauth + "/authorize?client_id=" + demoClient)
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(b), -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	form.Set("email", demoEmail)
	form.Set("password", demoPass)
	req, _ := http.NewRequest(http.MethodPost, s.URL+oauth+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err = c.Do(req)
	if err != nil {
		return ""
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		return ""
	}
	return loc.Query().Get("code")
}

func refreshOf(body []byte) string {
	var v struct {
		Refresh string `json:"refresh_token"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Refresh
}

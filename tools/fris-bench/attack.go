package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// AttackReport is the attack suite: a legitimate user's sign-ins and a
// connector's uploads, first without attack, then while each attack of
// issue "Stay up under attack" runs from other loopback addresses
// (docs/security.md, "Threat model").
type AttackReport struct {
	DurationS float64      `json:"duration_s"`
	Quiet     AttackRun    `json:"quiet"`
	Runs      []*AttackRun `json:"runs"`
	MaxRatio  float64      `json:"max_p99_ratio"`
	Met       bool         `json:"met"`
}

// AttackRun is one measured interval: the legitimate traffic's outcome
// and what the attack sent.
type AttackRun struct {
	Attack string `json:"attack"`
	What   string `json:"what"`
	SignIn Legit  `json:"sign_in"`
	Upload Legit  `json:"upload"`
	// Sent and Answers are the attack's requests (or connections) and
	// their answers by status ("error": no HTTP answer).
	Sent    int64            `json:"attack_sent"`
	Answers map[string]int64 `json:"attack_answers"`
	// Ratios of the p99s to the quiet run's.
	SignInRatio float64 `json:"sign_in_p99_ratio"`
	UploadRatio float64 `json:"upload_p99_ratio"`
	Met         bool    `json:"met"`
}

// Legit is one kind of legitimate request during a run.
type Legit struct {
	OK       int      `json:"ok"`
	Failed   int      `json:"failed"`
	Latency  Latency  `json:"latency"`
	Failures []string `json:"failure_samples,omitempty"`
}

func (l Legit) success() float64 {
	if l.OK+l.Failed == 0 {
		return 0
	}
	return float64(l.OK) / float64(l.OK+l.Failed)
}

// attack is one lever: it runs from its own loopback addresses until ctx
// ends, counting what it sent.
type attack struct {
	name, what string
	run        func(ctx context.Context, t *tally) error
}

// tally counts an attack's requests and answers.
type tally struct {
	sent    atomic.Int64
	mu      sync.Mutex
	answers map[string]int64
}

func (t *tally) answer(status int, err error) {
	t.sent.Add(1)
	k := strconv.Itoa(status)
	if err != nil {
		k = "error"
	}
	t.mu.Lock()
	t.answers[k]++
	t.mu.Unlock()
}

// attackSource is the n-th attacker address of an attack: 127.0.<net>.<n>,
// never the legitimate clients' 127.0.0.1.
func attackSource(net, n int) string { return fmt.Sprintf("127.0.%d.%d", net, 1+n%250) }

// paced runs send from workers goroutines, at most rate times a second in
// all, until ctx ends; each call gets its sequence number.
func paced(ctx context.Context, workers int, rate float64, send func(ctx context.Context, i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				send(ctx, i)
			}
		})
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer func() {
		tick.Stop()
		close(jobs)
		wg.Wait()
	}()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			return
		default:
			// Every worker is busy: the attack is as fast as the server
			// lets it be, the tick is dropped.
		}
	}
}

// clients are one HTTP client per attacker address.
func clients(n, net int) ([]*http.Client, error) {
	out := make([]*http.Client, n)
	for i := range out {
		c, err := guessClient(attackSource(net, i))
		if err != nil {
			return nil, err
		}
		c.Timeout = 10 * time.Second
		out[i] = c
	}
	return out, nil
}

func closeAll(cs []*http.Client) {
	for _, c := range cs {
		c.CloseIdleConnections()
	}
}

// send makes one request and drains its answer: its status, or an error
// when there was no answer.
func send(ctx context.Context, c *http.Client, method, u string, body io.Reader, header http.Header) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	return res.StatusCode, nil
}

// attackNames are the attacks' names, in the order they run.
var attackNames = []string{"client-secret", "account", "site", "parallel", "register", "bodies", "slow", "sessions"}

// attacks are the levers, in the order they run.
func attacks(cfg config) ([]attack, error) {
	// The enumeration sends a well-formed registration: a real key, the
	// user's email, so the answer is the spec's 409.
	keys, err := generateKeys(1)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&keys[0].PublicKey)
	if err != nil {
		return nil, err
	}
	registration := fmt.Sprintf(`{"email":%q,"name":"x","description":"x","base64EncodedPublicKey":%q}`, cfg.creds.email, base64.StdEncoding.EncodeToString(der))
	rate := cfg.attackRate
	// tried runs an attack of single tries from addrs addresses of 127.0.<net>.x.
	tried := func(name, what string, net, addrs int, try func(ctx context.Context, c *http.Client, i int) (int, error)) attack {
		return attack{name: name, what: what, run: func(ctx context.Context, t *tally) error {
			cs, err := clients(addrs, net)
			if err != nil {
				return err
			}
			defer closeAll(cs)
			paced(ctx, addrs, rate, func(ctx context.Context, i int) {
				st, err := try(ctx, cs[i%len(cs)], i)
				if ctx.Err() == nil {
					t.answer(st, err)
				}
			})
			return nil
		}}
	}
	guessing := func(name, what string, net, addrs int, req func(i int) (string, string, io.Reader, http.Header)) attack {
		return tried(name, what, net, addrs, func(ctx context.Context, c *http.Client, i int) (int, error) {
			method, u, body, h := req(i)
			return send(ctx, c, method, u, body, h)
		})
	}
	// A password guess at the login form is made as a browser makes it:
	// the page (its CSRF cookie and field), then the form.
	password := func(prefix string) func(ctx context.Context, c *http.Client, i int) (int, error) {
		return func(ctx context.Context, c *http.Client, i int) (int, error) {
			return formSignIn(ctx, c, cfg.gateway, cfg.creds.clientID, cfg.creds.email, prefix+strconv.Itoa(i))
		}
	}
	tokenURL := cfg.gateway + authPrefix + "/token"
	site := uploadSites(cfg)[0]
	wrongBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.uploadUser+":wrong"))
	return []attack{
		guessing("client-secret", fmt.Sprintf("wrong secrets for the user's client at /token, %d/s from 8 addresses", int(rate)), 10, 8,
			func(i int) (string, string, io.Reader, http.Header) {
				f := url.Values{"grant_type": {"client_credentials"}, "client_id": {cfg.creds.clientID}, "client_secret": {"wrong " + strconv.Itoa(i)}}
				return http.MethodPost, tokenURL, strings.NewReader(f.Encode()), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
			}),
		tried("account", fmt.Sprintf("wrong passwords for the user's account at the login form, %d/s from 8 addresses", int(rate)), 11, 8, password("wrong ")),
		guessing("site", fmt.Sprintf("wrong Basic passwords for the connector's username, %d/s from 8 addresses", int(rate)), 12, 8,
			func(i int) (string, string, io.Reader, http.Header) {
				return http.MethodPut, site.base + "guess-" + strconv.Itoa(i), strings.NewReader("<x/>"),
					http.Header{"Authorization": {wrongBasic}, "Content-Type": {"application/xml"}}
			}),
		tried("parallel", fmt.Sprintf("wrong passwords for the user's account from 50 addresses at once, %d/s", int(rate)), 13, 50, password("parallel ")),
		guessing("register", fmt.Sprintf("registrations with the user's email (enumeration), %d/s from 4 addresses", int(rate)), 14, 4,
			func(i int) (string, string, io.Reader, http.Header) {
				return http.MethodPost, cfg.gateway + authPrefix + "/register", strings.NewReader(registration), http.Header{"Content-Type": {"application/json"}}
			}),
		{name: "bodies", what: fmt.Sprintf("anonymous %d MiB uploads, %d/s from 8 addresses, up to %d at once", cfg.attackBodyMiB, int(rate), cfg.attackBodies), run: func(ctx context.Context, t *tally) error {
			cs, err := clients(8, 15)
			if err != nil {
				return err
			}
			defer closeAll(cs)
			// Paced like the guessing attacks: a refused body ends at once,
			// so an unpaced loop on loopback is a flood of gigabytes a
			// second, which no server on the same two cores outlasts and
			// which a proxy in front must stop (docs/security.md).
			body := bytes.Repeat([]byte("<a/>"), cfg.attackBodyMiB<<20/4)
			paced(ctx, cfg.attackBodies, rate, func(ctx context.Context, i int) {
				st, err := send(ctx, cs[i%len(cs)], http.MethodPut, site.base+"anon-"+strconv.Itoa(i), bytes.NewReader(body),
					http.Header{"Content-Type": {"application/xml"}})
				if ctx.Err() == nil {
					t.answer(st, err)
				}
			})
			return nil
		}},
		{name: "slow", what: fmt.Sprintf("%d connections from one address trickling a body", cfg.attackSlowConns), run: func(ctx context.Context, t *tally) error {
			return slowConnections(ctx, cfg, t)
		}},
		guessing("sessions", fmt.Sprintf("cookie-less Explorer sign-in starts, %d/s from 8 addresses", int(rate)), 17, 8,
			func(int) (string, string, io.Reader, http.Header) {
				return http.MethodGet, cfg.gateway + "/explorer/login", nil, nil
			}),
	}, nil
}

// runAttack measures the legitimate traffic quiet, then under each attack
// (after -warmup of it), with a pause between attacks for the server to
// settle.
func runAttack(ctx context.Context, cfg config, stderr io.Writer) (*AttackReport, error) {
	rep := &AttackReport{DurationS: cfg.attackDuration.Seconds(), MaxRatio: cfg.attackMaxRatio}
	l, err := newLegitimate(cfg)
	if err != nil {
		return nil, err
	}
	defer l.close()
	// One sign-in and one upload before anything is measured: the device is
	// then known, as a returning user's is.
	if err := l.signIn(ctx); err != nil {
		return nil, fmt.Errorf("attack: the user's first sign-in: %w", err)
	}
	if err := l.uploadOne(ctx); err != nil {
		return nil, fmt.Errorf("attack: the connector's first upload: %w", err)
	}
	fmt.Fprintf(stderr, "fris-bench: attack: quiet for %s\n", cfg.attackDuration)
	rep.Quiet = AttackRun{Attack: "none", What: "no attack"}
	rep.Quiet.SignIn, rep.Quiet.Upload = l.measure(ctx, cfg.attackDuration)
	rep.Quiet.Met = rep.Quiet.SignIn.Failed == 0 && rep.Quiet.Upload.Failed == 0
	rep.Met = rep.Quiet.Met
	all, err := attacks(cfg)
	if err != nil {
		return nil, err
	}
	for _, a := range all {
		if len(cfg.attacks) > 0 && !cfg.attacks[a.name] {
			continue
		}
		run := &AttackRun{Attack: a.name, What: a.what}
		t := &tally{answers: map[string]int64{}}
		actx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.run(actx, t) }()
		fmt.Fprintf(stderr, "fris-bench: attack %s: %s; %s warm-up, then %s measured\n", a.name, a.what, cfg.warmup, cfg.attackDuration)
		sleep(ctx, cfg.warmup)
		run.SignIn, run.Upload = l.measure(ctx, cfg.attackDuration)
		stop()
		err := <-done
		run.Sent, run.Answers = t.sent.Load(), t.answers
		run.SignInRatio = ratio(run.SignIn.Latency.P99Ms, rep.Quiet.SignIn.Latency.P99Ms)
		run.UploadRatio = ratio(run.Upload.Latency.P99Ms, rep.Quiet.Upload.Latency.P99Ms)
		run.Met = err == nil && run.SignIn.Failed == 0 && run.Upload.Failed == 0 && run.SignIn.OK > 0 && run.Upload.OK > 0 &&
			run.SignInRatio <= cfg.attackMaxRatio && run.UploadRatio <= cfg.attackMaxRatio
		rep.Runs = append(rep.Runs, run)
		rep.Met = rep.Met && run.Met
		if err != nil {
			return rep, fmt.Errorf("attack %s: %w", a.name, err)
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		sleep(ctx, cfg.attackSettle)
	}
	if len(rep.Runs) == 0 {
		return rep, errors.New("attack: -attacks names no attack")
	}
	return rep, nil
}

func ratio(v, base float64) float64 {
	if base <= 0 {
		return 0
	}
	return v / base
}

func writeAttack(w io.Writer, a *AttackReport) {
	fmt.Fprintf(w, "Under attack (suite %s): a user signs in again and again (login page, form, code exchange; cookies kept) and a connector uploads new patients, both from 127.0.0.1, for %.0f s without attack and then during each attack, which comes from other loopback addresses.\n\n",
		suiteAttack, a.DurationS)
	fmt.Fprintln(w, "| attack | sign-ins ok | sign-in p99 | × quiet | uploads ok | upload p99 | × quiet | attack requests: answers | verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|---|")
	row := func(r *AttackRun, quiet bool) {
		x := func(v float64) string {
			if quiet {
				return "1"
			}
			return fmt.Sprintf("%.2f", v)
		}
		answers := "–"
		if !quiet {
			answers = fmt.Sprintf("%d: %s", r.Sent, answerCells(r.Answers))
		}
		fmt.Fprintf(w, "| %s | %d/%d | %s | %s | %d/%d | %s | %s | %s | %s |\n", r.What,
			r.SignIn.OK, r.SignIn.OK+r.SignIn.Failed, msCell(r.SignIn.Latency.P99Ms), x(r.SignInRatio),
			r.Upload.OK, r.Upload.OK+r.Upload.Failed, msCell(r.Upload.Latency.P99Ms), x(r.UploadRatio), answers, verdict(r.Met))
	}
	row(&a.Quiet, true)
	for _, r := range a.Runs {
		row(r, false)
	}
	for _, r := range append([]*AttackRun{&a.Quiet}, a.Runs...) {
		for _, f := range append(r.SignIn.Failures, r.Upload.Failures...) {
			fmt.Fprintf(w, "\n- %s: %s", r.Attack, f)
		}
	}
	fmt.Fprintf(w, "\nTarget: every legitimate request succeeds and each p99 is at most %.1f× the quiet run's: %s\n", a.MaxRatio, verdict(a.Met))
}

// answerCells lists answers by status, most frequent first.
func answerCells(m map[string]int64) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	if len(parts) == 0 {
		return "none answered"
	}
	return strings.Join(parts, ", ")
}

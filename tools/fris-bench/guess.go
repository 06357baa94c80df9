package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GuessReport is the guess suite: a real user's sign-ins at the login form,
// alone and while guessers hammer the same form from another address
// (docs/security.md, "Abuse limits").
type GuessReport struct {
	Guessers   int     `json:"guessers"`
	Source     string  `json:"guess_source"`
	Alone      Latency `json:"alone"`
	Guessing   Latency `json:"under_guessing"`
	Checked    int64   `json:"guesses_checked"` // answered 401: the password was hashed
	Refused    int64   `json:"guesses_refused"` // answered 429
	OtherGuess int64   `json:"guesses_other"`   // anything else (errors, timeouts)
	MaxP99Ms   float64 `json:"max_p99_ms"`
	Met        bool    `json:"met"`
}

// Latency summarizes one series of the real user's sign-ins.
type Latency struct {
	SignIns int     `json:"sign_ins"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	MaxMs   float64 `json:"max_ms"`
}

func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	at := func(q int) float64 { return ms(ds[(len(ds)*q+99)/100-1]) }
	return Latency{SignIns: len(ds), P50Ms: at(50), P99Ms: at(99), MaxMs: ms(ds[len(ds)-1])}
}

// formSignIn is one sign-in at the login form as a browser makes it: the
// page (for its CSRF cookie and field), then the form. It returns the
// form's status.
func formSignIn(ctx context.Context, hc *http.Client, base, clientID, email, password string) (int, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return 0, err
	}
	c := *hc
	c.Jar = jar
	page := base + authPrefix + "/authorize"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page+"?client_id="+url.QueryEscape(clientID), nil)
	if err != nil {
		return 0, err
	}
	body, res, err := do(&c, req)
	if err != nil {
		return 0, err
	}
	m := csrfField.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		return res.StatusCode, fmt.Errorf("login page: %s", res.Status)
	}
	form := url.Values{"client_id": {clientID}, "csrf_token": {string(m[1])}, "email": {email}, "password": {password}}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, page, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	_, res, err = do(&c, req)
	if err != nil {
		return 0, err
	}
	return res.StatusCode, nil
}

// guessClient connects from source (another loopback address), so the
// gateway sees the guessers at an address of their own.
func guessClient(source string) (*http.Client, error) {
	ip := net.ParseIP(source)
	if ip == nil {
		return nil, fmt.Errorf("-guess-source %q is not an IP address", source)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 1024},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// runGuess measures the real user's sign-ins for -guess-duration alone,
// then starts -guessers goroutines guessing passwords (of accounts that do
// not exist and of one that does, never the user's own, whose lock would
// stop the user too) from -guess-source, and after -warmup (their first
// wave) measures the user's sign-ins again for -guess-duration.
func runGuess(ctx context.Context, cfg config, stderr io.Writer) (*GuessReport, error) {
	rep := &GuessReport{Guessers: cfg.guessers, Source: cfg.guessSource, MaxP99Ms: ms(cfg.guessMaxP99)}
	user := newAuthClient(cfg.gateway)
	defer user.close()
	guess, err := guessClient(cfg.guessSource)
	if err != nil {
		return nil, err
	}
	defer guess.CloseIdleConnections()
	if st, err := formSignIn(ctx, guess, cfg.gateway, cfg.creds.clientID, "probe@fris.invalid", "x"); err != nil || st != http.StatusUnauthorized {
		return nil, fmt.Errorf("a wrong password from %s: %d, %v (want 401; on Linux every 127.0.0.0/8 address is local)", cfg.guessSource, st, err)
	}
	signIns := func(d time.Duration) ([]time.Duration, error) {
		var took []time.Duration
		end := time.Now().Add(d)
		for time.Now().Before(end) && ctx.Err() == nil {
			start := time.Now()
			st, err := formSignIn(ctx, user.hc, cfg.gateway, cfg.creds.clientID, cfg.creds.email, cfg.creds.password)
			if err != nil || st != http.StatusFound {
				return took, fmt.Errorf("the real user's sign-in %d: %d, %v (want 302)", len(took)+1, st, err)
			}
			took = append(took, time.Since(start))
		}
		return took, ctx.Err()
	}
	fmt.Fprintf(stderr, "fris-bench: guess: the user alone for %s\n", cfg.guessDuration)
	alone, err := signIns(cfg.guessDuration)
	rep.Alone = latency(alone)
	if err != nil {
		return rep, err
	}

	gctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var n atomic.Int64
	for g := range cfg.guessers {
		wg.Go(func() {
			for i := 0; gctx.Err() == nil; i++ {
				email := "victim@fris.invalid"
				if i%2 == 1 {
					email = "guess" + strconv.Itoa(g) + "-" + strconv.Itoa(i) + "@fris.invalid"
				}
				st, err := formSignIn(gctx, guess, cfg.gateway, cfg.creds.clientID, email, "guess "+strconv.FormatInt(n.Add(1), 10))
				switch {
				case errors.Is(err, context.Canceled) || gctx.Err() != nil:
				case st == http.StatusUnauthorized:
					atomic.AddInt64(&rep.Checked, 1)
				case st == http.StatusTooManyRequests:
					atomic.AddInt64(&rep.Refused, 1)
				default:
					atomic.AddInt64(&rep.OtherGuess, 1)
				}
			}
		})
	}
	fmt.Fprintf(stderr, "fris-bench: guess: %d guessers from %s, %s warm-up, then the user for %s\n", cfg.guessers, cfg.guessSource, cfg.warmup, cfg.guessDuration)
	select {
	case <-time.After(cfg.warmup):
	case <-ctx.Done():
	}
	under, err := signIns(cfg.guessDuration)
	stop()
	wg.Wait()
	rep.Guessing = latency(under)
	rep.Met = err == nil && rep.Guessing.SignIns > 0 && rep.Guessing.P99Ms < rep.MaxP99Ms
	return rep, err
}

func writeGuess(w io.Writer, g *GuessReport) {
	fmt.Fprintf(w, "Login under guessing (suite %s): a real user signs in at the login form (page + form, one after another), alone and while %d guessers send wrong passwords to the same form from %s.\n\n",
		suiteGuess, g.Guessers, g.Source)
	fmt.Fprintln(w, "| the real user's sign-ins | count | p50 | p99 | max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range []struct {
		name string
		l    Latency
	}{{"alone", g.Alone}, {fmt.Sprintf("under %d guessers", g.Guessers), g.Guessing}} {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", r.name, r.l.SignIns, msCell(r.l.P50Ms), msCell(r.l.P99Ms), msCell(r.l.MaxMs))
	}
	fmt.Fprintf(w, "\nGuesses: %d checked (401), %d refused by the abuse limits (429), %d other.\n", g.Checked, g.Refused, g.OtherGuess)
	fmt.Fprintf(w, "Target: the real user's p99 under guessing below %s: %s\n", msCell(g.MaxP99Ms), verdict(g.Met))
}

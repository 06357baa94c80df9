package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAttackSignedInBehindOneAddress: researchers behind one address (a
// hospital's NAT) are not strangers. With -max-conns-per-addr and
// -max-inflight-per-addr at 8, two signed-in researchers open 12 results
// streams each from one loopback address, 24 in all, three times the
// address's caps: every one is served, none is refused, and each gets
// its inquiry's results as a bank replies. A stranger at that address
// still holds no more than 8 connections: of 10 more it opens, 2 are
// closed at once, while the 24 streams go on.
func TestAttackSignedInBehindOneAddress(t *testing.T) {
	t.Parallel()
	const perUser = 12
	s := explorerStack(t, Options{
		BrokerArgs: []string{"-registration", "approval", "-watch-interval", "1s"},
		// A long header timeout: a stranger's idle connection is closed by
		// the cap here, never by the timeout meanwhile.
		GatewayArgs: []string{"-max-conns-per-addr", "8", "-max-inflight-per-addr", "8", "-read-header-timeout", "1m"},
	})
	s.AuthCLI(t, 0, "set-scopes", "-confirm", "-scopes", "broker:researcher", demoEmail)
	s.AuthCLI(t, 0, "create-user", "-email", "eve@fris.test", "-password", "another password", "-name", "Eve Researcher", "-email-verified", "-scopes", "broker:researcher")
	charite := registerBank(t, s, "bank@charite.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", charite.email)
	dresden := registerBank(t, s, "bank@dresden.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "dresden", dresden.email)
	ada, eve := signInHTTP(t, s), signInHTTPAs(t, s, "eve@fris.test", "another password", "Eve Researcher")
	adaInquiry, eveInquiry := releaseInquiryHTTP(t, s, ada, "NAT Ada"), releaseInquiryHTTP(t, s, eve, "NAT Eve")

	// A hang guard only.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	nat := src(42, 1)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: nat}, Timeout: 10 * time.Second}
	tr := &http.Transport{Proxy: nil, DialContext: d.DialContext}
	defer tr.CloseIdleConnections()
	var streams []*bufio.Reader
	for i := range 2 * perUser {
		c, id := ada, adaInquiry
		if i%2 == 1 {
			c, id = eve, eveInquiry
		}
		streams = append(streams, openStreamVia(ctx, t, s, &http.Client{Jar: c.Jar, Transport: tr}, id, i))
	}
	if n := gatewayGauge(t, s, "fris_explorer_results_streams"); n != 2*perUser {
		t.Fatalf("%v results streams open, want %d", n, 2*perUser)
	}

	// A stranger at the same address: 10 idle connections, of which the
	// gateway keeps 8.
	for range 10 {
		c, err := dialFrom(s, nat)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for gatewayGauge(t, s, "fris_gateway_conns_refused_total") < 2 {
		if ctx.Err() != nil {
			t.Fatal("the stranger's connections beyond 8 were not refused")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := gatewayGauge(t, s, "fris_gateway_conns_refused_total"); n != 2 {
		t.Fatalf("%v connections refused, want the stranger's 2", n)
	}

	// The streams go on: each gets its inquiry's results.
	reply(t, s, adaInquiry, charite, "10")
	reply(t, s, eveInquiry, charite, "20")
	for i, r := range streams {
		untilTotal(t, r, map[int]string{0: "10", 1: "20"}[i%2], i)
	}
}

// openStreamVia is openStream with client c (its cookies, its transport):
// the inquiry's results stream, read to its first results.
func openStreamVia(ctx context.Context, t *testing.T, s *Stack, c *http.Client, id string, tab int) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/explorer/inquiries/"+id+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("stream %d: %v", tab, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		t.Fatalf("stream %d: %d %s", tab, res.StatusCode, b)
	}
	r := bufio.NewReader(res.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream %d ended before its first results: %v", tab, err)
		}
		if strings.HasPrefix(line, "event: results") {
			return r
		}
	}
}

// TestAttackThousandSignedInStreams: with the gateway's documented
// defaults (-max-conns-per-addr and -max-inflight-per-addr 128,
// -max-conns-per-subject and -max-inflight-per-subject 32, -max-conns
// 4096), 1,000 results streams of signed-in researchers behind one
// address (a hospital's NAT) are held at once: 40 researchers with 25
// tabs each, every stream opened from one loopback address, each served
// (200, text/event-stream, its first results) and each given its
// inquiry's total when the bank replies. A stranger at that address is
// still a stranger: of 136 idle connections it opens, the 8 past the
// address's 128 are closed at once. (Before the per-subject budgets, the
// address's 128 refused every stream past the 128th.)
//
// Twice: with the streams of one inquiry sharing a broker watch (the
// default: 40 watches), and with a watch each, the 1,000 calls on the
// gateway's connection to the broker that 1,000 researchers with an
// inquiry each hold. (At the services' -max-streams of 1,000, those left
// the gateway no call to the broker: the bank's reply waited out its
// deadline.)
func TestAttackThousandSignedInStreams(t *testing.T) {
	t.Parallel()
	// The test holds 2,000 streams and the strangers' connections (the
	// gateways, processes of their own, raise their own limit).
	raiseNoFile(t, 4096)
	t.Run("shared watches", func(t *testing.T) {
		t.Parallel()
		thousandStreams(t, 40)
	})
	t.Run("a watch each", func(t *testing.T) {
		t.Parallel()
		thousandStreams(t, 1000, "-explorer-share-streams=false")
	})
}

// thousandStreams is TestAttackThousandSignedInStreams on a stack whose
// gateway has gatewayArgs, where the streams hold watches broker watches.
func thousandStreams(t *testing.T, watches int, gatewayArgs ...string) {
	const (
		researchers, tabs = 40, 25
		streams           = researchers * tabs
		// addrCap is -max-conns-per-addr's default, which this stack keeps.
		addrCap  = 128
		stranger = addrCap + 8
	)
	start := time.Now()
	s := explorerStack(t, Options{
		BrokerArgs: []string{"-registration", "approval"},
		// A long header timeout: the stranger's idle connections are
		// closed by the cap here, never by the timeout meanwhile. No cap
		// is set: the gateway's are its defaults.
		GatewayArgs: append([]string{"-read-header-timeout", "1m"}, gatewayArgs...),
	})
	charite := registerBank(t, s, "bank@charite.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", charite.email)
	type researcher struct {
		jar            http.CookieJar
		inquiry, total string
	}
	rs := make([]researcher, researchers)
	for i := range rs {
		email, name := fmt.Sprintf("nat%02d@fris.test", i), fmt.Sprintf("NAT Researcher %02d", i)
		pass := fmt.Sprintf("behind one NAT, researcher %02d", i)
		s.AuthCLI(t, 0, "create-user", "-email", email, "-password", pass, "-name", name, "-email-verified", "-scopes", "broker:researcher")
		c := signInHTTPAs(t, s, email, pass, name)
		rs[i] = researcher{jar: c.Jar, inquiry: releaseInquiryHTTP(t, s, c, name), total: strconv.Itoa(100 + i)}
	}
	t.Logf("stack and %d researchers ready in %v", researchers, time.Since(start).Round(time.Millisecond))

	// A hang guard only.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	nat := src(43, 1)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: nat}, Timeout: 30 * time.Second}
	tr := &http.Transport{Proxy: nil, DialContext: d.DialContext}
	defer tr.CloseIdleConnections()
	// Stream i is researcher i%40's, so every researcher's tabs open
	// among everyone else's; 50 at a time.
	opened := time.Now()
	tabsOf := make([]*sseStream, streams)
	defer func() {
		for _, st := range tabsOf {
			if st != nil {
				st.body.Close()
			}
		}
	}()
	var (
		mu       sync.Mutex
		failures []string
	)
	pool(50, streams, func(i int) {
		r := rs[i%researchers]
		st, err := openSSE(ctx, &http.Client{Jar: r.jar, Transport: tr}, s.URL+"/explorer/inquiries/"+r.inquiry+"/events")
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failures = append(failures, fmt.Sprintf("stream %d (researcher %d): %v", i, i%researchers, err))
			return
		}
		tabsOf[i] = st
	})
	if len(failures) > 0 {
		t.Fatalf("%d of %d streams not served; the first: %s", len(failures), streams, strings.Join(failures[:min(5, len(failures))], "; "))
	}
	t.Logf("%d streams open in %v", streams, time.Since(opened).Round(time.Millisecond))
	if n := gatewayGauge(t, s, "fris_explorer_results_streams"); n != streams {
		t.Fatalf("%v results streams open, want %d", n, streams)
	}
	if n := gatewayGauge(t, s, "fris_explorer_results_watches"); n != float64(watches) {
		t.Fatalf("the streams hold %v broker watches, want %d", n, watches)
	}
	if n := gatewayGauge(t, s, "fris_gateway_conns_refused_total"); n != 0 {
		t.Fatalf("%v connections refused while the streams opened, want none", n)
	}

	// A stranger at the same address: idle connections, of which the
	// gateway keeps the address's 128, the streams' connections being
	// their researchers'.
	for range stranger {
		c, err := dialFrom(s, nat)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for gatewayGauge(t, s, "fris_gateway_conns_refused_total") < stranger-addrCap {
		if ctx.Err() != nil {
			t.Fatalf("the stranger's connections beyond %d were not refused", addrCap)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := gatewayGauge(t, s, "fris_gateway_conns_refused_total"); n != stranger-addrCap {
		t.Fatalf("%v connections refused, want the stranger's %d", n, stranger-addrCap)
	}

	// The streams go on: every one gets its inquiry's total.
	for _, r := range rs {
		reply(t, s, r.inquiry, charite, r.total)
	}
	for i, st := range tabsOf {
		untilTotal(t, st.r, rs[i%researchers].total, i)
	}
	if n := gatewayGauge(t, s, "fris_explorer_results_streams"); n != streams {
		t.Fatalf("%v results streams open after the replies, want %d", n, streams)
	}
}

// sseStream is an open results stream, read past its first results.
type sseStream struct {
	body io.Closer
	r    *bufio.Reader
}

// openSSE opens a results stream with c and reads it to its first
// results; unlike openStreamVia it reports instead of failing the test,
// for use off the test's goroutine.
func openSSE(ctx context.Context, c *http.Client, url string) (*sseStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		res.Body.Close()
		return nil, fmt.Errorf("%d %s: %s", res.StatusCode, ct, b)
	}
	r := bufio.NewReader(res.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			res.Body.Close()
			return nil, fmt.Errorf("ended before its first results: %w", err)
		}
		if strings.HasPrefix(line, "event: results") {
			return &sseStream{body: res.Body, r: r}, nil
		}
	}
}

// pool runs f(0) to f(n-1) on workers goroutines and waits for them all.
func pool(workers, n int, f func(int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f(i)
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

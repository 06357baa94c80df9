package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
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

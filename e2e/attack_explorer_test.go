package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"html"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// explorerAttackClient is a cookie-less client whose connections come
// from ip, a loopback address of its own (all of 127.0.0.0/8 is local on
// Linux), and that follows no redirect: the attacker only asks the
// Explorer.
func explorerAttackClient(ip net.IP) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	return &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// gatewayGauge reads a gauge without labels from the gateway's /metrics
// (on its operations port).
func gatewayGauge(t *testing.T, s *Stack, name string) float64 {
	t.Helper()
	res, err := http.Get("http://" + s.GatewayOps + "/metrics")
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
	t.Fatalf("no %s on the gateway's /metrics", name)
	return 0
}

// TestAttackExplorerSessions: a user's sign-in in progress survives
// 10,000 anonymous visits to the Explorer (half of them starting sign-ins
// of their own) from 250 loopback addresses, with the session cap at
// 1,000; the gateway holds no session for any of them.
func TestAttackExplorerSessions(t *testing.T) {
	t.Parallel()
	s := explorerStack(t, Options{GatewayArgs: []string{"-explorer-sessions", "1000"}})

	// The user begins signing in: the Explorer sends them to the login
	// page, which they read (and then take their time).
	jar, _ := cookiejar.New(nil)
	user := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := user.Get(s.URL + "/explorer/login?return=" + url.QueryEscape("/explorer/namespaces/mdr16"))
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	if res.StatusCode != 200 || res.Request.URL.Path != "/oauth2/authorize" {
		t.Fatalf("sign-in start: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	form := url.Values{"email": {demoEmail}, "password": {demoPass}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if n := gatewayGauge(t, s, "fris_explorer_sessions"); n != 0 {
		t.Fatalf("%v sessions held for a sign-in in progress, want 0", n)
	}

	// The attack: 10,000 cookie-less visits, bounded in count, 16 at a
	// time, from 127.0.1.1 to 127.0.1.250.
	const visits, addrs, workers = 10000, 250, 16
	paths := []string{"/explorer/login", "/explorer/", "/explorer/login?return=%2Fexplorer%2Fnamespaces%2Fmdr16", "/explorer/namespaces/mdr16", "/"}
	clients := make([]*http.Client, addrs)
	for i := range clients {
		clients[i] = explorerAttackClient(net.IPv4(127, 0, 1, byte(1+i)))
	}
	var next, bad atomic.Int64
	var firstBad atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= visits {
					return
				}
				p := paths[i%int64(len(paths))]
				res, err := clients[i%addrs].Get(s.URL + p)
				if err != nil {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, err.Error())
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				want := http.StatusOK
				if strings.HasPrefix(p, "/explorer/login") {
					want = http.StatusFound
				}
				if res.StatusCode != want {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, p+": "+res.Status)
				}
			}
		})
	}
	wg.Wait()
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	if n := bad.Load(); n > 0 {
		t.Errorf("%d of %d anonymous visits failed; first: %v", n, visits, firstBad.Load())
	}
	if n := gatewayGauge(t, s, "fris_explorer_sessions"); n != 0 {
		t.Errorf("%v sessions held after %d anonymous visits, want 0", n, visits)
	}

	// The user finishes signing in, and lands where they began.
	res, err = user.PostForm(s.URL+"/oauth2/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, res)
	if res.StatusCode != 200 || res.Request.URL.Path != "/explorer/namespaces/mdr16" || !strings.Contains(body, "Ada Lovelace") {
		t.Fatalf("sign-in after the attack: %d at %s\n%s", res.StatusCode, res.Request.URL, body)
	}
	if n := gatewayGauge(t, s, "fris_explorer_sessions"); n != 1 {
		t.Errorf("%v sessions held after one sign-in, want 1", n)
	}
	// The browser holds the session id and no sign-in cookie any more.
	u, _ := url.Parse(s.URL + "/explorer/")
	for _, c := range jar.Cookies(u) {
		if strings.HasPrefix(c.Name, "fris_explorer_flow_") {
			t.Errorf("the sign-in cookie %s outlived the sign-in", c.Name)
		}
	}
}

// TestAttackExplorerStreamEnds: an open results stream ends when its
// session is signed out, and when an operator revokes the user; the
// browser's reconnection is then refused.
func TestAttackExplorerStreamEnds(t *testing.T) {
	t.Parallel()
	s, bankA, _ := inquiryStack(t)
	for _, how := range []string{"sign-out", "revoke-user"} {
		t.Run(how, func(t *testing.T) {
			c := signInHTTP(t, s)
			_, page := getPage(t, c, s.URL+"/explorer/inquiries/new")
			m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page)
			if m == nil {
				t.Fatal("no CSRF token on the form")
			}
			csrf := m[1]
			id := releasedInquiry(t, s, c, csrf)
			if res, body := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+bankA.email, strings.NewReader("10"), append(bankA.auth(), "Content-Type", "text/plain")...); res.StatusCode != 200 {
				t.Fatalf("reply: %d %s", res.StatusCode, body)
			}

			// A hang guard only: before, a stream ran 5 minutes whatever
			// happened to its session.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			events := s.URL + "/explorer/inquiries/" + id + "/events"
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, events, nil)
			req.Header.Set("Accept", "text/event-stream")
			stream := &http.Client{Jar: c.Jar} // no client timeout: the stream is long
			res, err := stream.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("events: %d", res.StatusCode)
			}
			r := bufio.NewReader(res.Body)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("the stream ended before its first results: %v", err)
				}
				if strings.HasPrefix(line, "event: results") {
					break
				}
			}

			switch how {
			case "sign-out":
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/logout", strings.NewReader(url.Values{"csrf_token": {csrf}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", s.URL)
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if readAll(t, res); res.StatusCode != 200 || res.Request.URL.Path != "/explorer/" {
					t.Fatalf("sign-out: %d at %s", res.StatusCode, res.Request.URL)
				}
			case "revoke-user":
				s.AuthCLI(t, 0, "revoke-user", demoEmail)
			}
			_, err = io.Copy(io.Discard, r)
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				t.Fatal("the results stream outlived its session by 2 minutes")
			}
			// EventSource reconnects: refused, so it stops. (After the
			// revoke the gateway knows within its revocation poll; the
			// stream ending shows it knows already.)
			req, _ = http.NewRequest(http.MethodGet, events, nil)
			req.Header.Set("Accept", "text/event-stream")
			res, err = stream.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if readAll(t, res); res.StatusCode != http.StatusUnauthorized {
				t.Errorf("reconnecting after %s: %d, want 401", how, res.StatusCode)
			}
		})
	}
}

// releasedInquiry creates an inquiry for two sites with the Explorer's
// form, releases it and returns its id.
func releasedInquiry(t *testing.T, s *Stack, c *http.Client, csrf string) string {
	t.Helper()
	fields := url.Values{"csrf_token": {csrf}, "label": {"Stream"}, "lastname": {"Lovelace"}, "site": {"charite", "dresden"},
		"qb.group": {"g"}, "qb.cond": {"g.a"}, "qb.c.a.urn": {"urn:mdr16:dataelement:14:1"}, "qb.c.a.from": {"18"}}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	fw, _ := w.CreateFormFile("expose", "expose.pdf")
	_, _ = fw.Write([]byte(tinyPDF))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", s.URL)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, res)
	id := strings.TrimPrefix(res.Request.URL.Path, "/explorer/inquiries/")
	if res.StatusCode != 200 || id == "" || strings.Contains(id, "/") {
		t.Fatalf("create: %d at %s\n%s", res.StatusCode, res.Request.URL, page)
	}
	req, _ = http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries/"+id+"/release", strings.NewReader(url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.URL)
	if res, err := c.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("release: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	return id
}

package e2e

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestExplorerResultsStreamsShared: the results streams of one inquiry
// share one broker watch: two tabs of one session and a tab of another
// session of the same user all get each reply; signing one session out
// ends its streams only, the other still gets the next reply; when the
// last stream closes, the watch is gone.
func TestExplorerResultsStreamsShared(t *testing.T) {
	t.Parallel()
	s, bankA, bankB := inquiryStack(t)
	c1, c2 := signInHTTP(t, s), signInHTTP(t, s)
	_, page := getPage(t, c1, s.URL+"/explorer/inquiries/new")
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token on the form")
	}
	csrf1 := m[1]
	id := releasedInquiry(t, s, c1, csrf1)

	// A hang guard only.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tab1a, tab1b := openStream(ctx, t, s, c1, id), openStream(ctx, t, s, c1, id)
	ctx2, close2 := context.WithCancel(ctx)
	tab2 := openStream(ctx2, t, s, c2, id)
	if n, w := gatewayGauge(t, s, "fris_explorer_results_streams"), gatewayGauge(t, s, "fris_explorer_results_watches"); n != 3 || w != 1 {
		t.Fatalf("%v streams on %v watches, want 3 on 1", n, w)
	}

	reply(t, s, id, bankA, "10")
	for i, tab := range []*bufio.Reader{tab1a, tab1b, tab2} {
		untilTotal(t, tab, "10", i)
	}

	req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/logout", strings.NewReader(url.Values{"csrf_token": {csrf1}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.URL)
	res, err := c1.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, res); res.StatusCode != 200 {
		t.Fatalf("sign-out: %d", res.StatusCode)
	}
	for _, tab := range []*bufio.Reader{tab1a, tab1b} {
		if _, err := tab.WriteTo(discard{}); ctx.Err() != nil {
			t.Fatalf("a signed-out session's stream outlived it: %v", err)
		}
	}
	// The watch the signed-out session opened may go on: the other
	// session, of the same user, checked for itself, still listens.
	reply(t, s, id, bankB, "5")
	untilTotal(t, tab2, "15", 2)
	if n := gatewayGauge(t, s, "fris_explorer_results_streams"); n != 1 {
		t.Fatalf("%v streams after the sign-out, want 1", n)
	}

	close2()
	for range 1000 {
		if gatewayGauge(t, s, "fris_explorer_results_streams") == 0 && gatewayGauge(t, s, "fris_explorer_results_watches") == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the watch outlived its last stream")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// openStream opens an inquiry's results stream and reads its first
// results.
func openStream(ctx context.Context, t *testing.T, s *Stack, c *http.Client, id string) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/explorer/inquiries/"+id+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := (&http.Client{Jar: c.Jar}).Do(req) // no client timeout: the stream is long
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
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
			return r
		}
	}
}

// untilTotal reads a stream's events until one shows total.
func untilTotal(t *testing.T, r *bufio.Reader, total string, tab int) {
	t.Helper()
	want := `<strong id="results-total">` + total + `</strong>`
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("tab %d: the stream ended before a total of %s: %v", tab, total, err)
		}
		if strings.Contains(line, want) {
			return
		}
	}
}

func reply(t *testing.T, s *Stack, id string, b bank, body string) {
	t.Helper()
	if res, out := s.Do(t, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+b.email, strings.NewReader(body), append(b.auth(), "Content-Type", "text/plain")...); res.StatusCode != 200 {
		t.Fatalf("reply: %d %s", res.StatusCode, out)
	}
}

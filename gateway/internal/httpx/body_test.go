package httpx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fris.dev/gateway/internal/addrlimit"
)

// readAllHandler reads the body whole and answers with what it read, or
// with the error's text.
func readAllHandler(read *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		read.Add(int64(len(b)))
		switch {
		case errors.Is(err, ErrBodyMemory):
			w.WriteHeader(http.StatusServiceUnavailable)
		case errors.Is(err, ErrBodyTooSlow):
			w.WriteHeader(http.StatusRequestTimeout)
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
		}
		fmt.Fprint(w, len(b))
	})
}

func TestBodyMemory(t *testing.T) {
	m := NewBodyMemory(1<<20, time.Hour, nil)
	var read atomic.Int64
	inner := readAllHandler(&read)
	hold := make(chan struct{})
	entered := make(chan struct{})
	// A handler that keeps its body's reservation until told.
	holding := m.Limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		entered <- struct{}{}
		<-hold
	}))
	h := m.Limit(inner)
	send := func(h http.Handler, body string, chunked bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPut, "/", strings.NewReader(body))
		if chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// 700 KiB held by one request: another 400 KiB does not fit, declared
	// or chunked; 300 KiB does.
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- send(holding, strings.Repeat("a", 700<<10), false) }()
	<-entered
	if got := m.Held(); got != 700<<10 {
		t.Fatalf("held %d, want %d", got, 700<<10)
	}
	for _, chunked := range []bool{false, true} {
		if rec := send(h, strings.Repeat("b", 400<<10), chunked); rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("over the budget (chunked %v): %d %s, want 503", chunked, rec.Code, rec.Body)
		}
	}
	if rec := send(h, strings.Repeat("c", 300<<10), false); rec.Code != http.StatusOK {
		t.Fatalf("within the budget: %d", rec.Code)
	}
	close(hold)
	if rec := <-done; rec.Code != http.StatusOK {
		t.Fatalf("holder: %d", rec.Code)
	}
	if got := m.Held(); got != 0 {
		t.Fatalf("held %d after every request ended", got)
	}
	// Given back, the budget takes a body as large again.
	if rec := send(h, strings.Repeat("d", 1<<20), false); rec.Code != http.StatusOK || rec.Body.String() != fmt.Sprint(1<<20) {
		t.Fatalf("whole budget: %d %s", rec.Code, rec.Body)
	}
	if rec := send(h, strings.Repeat("e", 400<<10), true); rec.Code != http.StatusOK || m.Held() != 0 {
		t.Fatalf("chunked within the budget: %d, held %d after", rec.Code, m.Held())
	}
	// A request without a body reserves nothing.
	if rec := send(h, "", false); rec.Code != http.StatusOK || m.Held() != 0 {
		t.Fatalf("no body: %d, held %d", rec.Code, m.Held())
	}
}

func TestBodyMemoryReturnsMemoryWhenIdle(t *testing.T) {
	freed := make(chan struct{}, 10)
	m := NewBodyMemory(0, 10*time.Millisecond, func() { freed <- struct{}{} })
	h := m.Limit(readAllHandler(new(atomic.Int64)))
	small := httptest.NewRequest(http.MethodPut, "/", strings.NewReader("small"))
	h.ServeHTTP(httptest.NewRecorder(), small)
	select {
	case <-freed:
		t.Fatal("memory returned after a small body")
	case <-time.After(100 * time.Millisecond):
	}
	big := httptest.NewRequest(http.MethodPut, "/", strings.NewReader(strings.Repeat("x", releaseAfter)))
	h.ServeHTTP(httptest.NewRecorder(), big)
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("memory not returned after large bodies")
	}
}

// serveRate serves h behind BodyRate on a real connection (the rate is
// kept with the connection's read deadline).
func serveRate(t *testing.T, c BodyRate, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(c.Limit(h))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// sendSlowly sends a request with a declared body of size bytes, written
// in pieces of piece bytes every pause, and returns the response's status.
func sendSlowly(t *testing.T, addr string, size, piece int, pause time.Duration) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
	go func() {
		for sent := 0; sent < size; sent += piece {
			if _, err := c.Write([]byte(strings.Repeat("x", min(piece, size-sent)))); err != nil {
				return
			}
			time.Sleep(pause)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestBodyRate(t *testing.T) {
	// 1 KiB/s over 1s windows.
	c := BodyRate{MinRate: 1024, Window: time.Second, Whole: time.Minute}
	var read atomic.Int64
	addr := serveRate(t, c, readAllHandler(&read))
	// A trickle: 10 bytes every 200ms is 50 B/s.
	if got := sendSlowly(t, addr, 4096, 10, 200*time.Millisecond); got != http.StatusRequestTimeout {
		t.Fatalf("a trickle = %d, want 408", got)
	}
	// Slow but steady: 16 KiB/s for 6s outlives two 3s windows, and keeps
	// 16 times the minimum. The wider window is for a busy machine: a read
	// after its deadline fails even when the bytes are there, so a sender
	// or reader not scheduled for most of a window (seen with -race and
	// the fuzzing beside) would make any body a trickle.
	steady := serveRate(t, BodyRate{MinRate: 1024, Window: 3 * time.Second, Whole: time.Minute}, readAllHandler(&read))
	if got := sendSlowly(t, steady, 96<<10, 2<<10, 125*time.Millisecond); got != http.StatusOK {
		t.Fatalf("a steady body = %d, want 200", got)
	}
}

// After the body, a handler that takes longer than a window (a service
// call) is not cut off: the connection is back on the whole request's
// deadline.
func TestBodyRateLetsHandlerWorkAfterBody(t *testing.T) {
	c := BodyRate{MinRate: 1024, Window: time.Second, Whole: time.Minute}
	addr := serveRate(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(2500 * time.Millisecond):
		case <-r.Context().Done():
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	if got := sendSlowly(t, addr, 10, 10, 0); got != http.StatusOK {
		t.Fatalf("= %d, want 200", got)
	}
}

func TestLimitInFlight(t *testing.T) {
	held := addrlimit.NewCounter(2)
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	h := LimitInFlight(held, nil, func(r *http.Request) string { return r.RemoteAddr }, func(*http.Request) string { return "" }, func(w http.ResponseWriter, _ *http.Request, code int, msg string) {
		http.Error(w, msg, code)
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	send := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	done := make(chan int, 3)
	for _, a := range []string{"192.0.2.1:1", "192.0.2.1:2", "[2001:db8::1]:3"} {
		go func() { done <- send(a).Code }()
		<-entered
	}
	if rec := send("192.0.2.1:9"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a third from one address = %d (Retry-After %q), want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	// One /64 is one address.
	go func() { done <- send("[2001:db8::2]:4").Code }()
	<-entered
	if rec := send("[2001:db8::ffff]:5"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a third from one /64 = %d, want 429", rec.Code)
	}
	close(release)
	for range 4 {
		if c := <-done; c != http.StatusOK {
			t.Fatalf("admitted request = %d", c)
		}
	}
	// Ended, they gave their places back.
	if rec := send("192.0.2.1:10"); rec.Code != http.StatusOK {
		t.Fatalf("after the others ended = %d, want 200", rec.Code)
	}
}

// TestLimitInFlightBySubject: requests of signed-in subjects count against
// their subject's budget, not their address's: from one address full of
// anonymous requests, two subjects each hold their own maximum; a
// subject's next is 429 with Retry-After, and so is the address's next
// anonymous one.
func TestLimitInFlightBySubject(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	h := LimitInFlight(addrlimit.NewCounter(1), addrlimit.NewCounter(2), func(r *http.Request) string { return r.RemoteAddr },
		func(r *http.Request) string { return r.Header.Get("X-Subject") },
		func(w http.ResponseWriter, _ *http.Request, code int, msg string) { http.Error(w, msg, code) },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-release
		}))
	send := func(subject string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "192.0.2.1:1"
		if subject != "" {
			req.Header.Set("X-Subject", subject)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	done := make(chan int, 5)
	for _, s := range []string{"", "ada", "ada", "bob", "bob"} {
		go func() { done <- send(s).Code }()
		<-entered
	}
	for _, s := range []string{"", "ada", "bob"} {
		rec := send(s)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
			t.Errorf("subject %q beyond its budget = %d (Retry-After %q), want 429", s, rec.Code, rec.Header().Get("Retry-After"))
		}
		if want := map[bool]string{true: "from your address", false: "of yours"}[s == ""]; !strings.Contains(rec.Body.String(), want) {
			t.Errorf("subject %q: %q, want it to say %q", s, rec.Body, want)
		}
	}
	close(release)
	for range 5 {
		if c := <-done; c != http.StatusOK {
			t.Fatalf("admitted request = %d", c)
		}
	}
}

// A handler that answers without reading a small body (a 401 before it):
// net/http reads the rest before it answers, and a trickle gets one
// window for that, not the whole request's time.
func TestBodyRateUnreadBodyCannotHoldTheAnswer(t *testing.T) {
	c := BodyRate{MinRate: 1024, Window: time.Second, Whole: 10 * time.Minute}
	addr := serveRate(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	// 4 KiB at 50 B/s would take 80s; sendSlowly waits 30s for the answer.
	if got := sendSlowly(t, addr, 4096, 10, 200*time.Millisecond); got != http.StatusUnauthorized {
		t.Fatalf("= %d, want 401", got)
	}
}

package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// clock is a reporter's time, moved by the test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// feed hands the reporter `go test -json` lines.
func feed(t *testing.T, r *reporter, lines string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		r.handle(e)
	}
}

// Two packages interleaved: the short one's ok line comes while the long
// one still runs, the long one reports each top-level test once it has run
// long, and a failure prints the failed test's output (its subtests') at
// once and FAIL lines at the end.
func TestReporterInterleaved(t *testing.T) {
	var b strings.Builder
	c := &clock{t: time.Unix(0, 0)}
	r := newReporter(&b, 20*time.Second, c.now)
	feed(t, r, `
{"Action":"start","Package":"x/e2e"}
{"Action":"run","Package":"x/e2e","Test":"TestSlow"}
{"Action":"start","Package":"x/kv"}
{"Action":"run","Package":"x/kv","Test":"TestA"}
{"Action":"output","Package":"x/kv","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"x/kv","Test":"TestA","Elapsed":0.1}
{"Action":"output","Package":"x/kv","Output":"PASS\n"}
{"Action":"output","Package":"x/kv","Output":"ok  \tx/kv\t0.2s\n"}
{"Action":"pass","Package":"x/kv","Elapsed":0.2}`)
	if got, want := b.String(), "ok  \tx/kv\t0.2s\n"; got != want {
		t.Fatalf("after the short package:\n%q, want\n%q", got, want)
	}
	b.Reset()
	c.t = c.t.Add(30 * time.Second)
	feed(t, r, `
{"Action":"pass","Package":"x/e2e","Test":"TestSlow","Elapsed":30}
{"Action":"run","Package":"x/e2e","Test":"TestBad"}
{"Action":"output","Package":"x/e2e","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"run","Package":"x/e2e","Test":"TestBad/sub"}
{"Action":"output","Package":"x/e2e","Test":"TestBad/sub","Output":"    bad_test.go:9: wrong\n"}
{"Action":"fail","Package":"x/e2e","Test":"TestBad/sub","Elapsed":1}
{"Action":"fail","Package":"x/e2e","Test":"TestBad","Elapsed":1}
{"Action":"run","Package":"x/e2e","Test":"TestSkipped"}
{"Action":"skip","Package":"x/e2e","Test":"TestSkipped"}
{"Action":"output","Package":"x/e2e","Output":"FAIL\n"}
{"Action":"output","Package":"x/e2e","Output":"FAIL\tx/e2e\t31.0s\n"}
{"Action":"fail","Package":"x/e2e","Elapsed":31}`)
	want := "    x/e2e: PASS TestSlow (30.00s)\n" +
		"--- FAIL: x/e2e TestBad (1.00s)\n=== RUN   TestBad\n    bad_test.go:9: wrong\n" +
		"    x/e2e: SKIP TestSkipped (0.00s)\n" +
		"FAIL\tx/e2e\t31.000s\n"
	if got := b.String(); got != want {
		t.Fatalf("the long package:\n%q, want\n%q", got, want)
	}
	b.Reset()
	if r.summary(time.Minute) {
		t.Fatal("summary: ok with a failed package")
	}
	want = "--- FAIL: x/e2e TestBad\nFAIL\tx/e2e\n" +
		"test: 1 packages ok, 1 failed; 2 tests passed, 2 failed, 1 skipped; 1m0s\nFAIL\n"
	if got := b.String(); got != want {
		t.Fatalf("summary:\n%q, want\n%q", got, want)
	}
}

// A package whose test binary dies (a panic, the timeout) shows the tests
// it was running; one whose `go test` fails before any event (a build
// set-up error) fails with go's own message.
func TestReporterUnfinishedAndSilentFailures(t *testing.T) {
	var b strings.Builder
	c := &clock{t: time.Unix(0, 0)}
	r := newReporter(&b, 20*time.Second, c.now)
	feed(t, r, `
{"Action":"start","Package":"x/a"}
{"Action":"run","Package":"x/a","Test":"TestHang"}
{"Action":"output","Package":"x/a","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"x/a","Output":"panic: test timed out after 12m0s\n"}
{"Action":"fail","Package":"x/a","Elapsed":720}`)
	r.processEnded("x/a", errors.New("exit status 1"), "")
	r.processEnded("x/b", errors.New("exit status 1"), "go: x/b: no such package\n")
	got := b.String()
	for _, want := range []string{"--- unfinished: x/a TestHang\n=== RUN   TestHang\n", "panic: test timed out", "FAIL\tx/a\t720.000s\n",
		"go: x/b: no such package\ngo test: exit status 1\nFAIL\tx/b\t0.000s\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "FAIL\tx/a") != 1 {
		t.Errorf("x/a reported more than once:\n%s", got)
	}
	b.Reset()
	if r.summary(time.Second) || !strings.HasSuffix(b.String(), "0 packages ok, 2 failed; 0 tests passed, 0 failed, 0 skipped; 1s\nFAIL\n") {
		t.Fatalf("summary:\n%s", b.String())
	}
}

// Nothing printed for a while: a line says what still runs.
func TestReporterHeartbeat(t *testing.T) {
	var b strings.Builder
	c := &clock{t: time.Unix(0, 0)}
	r := newReporter(&b, 20*time.Second, c.now)
	feed(t, r, `
{"Action":"start","Package":"x/e2e"}
{"Action":"run","Package":"x/e2e","Test":"TestLong"}`)
	r.heartbeat(time.Minute, 10*time.Second, 3)
	if b.Len() != 0 {
		t.Fatalf("a heartbeat before a minute of silence: %q", b.String())
	}
	c.t = c.t.Add(time.Minute)
	r.heartbeat(time.Minute, 70*time.Second, 3)
	if got, want := b.String(), "test: still running after 1m10s: x/e2e (0 tests done; running TestLong); 0 packages done, 3 waiting\n"; got != want {
		t.Fatalf("heartbeat %q, want %q", got, want)
	}
}

// Tests paused in t.Parallel, waiting for their turn, are not running.
func TestReporterHeartbeatParallel(t *testing.T) {
	var b strings.Builder
	c := &clock{t: time.Unix(0, 0)}
	r := newReporter(&b, 20*time.Second, c.now)
	feed(t, r, `
{"Action":"start","Package":"x/e2e"}
{"Action":"run","Package":"x/e2e","Test":"TestA"}
{"Action":"pause","Package":"x/e2e","Test":"TestA"}
{"Action":"run","Package":"x/e2e","Test":"TestB"}
{"Action":"pause","Package":"x/e2e","Test":"TestB"}
{"Action":"run","Package":"x/e2e","Test":"TestC"}
{"Action":"pause","Package":"x/e2e","Test":"TestC"}
{"Action":"cont","Package":"x/e2e","Test":"TestA"}
{"Action":"pass","Package":"x/e2e","Test":"TestA","Elapsed":1}
{"Action":"cont","Package":"x/e2e","Test":"TestB"}`)
	c.t = c.t.Add(time.Minute)
	r.heartbeat(time.Minute, 70*time.Second, 0)
	if got, want := b.String(), "test: still running after 1m10s: x/e2e (1 tests done; running TestB); 0 packages done, 0 waiting\n"; got != want {
		t.Fatalf("heartbeat %q, want %q", got, want)
	}
}

package ratelimit

import (
	"flag"
	"testing"
	"time"
)

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{
		"off":              {},
		"3/1h":             {Limit: Limit{Events: 3, Per: time.Hour, Burst: 3}},
		" 5/15m:30s..15m ": {Limit: Limit{Events: 5, Per: 15 * time.Minute, Burst: 5}, Backoff: 30 * time.Second, MaxBackoff: 15 * time.Minute, Window: 45 * time.Minute},
	} {
		got, err := ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"5", "0/1m", "x/1m", "5/0s", "5/1m:1s", "5/1m:1m..1s", "5/1m:1s..48h", "-1/1m", "5/1m:..", "5/9999h"} {
		if p, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) = %+v, want an error", bad, p)
		}
	}
}

func TestPolicyVar(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var p Policy
	PolicyVar(fs, &p, "limit", "5/15m:30s..15m", "failures")
	if p.String() != "5/15m:30s..15m" {
		t.Fatalf("default = %s", p)
	}
	if err := fs.Parse([]string{"-limit", "2/1s"}); err != nil {
		t.Fatal(err)
	}
	if p != (Policy{Limit: Limit{Events: 2, Per: time.Second, Burst: 2}}) {
		t.Fatalf("parsed = %+v", p)
	}
	if err := fs.Parse([]string{"-limit", "nonsense"}); err == nil {
		t.Fatal("a bad limit was accepted")
	}
}

// FuzzParsePolicy: any text either fails or gives a usable policy that
// reads back the same from its own String.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"off", "3/1h", "5/15m:30s..15m", "1/1ms:1ms..1ms", "5/1m:1m..1s", "9/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			return
		}
		if err := p.Validate("fuzz"); err != nil {
			t.Fatalf("ParsePolicy(%q) = %+v, which Validate refuses: %v", s, p, err)
		}
		again, err := ParsePolicy(p.String())
		if err != nil || again != p {
			t.Fatalf("ParsePolicy(%q) = %+v; its String %q reads back as %+v, %v", s, p, p.String(), again, err)
		}
		if !p.Off() && p.Limit.interval() <= 0 {
			t.Fatalf("ParsePolicy(%q): interval %v", s, p.Limit.interval())
		}
	})
}

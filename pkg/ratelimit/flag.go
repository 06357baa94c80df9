package ratelimit

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParsePolicy reads a policy as flags write it: "off", "N/PERIOD" (N
// failures at once, then N per PERIOD) or "N/PERIOD:BACKOFF..MAX" (and once
// N failures came, each further one locks the key for BACKOFF, doubling up
// to MAX). Failures are remembered for PERIOD plus twice MAX after the
// last one, so a back-off keeps growing while failures keep coming.
// Examples: "5/15m:30s..15m", "3/1h".
func ParsePolicy(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "" {
		return Policy{}, nil
	}
	rate, back, hasBack := strings.Cut(s, ":")
	ns, per, ok := strings.Cut(rate, "/")
	if !ok {
		return Policy{}, fmt.Errorf("limit %q: want N/PERIOD[:BACKOFF..MAX] or off", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil || n < 1 || n > 1_000_000 {
		return Policy{}, fmt.Errorf("limit %q: N must be a whole number from 1 to 1000000", s)
	}
	d, err := time.ParseDuration(strings.TrimSpace(per))
	if err != nil || d < time.Millisecond || d > 7*24*time.Hour {
		return Policy{}, fmt.Errorf("limit %q: PERIOD must be a duration from 1ms to 168h", s)
	}
	p := Policy{Limit: Limit{Events: n, Per: d, Burst: n}}
	if hasBack {
		lo, hi, ok := strings.Cut(back, "..")
		if !ok {
			return Policy{}, fmt.Errorf("limit %q: the back-off is BACKOFF..MAX", s)
		}
		if p.Backoff, err = time.ParseDuration(strings.TrimSpace(lo)); err != nil {
			return Policy{}, fmt.Errorf("limit %q: BACKOFF: %w", s, err)
		}
		if p.MaxBackoff, err = time.ParseDuration(strings.TrimSpace(hi)); err != nil {
			return Policy{}, fmt.Errorf("limit %q: MAX: %w", s, err)
		}
		if p.Backoff < time.Millisecond || p.MaxBackoff < p.Backoff || p.MaxBackoff > 24*time.Hour {
			return Policy{}, fmt.Errorf("limit %q: want 1ms <= BACKOFF <= MAX <= 24h", s)
		}
		p.Window = d + 2*p.MaxBackoff
	}
	return p, nil
}

// String writes p as ParsePolicy reads it.
func (p Policy) String() string {
	if p.Off() {
		return "off"
	}
	s := strconv.Itoa(p.Limit.Burst) + "/" + fmtDuration(p.Limit.Per)
	if p.Backoff > 0 {
		s += ":" + fmtDuration(p.Backoff) + ".." + fmtDuration(p.MaxBackoff)
	}
	return s
}

// fmtDuration drops time.Duration's zero units ("15m", not "15m0s").
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Must is ParsePolicy for defaults written in code.
func Must(s string) Policy {
	p, err := ParsePolicy(s)
	if err != nil {
		panic(err)
	}
	return p
}

type policyFlag struct{ p *Policy }

func (f policyFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f policyFlag) Set(s string) error {
	p, err := ParsePolicy(s)
	if err != nil {
		return err
	}
	*f.p = p
	return nil
}

// PolicyVar defines a flag holding a policy, with def as its default.
func PolicyVar(fs *flag.FlagSet, p *Policy, name string, def string, usage string) {
	*p = Must(def)
	fs.Var(policyFlag{p}, name, usage+" (N/PERIOD[:BACKOFF..MAX] or off; docs/security.md, Abuse limits)")
}

package storage

import (
	"testing"
	"time"
)

func TestMarkerTTLWholeSecondsOutlivingTheToken(t *testing.T) {
	expires := int64(1_900_000_000)
	exp := time.Unix(expires, 0)
	for _, c := range []struct {
		before time.Duration // now = expiry - before
		want   time.Duration
	}{
		{time.Hour, time.Hour},
		{time.Hour - time.Microsecond, time.Hour},
		{time.Hour + time.Nanosecond, time.Hour + time.Second},
		{1500 * time.Millisecond, 2 * time.Second},
		{time.Nanosecond, time.Second},
		{0, 0},
		{-time.Second, 0},
	} {
		now := exp.Add(-c.before)
		got := markerTTL(expires, now)
		if got != c.want {
			t.Errorf("%s before expiry: ttl %s, want %s", c.before, got, c.want)
		}
		if c.before > 0 && now.Add(got).Before(exp) {
			t.Errorf("%s before expiry: the marker (ttl %s) dies before the token", c.before, got)
		}
	}
	// Spends a few microseconds apart, of tokens expiring in the same
	// second, get markers that expire at one instant of the batch's clock.
	now := exp.Add(-30 * 24 * time.Hour).Add(-137 * time.Millisecond)
	first := markerTTL(expires, now)
	for d := time.Microsecond; d < 100*time.Millisecond; d *= 3 {
		if got := markerTTL(expires, now.Add(d)); got != first {
			t.Fatalf("spend %s later: ttl %s, first %s", d, got, first)
		}
	}
}

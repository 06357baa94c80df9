package ratelimit

import "testing"

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":              "192.0.2.1",
		"192.0.2.1:443":          "192.0.2.1",
		"::ffff:192.0.2.1":       "192.0.2.1",
		"2001:db8:1:2:3:4:5:6":   "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":   "2001:db8:1:2::/64",
		"[2001:db8:1:2::9]:8443": "2001:db8:1:2::/64",
		"fe80::1%eth0":           "fe80::/64",
		"::1":                    "::/64",
		"not an address":         "not an address",
		"2001:db8:1:3:3:4:5:6":   "2001:db8:1:3::/64",
	} {
		if got := AddrKey(in); got != want {
			t.Errorf("AddrKey(%q) = %q, want %q", in, got, want)
		}
	}
	if AddrKey("2001:db8:1:2::1") == AddrKey("2001:db8:1:3::1") {
		t.Fatal("two /64s share a key")
	}
}

func FuzzAddrKey(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "2001:db8::1", "[::1]:80", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := AddrKey(s)
		if len(k) > 70 || AddrKey(s) != k {
			t.Fatalf("AddrKey(%q) = %d bytes", s, len(k))
		}
	})
}

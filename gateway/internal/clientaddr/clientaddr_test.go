package clientaddr

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	ps, err := Parse(" 10.0.0.0/8, 192.0.2.7 ,fd00::/8,::ffff:198.51.100.1,")
	if err != nil {
		t.Fatal(err)
	}
	if got := ps.String(); got != "10.0.0.0/8,192.0.2.7/32,fd00::/8,198.51.100.1/32" {
		t.Fatalf("Parse = %s", got)
	}
	if ps, err := Parse(""); err != nil || len(ps) != 0 {
		t.Fatalf(`Parse("") = %v, %v`, ps, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.org", "fe80::1%eth0", "10.0.0.1-10.0.0.9"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestOf(t *testing.T) {
	trusted, _ := Parse("10.0.0.0/8,2001:db8:1::/48")
	for _, c := range []struct {
		name   string
		ps     Proxies
		remote string
		xff    []string
		want   string
	}{
		{"no proxies: the peer, header ignored", nil, "203.0.113.5:4711", []string{"198.51.100.1"}, "203.0.113.5"},
		{"untrusted peer: header ignored", trusted, "203.0.113.5:4711", []string{"198.51.100.1"}, "203.0.113.5"},
		{"trusted peer without header", trusted, "10.1.2.3:80", nil, "10.1.2.3"},
		{"trusted peer", trusted, "10.1.2.3:80", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client-sent entries left of the real one are ignored", trusted, "10.1.2.3:80", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", trusted, "10.1.2.3:80", []string{"198.51.100.1, 10.9.9.9", "10.8.8.8"}, "198.51.100.1"},
		{"garbage ends the walk at the hop that wrote it", trusted, "10.1.2.3:80", []string{"198.51.100.1, nonsense, 10.9.9.9"}, "10.9.9.9"},
		{"all trusted: the farthest", trusted, "10.1.2.3:80", []string{"10.7.7.7, 10.9.9.9"}, "10.7.7.7"},
		{"ports and brackets", trusted, "[2001:db8:1::5]:443", []string{"[2001:db8:2::9]:5555"}, "2001:db8:2::9"},
		{"v4 mapped", trusted, "[::ffff:10.1.2.3]:80", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"no port on remote", nil, "192.0.2.1", nil, "192.0.2.1"},
		{"unparseable remote is kept", nil, "pipe", nil, "pipe"},
		{"too many hops", trusted, "10.1.2.3:80", []string{strings.Repeat("10.0.0.1,", 100) + "10.0.0.2"}, "10.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ps.Of(c.remote, c.xff); got != c.want {
				t.Fatalf("Of(%q, %q) = %q, want %q", c.remote, c.xff, got, c.want)
			}
		})
	}
}

// FuzzOf: whatever a client sends in X-Forwarded-For, the answer is the
// peer itself unless the peer is trusted, and otherwise an address (or the
// peer) that no trusted proxy owns unless the whole chain was trusted.
func FuzzOf(f *testing.F) {
	for _, s := range []string{"198.51.100.1", "1.1.1.1, 10.0.0.1", "[::1]:80", "nonsense", "", ",,,", "10.0.0.1:99999", "fe80::1%eth0"} {
		f.Add("10.1.2.3:80", s)
		f.Add("203.0.113.5:1", s)
	}
	trusted, _ := Parse("10.0.0.0/8,fd00::/8")
	f.Fuzz(func(t *testing.T, remote, xff string) {
		got := trusted.Of(remote, []string{xff})
		none := Proxies(nil).Of(remote, []string{xff})
		host, _, err := net.SplitHostPort(remote)
		if err != nil {
			host = remote
		}
		peer, err := netip.ParseAddr(host)
		if err != nil || !trusted.trusts(peer) {
			if got != none {
				t.Fatalf("untrusted or unparseable peer %q: Of = %q, want the peer %q", remote, got, none)
			}
			return
		}
		a, err := netip.ParseAddr(got)
		if err != nil {
			t.Fatalf("Of(%q, %q) = %q, not an address", remote, xff, got)
		}
		if a.Zone() != "" {
			t.Fatalf("Of(%q, %q) = %q carries a zone", remote, xff, got)
		}
	})
}

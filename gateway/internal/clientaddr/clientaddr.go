// Package clientaddr finds the address an HTTP client connected from: the
// TCP peer, or, behind reverse proxies the operator named
// (-trusted-proxies), the address those proxies recorded in
// X-Forwarded-For. Services key their abuse limits and audit events on it,
// so a client must not be able to choose it: X-Forwarded-For is believed
// only as far as it was written by trusted proxies. Likewise whether the
// client reached the gateway over TLS (scheme.go): X-Forwarded-Proto counts
// only from a trusted proxy.
package clientaddr

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// maxHops bounds how many X-Forwarded-For entries are looked at: no real
// chain of proxies is longer, and a client may send thousands.
const maxHops = 32

// Proxies are the networks whose connections are trusted to tell the
// client's address in X-Forwarded-For. Empty: nobody is.
type Proxies []netip.Prefix

// Parse reads a comma-separated list of CIDR prefixes or single addresses
// ("10.0.0.0/8, 192.0.2.7, fd00::/8"); "" is none.
func Parse(list string) (Proxies, error) {
	var ps Proxies
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			ps = append(ps, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("trusted proxy %q: want a CIDR prefix (10.0.0.0/8) or an address", f)
		}
		a = a.Unmap()
		ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
	}
	return ps, nil
}

func (ps Proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// String lists the prefixes as Parse reads them.
func (ps Proxies) String() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Of is the client address of a request that arrived from remote (its
// RemoteAddr, host:port) with the given X-Forwarded-For header values.
// When remote is a trusted proxy, the entries are read from the right (the
// nearest proxy appends last), skipping trusted proxies; the first other
// address is the client. An entry that is not an address ends the walk:
// the hop that wrote it is the last one known, so it is the answer.
func (ps Proxies) Of(remote string, xff []string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if len(ps) == 0 || len(xff) == 0 || !ps.trusts(peer) {
		return peer.String()
	}
	hop := peer
	seen := 0
	for i := len(xff) - 1; i >= 0; i-- {
		entries := strings.Split(xff[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			if seen++; seen > maxHops {
				return hop.String()
			}
			a, ok := parseEntry(entries[j])
			if !ok {
				return hop.String()
			}
			if !ps.trusts(a) {
				return a.String()
			}
			hop = a
		}
	}
	// Every entry was a trusted proxy: the first of them is as near to
	// the client as the chain goes.
	return hop.String()
}

// parseEntry reads one X-Forwarded-For entry: an address, possibly with a
// port ("192.0.2.1:4711", "[2001:db8::1]:4711") as some proxies write.
func parseEntry(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

package ratelimit

import (
	"context"
	"net/netip"

	"fris.dev/pkg/identity"
)

// AddrKey is the identity a client address is limited under: an IPv4
// address as it is, an IPv6 address as its /64. One IPv6 host is routinely
// given a whole /64 (SLAAC, privacy addresses), so keying single addresses
// would hand an attacker 2^64 fresh budgets. IPv4-mapped IPv6 addresses
// count as their IPv4 address; text that is no address (a port, a zone
// and all) is kept as it is, clipped.
func AddrKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return clip(addr)
		}
		a = ap.Addr()
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// clientAddr is the caller's address key, "" when the gateway sent none.
func clientAddr(ctx context.Context) string {
	a := identity.Incoming(ctx, identity.KeyClientAddr)
	if a == "" {
		return ""
	}
	return AddrKey(a)
}

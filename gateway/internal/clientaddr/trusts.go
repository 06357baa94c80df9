package clientaddr

import "net/netip"

// Trusts reports whether a is one of the trusted proxies: the gateway's
// per-address connection cap cannot see the clients behind them, so it
// leaves their connections to the proxy's own limits.
func (ps Proxies) Trusts(a netip.Addr) bool { return ps.trusts(a) }

// Package rpcclient dials FRIS services with the shared client options.
package rpcclient

import (
	"fmt"
	"net"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// listScheme names the resolver of a comma-separated address list; each
// connection registers its own (grpc.WithResolvers), so nothing is global.
const listScheme = "fris-list"

// Dial connects lazily to a service at addr: one host:port (resolved by DNS
// and re-resolved as replicas come and go) or a comma-separated list of
// host:port, one per replica. Calls are spread round robin over every
// address; a replica that is down is skipped until it answers again.
// otelgrpc carries the caller's trace context to the service. Pass the
// transport in opts (mtls.Config's DialOption): without it the connection
// is plaintext, which services refuse unless they run with
// -insecure-plaintext.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64 << 20)),
		// Spread calls over every address the name resolves to (replicas
		// behind a headless Service or DNS, or a listed set), not only the
		// first.
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`),
		// No service config from DNS TXT records: FRIS sets its own above,
		// and the TXT lookup delays a name's first addresses by as long as
		// the DNS server takes to answer it (container DNS servers such as
		// podman's aardvark-dns can drop TXT queries: seconds per lookup).
		grpc.WithDisableServiceConfig(),
	}
	target := addr
	if strings.Contains(addr, ",") {
		addrs, err := ParseList(addr)
		if err != nil {
			return nil, err
		}
		r := manual.NewBuilderWithScheme(listScheme)
		r.InitialState(resolver.State{Addresses: addrs})
		base = append(base, grpc.WithResolvers(r))
		// The authority is the first replica's; each connection checks its
		// own replica's certificate by the ServerName of its address.
		target = listScheme + ":///" + addrs[0].Addr
	}
	cc, err := grpc.NewClient(target, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}

// ParseList reads a comma-separated list of host:port (blanks around items
// allowed). Every item must have a host and a port, and none may repeat.
func ParseList(list string) ([]resolver.Address, error) {
	var addrs []resolver.Address
	seen := map[string]bool{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		host, port, err := net.SplitHostPort(item)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("address list %q: %q is not host:port", list, item)
		}
		if seen[item] {
			return nil, fmt.Errorf("address list %q: %s is listed twice", list, item)
		}
		seen[item] = true
		addrs = append(addrs, resolver.Address{Addr: item, ServerName: host})
	}
	return addrs, nil
}

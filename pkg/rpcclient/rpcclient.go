// Package rpcclient dials FRIS services with the shared client options.
package rpcclient

import (
	"fmt"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial connects lazily to a service at addr (host:port, resolved by DNS and
// re-resolved as replicas come and go); otelgrpc carries the caller's trace
// context to the service. Pass the transport in opts (mtls.Config's
// DialOption): without it the connection is plaintext, which services
// refuse unless they run with -insecure-plaintext.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64 << 20)),
		// Spread calls over every address the name resolves to (replicas
		// behind a headless Service or DNS), not only the first.
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`),
	}
	cc, err := grpc.NewClient(addr, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}

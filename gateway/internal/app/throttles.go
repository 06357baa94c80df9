package app

import (
	"google.golang.org/grpc"

	"fris.dev/gateway/internal/explorer"
	ratelimitv1 "fris.dev/proto/ratelimit/v1"
)

// throttleServices are the ThrottleAdmin APIs of the services with abuse
// limits (auth, upload, broker; mdr checks no credential), in the order
// the Explorer's throttles view lists them.
func throttleServices(up Upstreams) []explorer.ThrottleService {
	var out []explorer.ThrottleService
	for _, s := range []struct {
		name string
		cc   *grpc.ClientConn
	}{{"auth", up.Auth}, {"upload", up.Upload}, {"broker", up.Broker}} {
		if s.cc != nil {
			out = append(out, explorer.ThrottleService{Name: s.name, Client: ratelimitv1.NewThrottleAdminClient(s.cc)})
		}
	}
	return out
}

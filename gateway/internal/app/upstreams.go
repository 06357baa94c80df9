package app

import (
	"google.golang.org/grpc"

	"fris.dev/pkg/rpcclient"
)

// Upstreams are the gRPC connections the gateway talks through. Auth is
// nil when no auth service is configured.
type Upstreams struct {
	MDR    *grpc.ClientConn
	Auth   *grpc.ClientConn
	Upload *grpc.ClientConn
	Broker *grpc.ClientConn
}

// Close closes every connection.
func (u Upstreams) Close() {
	for _, cc := range []*grpc.ClientConn{u.MDR, u.Auth, u.Upload, u.Broker} {
		if cc != nil {
			_ = cc.Close()
		}
	}
}

// Dial connects to every service named in cfg.
func Dial(cfg Config) (Upstreams, error) {
	var up Upstreams
	transport, err := cfg.TLS.DialOption()
	if err != nil {
		return Upstreams{}, err
	}
	opts := append(forwardClientAddr(), transport)
	if up.MDR, err = rpcclient.Dial(cfg.MDRAddr, opts...); err != nil {
		return Upstreams{}, err
	}
	for _, o := range []struct {
		addr string
		cc   **grpc.ClientConn
	}{{cfg.AuthAddr, &up.Auth}, {cfg.UploadAddr, &up.Upload}, {cfg.BrokerAddr, &up.Broker}} {
		if o.addr == "" {
			continue
		}
		if *o.cc, err = rpcclient.Dial(o.addr, opts...); err != nil {
			up.Close()
			return Upstreams{}, err
		}
	}
	return up, nil
}

package rpcclient

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
)

func serve(t *testing.T) (*grpc.Server, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return srv, lis.Addr().String()
}

// check calls n times and counts the answers per replica address.
func check(t *testing.T, cc *grpc.ClientConn, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	hc := healthpb.NewHealthClient(cc)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var p peer.Peer
		_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p), grpc.WaitForReady(true))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		got[p.Addr.String()]++
	}
	return got
}

func TestListSpreadsAndSkipsADeadReplica(t *testing.T) {
	a, addrA := serve(t)
	_, addrB := serve(t)
	cc, err := Dial(addrA + ", " + addrB)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	// Round robin takes a replica in once its connection is ready; wait
	// until two calls reach both, then count a fair share.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got := check(t, cc, 2); got[addrA] == 1 && got[addrB] == 1 || time.Now().After(deadline) {
			break
		}
	}
	got := check(t, cc, 20)
	if got[addrA] < 8 || got[addrB] < 8 {
		t.Fatalf("20 calls over two replicas: %v, want about 10 each", got)
	}
	a.Stop()
	// A call in flight on the dying connection fails (Unavailable; the
	// gateway answers 503). Once the client has seen the connection go,
	// every call goes to the live replica.
	hc := healthpb.NewHealthClient(cc)
	deadline = time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call succeeded after %s stopped: %v", addrA, err)
		}
	}
	got = check(t, cc, 20)
	if got[addrB] != 20 {
		t.Fatalf("with %s down: %v, want every call on %s", addrA, got, addrB)
	}
}

func TestSingleAddressStillDials(t *testing.T) {
	_, addr := serve(t)
	cc, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if got := check(t, cc, 3); got[addr] != 3 {
		t.Fatalf("got %v", got)
	}
}

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // addresses joined by space, or "error"
	}{
		{"127.0.0.1:1,127.0.0.1:2", "127.0.0.1:1 127.0.0.1:2"},
		{" a:1 , b:2 ,c:3", "a:1 b:2 c:3"},
		{"[::1]:9,a:1", "[::1]:9 a:1"},
		{"a:1,", "error"},
		{"a:1,a:1", "error"},
		{"a,b:2", "error"},
		{":1,b:2", "error"},
		{"a:,b:2", "error"},
	} {
		addrs, err := ParseList(tc.in)
		var got []string
		for _, a := range addrs {
			got = append(got, a.Addr)
		}
		g := strings.Join(got, " ")
		if err != nil {
			g = "error"
		}
		if g != tc.want {
			t.Errorf("ParseList(%q) = %q (%v), want %q", tc.in, g, err, tc.want)
		}
	}
	if a, _ := ParseList("h:1,k:2"); a[1].ServerName != "k" {
		t.Errorf("ServerName = %q, want the host k (the certificate is checked per replica)", a[1].ServerName)
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"127.0.0.1:1,127.0.0.1:2", "a:1,a:1", "[::1]:9,x:", ",", "a:b:c,d:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := ParseList(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, a := range addrs {
			host, port, err := net.SplitHostPort(a.Addr)
			if err != nil || host == "" || port == "" || host != a.ServerName || seen[a.Addr] {
				t.Fatalf("ParseList(%q) gave %+v", s, a)
			}
			seen[a.Addr] = true
		}
	})
}

package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// dialFrom connects to addr from the loopback address src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Run wires the per-address connection cap: one address's connection past
// it is closed at once, another address is served; a trusted proxy's
// connections are not counted.
func TestMaxConnsPerAddr(t *testing.T) {
	for _, proxied := range []bool{false, true} {
		args := []string{"-max-conns-per-addr", "2"}
		if proxied {
			args = append(args, "-trusted-proxies", "127.0.0.2")
		}
		addr := runGateway(t, args...)
		dialFrom(t, "127.0.0.2", addr)
		dialFrom(t, "127.0.0.2", addr)
		third := dialFrom(t, "127.0.0.2", addr)
		_, _ = io.WriteString(third, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
		if proxied {
			res, err := http.ReadResponse(bufio.NewReader(third), nil)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("a trusted proxy's third connection: %v; want served", err)
			}
			res.Body.Close()
		} else if b, err := io.ReadAll(third); len(b) != 0 || isTimeout(err) {
			t.Fatalf("a third connection from one address: %q, %v; want closed at once", b, err)
		}
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
		res, err := c.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("another address: %v", err)
		}
		res.Body.Close()
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

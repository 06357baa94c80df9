package addrlimit

import (
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:4711":             "192.0.2.7",
		"192.0.2.7":                  "192.0.2.7",
		"[::ffff:192.0.2.7]:80":      "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":       "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":          "fe80::/64",
		"not an address":             "not an address",
	} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
	if Key("[2001:db8:1:2::1]:1") != Key("[2001:db8:1:2:8000::9]:2") {
		t.Error("two addresses of one /64 are two keys")
	}
	if Key("[2001:db8:1:2::1]:1") == Key("[2001:db8:1:3::1]:1") {
		t.Error("two /64s are one key")
	}
}

func TestCounter(t *testing.T) {
	c := NewCounter(2)
	if !c.Acquire("a") || !c.Acquire("a") {
		t.Fatal("the first two are refused")
	}
	if c.Acquire("a") {
		t.Fatal("a third is admitted")
	}
	if !c.Acquire("b") {
		t.Fatal("another key is refused")
	}
	c.Release("a")
	if !c.Acquire("a") {
		t.Fatal("refused after a release")
	}
	c.Release("a")
	c.Release("a")
	c.Release("b")
	if len(c.n) != 0 {
		t.Fatalf("keys holding nothing are kept: %v", c.n)
	}
	var off *Counter
	if !off.Acquire("x") || !NewCounter(0).Acquire("x") {
		t.Fatal("no cap refuses")
	}
}

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

// closedByServer reports whether the server closed c (EOF or reset)
// rather than keeping it open.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func TestListenClosesConnectionsBeyondTheCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan struct{}, 10)
	exempt := netip.MustParseAddr("127.0.0.9")
	lis := Listen(inner, ListenConfig{Max: 2, Exempt: func(a netip.Addr) bool { return a == exempt },
		Refused: func() { refused <- struct{}{} }})
	defer lis.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	addr := inner.Addr().String()
	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	s1, s2 := <-accepted, <-accepted
	a3 := dialFrom(t, "127.0.0.2", addr)
	<-refused
	if !closedByServer(a3) {
		t.Fatal("a third connection from one address stays open")
	}
	// Another address, and an exempt one, are served meanwhile.
	dialFrom(t, "127.0.0.3", addr)
	<-accepted
	for range 3 {
		dialFrom(t, "127.0.0.9", addr)
		<-accepted
	}
	if closedByServer(a1) || closedByServer(a2) {
		t.Fatal("connections within the cap were closed")
	}
	// A closed connection frees its place, once however often it closes.
	s1.Close()
	s1.Close()
	dialFrom(t, "127.0.0.2", addr)
	s4 := <-accepted
	dialFrom(t, "127.0.0.2", addr)
	<-refused
	s2.Close()
	s4.Close()
	c := dialFrom(t, "127.0.0.2", addr)
	s5 := <-accepted
	go func() { _, _ = s5.Write([]byte("x")) }()
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if len(refused) != 0 {
		t.Fatalf("%d more refused", len(refused))
	}
}

// TestMoveToSubject: connections whose requests proved a subject leave
// their address's budget for their subject's, so the address admits new
// (anonymous) connections up to its cap again while the subject holds up
// to its own; a subject at its cap leaves the connection on its address;
// a connection moves once, and its close gives back the subject's unit.
func TestMoveToSubject(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan struct{}, 10)
	lis := Listen(inner, ListenConfig{Max: 2, MaxPerSubject: 3, Refused: func() { refused <- struct{}{} }})
	defer lis.Close()
	l := lis.(*listener)
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	addr := inner.Addr().String()
	accept := func() context.Context {
		t.Helper()
		dialFrom(t, "127.0.0.2", addr)
		return ConnContext(context.Background(), <-accepted)
	}
	// Three signed-in connections of "ada" in turn, each moved after its
	// first request: the address never holds more than one.
	var ada []context.Context
	for range 3 {
		ctx := accept()
		if !MoveToSubject(ctx, "ada") || !MoveToSubject(ctx, "ada") {
			t.Fatal("not moved")
		}
		ada = append(ada, ctx)
	}
	if got, subj := l.held.Held("127.0.0.2"), l.subjects.Held("ada"); got != 0 || subj != 3 {
		t.Fatalf("address holds %d, ada %d; want 0, 3", got, subj)
	}
	// ada at her cap: a fourth stays on the address, as does a moved
	// connection asked to move to another subject (it moves once).
	fourth := accept()
	if MoveToSubject(fourth, "ada") {
		t.Fatal("moved beyond the subject's cap")
	}
	if !MoveToSubject(ada[0], "bob") || l.subjects.Held("bob") != 0 {
		t.Fatal("a moved connection moved again")
	}
	// Anonymous strangers still get only the address's cap: one more
	// beside the fourth, then refused.
	accept()
	dialFrom(t, "127.0.0.2", addr)
	<-refused
	// A moved connection's close frees ada's unit, not the address's.
	ada[0].Value(connKey{}).(*conn).Close()
	ada[0].Value(connKey{}).(*conn).Close()
	if got, subj := l.held.Held("127.0.0.2"), l.subjects.Held("ada"); got != 2 || subj != 2 {
		t.Fatalf("address holds %d, ada %d; want 2, 2", got, subj)
	}
	if !MoveToSubject(fourth, "ada") || l.held.Held("127.0.0.2") != 1 {
		t.Fatal("not moved once ada had room")
	}
	// A context without a counted connection, or without a subject,
	// moves nothing.
	if MoveToSubject(context.Background(), "ada") || MoveToSubject(accept(), "") {
		t.Fatal("moved without a connection or a subject")
	}
}

// Key reads addresses a client influences (behind trusted proxies, from
// X-Forwarded-For): any string gives a key, an address's key is an
// address or a /64, and a key is its own key.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"192.0.2.7:4711", "[2001:db8::1]:443", "::ffff:10.0.0.1", "fe80::1%eth0", "", "x:y:z", "[::]:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := Key(s)
		if Key(k) != k {
			t.Fatalf("Key(%q) = %q, whose key is %q", s, k, Key(k))
		}
		if _, ok := parse(s); !ok {
			if k != s {
				t.Fatalf("Key(%q) = %q, want it unchanged", s, k)
			}
			return
		}
		if p, err := netip.ParsePrefix(k); err == nil {
			if p.Bits() != 64 || p.Masked() != p {
				t.Fatalf("Key(%q) = %q, not a /64", s, k)
			}
		} else if a, err := netip.ParseAddr(k); err != nil || !a.Is4() {
			t.Fatalf("Key(%q) = %q, neither an IPv4 address nor a /64", s, k)
		}
	})
}

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Helpers of the attack suites: clients and connections from chosen
// loopback source addresses, raw requests, a process's resident memory.

// src is a loopback source address 127.0.a.b.
func src(a, b byte) net.IP { return net.IPv4(127, 0, a, b) }

// clientFrom is an HTTP client whose connections come from ip.
func clientFrom(ip net.IP, timeout time.Duration) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, DialContext: d.DialContext}}
}

// dialFrom opens a TCP connection from ip to the gateway.
func dialFrom(s *Stack, ip net.IP) (net.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	return d.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
}

// rawPut sends a PUT with a declared body of size bytes from ip, the body
// written in the background (so an answer before the body's end is read,
// as a client that does not wait would miss it), and returns the answer's
// status and headers, or the error that ended the exchange.
func rawPut(s *Stack, ip net.IP, path string, size int, headers ...string) (int, http.Header, error) {
	c, err := dialFrom(s, ip)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	var h strings.Builder
	fmt.Fprintf(&h, "PUT %s HTTP/1.1\r\nHost: fris.test\r\nContent-Length: %d\r\n", path, size)
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&h, "%s: %s\r\n", headers[i], headers[i+1])
	}
	h.WriteString("\r\n")
	if _, err := io.WriteString(c, h.String()); err != nil {
		return 0, nil, err
	}
	go func() {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := c.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
				return
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, nil, err
	}
	res.Body.Close()
	return res.StatusCode, res.Header, nil
}

// rssMiB is a started process's resident set size.
func rssMiB(t *testing.T, p *proc) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc to read the RSS of %s: %v", p.name, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kib, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib / 1024
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", p.cmd.Process.Pid)
	return 0
}

// legitUpload stores one patient with the connector's credentials from its
// own address and fails the test unless it is stored.
func legitUpload(t *testing.T, s *Stack, ip net.IP, id string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, s.URL+charite.spec()+"/pats/"+id, strings.NewReader(patientDoc(id, "Patient", "")))
	if err != nil {
		t.Error(err)
		return
	}
	req.Header.Set("Authorization", basic(charite.user, charite.pass))
	req.Header.Set("Content-Type", "application/xml")
	res, err := clientFrom(ip, 30*time.Second).Do(req)
	if err != nil {
		t.Errorf("the connector's upload %s: %v", id, err)
		return
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		t.Errorf("the connector's upload %s = %d %s, want 201 or 200", id, res.StatusCode, b)
	}
}

// legitRead reads the registry from ip and fails the test unless it is
// answered.
func legitRead(t *testing.T, s *Stack, ip net.IP) {
	t.Helper()
	res, err := clientFrom(ip, 30*time.Second).Get(s.URL + mdr + "/namespaces")
	if err != nil {
		t.Errorf("another host's read: %v", err)
		return
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("another host's read = %d, want 200", res.StatusCode)
	}
}

// raiseNoFile lifts the test process's open-file limit to n where the hard
// limit allows, and skips the test where it does not.
func raiseNoFile(t *testing.T, n uint64) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if l.Cur >= n {
		return
	}
	if l.Max < n {
		t.Skipf("the open-file limit %d is below %d", l.Max, n)
	}
	l.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
}

// rawPut2 is rawPut with the body given.
func rawPut2(s *Stack, ip net.IP, path, body string, headers ...string) (int, http.Header, error) {
	return rawPutWithin(s, ip, 30*time.Second, path, body, headers...)
}

// rawPutWithin is rawPut2 with a client timeout of d.
func rawPutWithin(s *Stack, ip net.IP, d time.Duration, path, body string, headers ...string) (int, http.Header, error) {
	req, err := http.NewRequest(http.MethodPut, s.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := clientFrom(ip, d).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header, nil
}

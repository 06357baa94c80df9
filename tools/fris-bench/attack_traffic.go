package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// legitimate is the traffic whose service is measured: one user signing in
// again and again (login page, form, code exchange with the client's
// secret), keeping its cookies as a browser does, and one connector
// uploading new 5 KB patients, both from 127.0.0.1, each request on a new
// connection.
type legitimate struct {
	cfg    config
	user   *authClient
	upload *http.Client
	doc    *uploadDoc
	site   uploadSite
	run    string
	n      atomic.Int64
}

func newLegitimate(cfg config) (*legitimate, error) {
	template, err := os.ReadFile(cfg.uploadTemplate)
	if err != nil {
		return nil, err
	}
	doc, err := newUploadDoc(template, cfg.uploadDocBytes)
	if err != nil {
		return nil, err
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	// Every request on a new connection, as a newcomer's: a kept-alive
	// connection would slip past an attack on the accept queue.
	fresh := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	user := newAuthClient(cfg.gateway)
	user.hc.Jar = jar
	user.hc.Transport = fresh
	return &legitimate{
		cfg: cfg, user: user, doc: doc, site: uploadSites(cfg)[0],
		upload: &http.Client{Timeout: 30 * time.Second, Transport: fresh},
		run:    strconv.FormatInt(time.Now().UnixNano()%1e10, 10),
	}, nil
}

func (l *legitimate) close() {
	l.user.close()
	l.upload.CloseIdleConnections()
}

func (l *legitimate) signIn(ctx context.Context) error {
	_, err := l.user.signIn(ctx, l.cfg.creds)
	return err
}

func (l *legitimate) uploadOne(ctx context.Context) error {
	id := fmt.Sprintf("L%s-%08d", l.run, l.n.Add(1))
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, l.site.base+id, bytes.NewReader(l.doc.with(id)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", l.site.auth)
	req.Header.Set("Content-Type", "application/xml")
	body, res, err := do(l.upload, req)
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("upload: %s: %.120s", res.Status, body)
	}
	return nil
}

// measure runs the legitimate traffic for d, one loop of each kind.
func (l *legitimate) measure(ctx context.Context, d time.Duration) (signIn, upload Legit) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	loop := func(out *Legit, do func(context.Context) error) {
		var took []time.Duration
		for ctx.Err() == nil {
			start := time.Now()
			// Each request may finish after the interval: it is measured whole.
			err := do(context.WithoutCancel(ctx))
			took = append(took, time.Since(start))
			if err != nil {
				out.Failed++
				if len(out.Failures) < 3 {
					out.Failures = append(out.Failures, err.Error())
				}
				// A refused user retries as a person would, not in a tight loop.
				sleep(ctx, 100*time.Millisecond)
				continue
			}
			out.OK++
		}
		out.Latency = latency(took)
	}
	var wg sync.WaitGroup
	wg.Go(func() { loop(&signIn, l.signIn) })
	wg.Go(func() { loop(&upload, l.uploadOne) })
	wg.Wait()
	return signIn, upload
}

// slowConnections holds up to -attack-slow-conns connections from one
// address, each sending a request's headers and then a byte of its body
// every few seconds; a connection the gateway closes is opened again.
func slowConnections(ctx context.Context, cfg config, t *tally) error {
	raiseFileLimit(cfg.attackSlowConns + 1024)
	u, err := url.Parse(cfg.gateway)
	if err != nil {
		return err
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attackSource(16, 0))}, Timeout: 5 * time.Second}
	head := "PUT /dktk/sites/x_teiler/t/pats/slow HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/xml\r\nContent-Length: 1000000\r\n\r\n"
	var wg sync.WaitGroup
	for range cfg.attackSlowConns {
		wg.Go(func() {
			for ctx.Err() == nil {
				c, err := d.DialContext(ctx, "tcp", u.Host)
				if err != nil {
					t.answer(0, err)
					sleep(ctx, time.Second)
					continue
				}
				t.sent.Add(1)
				stop := context.AfterFunc(ctx, func() { c.Close() })
				_, err = c.Write([]byte(head))
				for err == nil && ctx.Err() == nil {
					sleep(ctx, 3*time.Second)
					_, err = c.Write([]byte("<"))
				}
				stop()
				c.Close()
				sleep(ctx, 200*time.Millisecond)
			}
		})
	}
	wg.Wait()
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// raiseFileLimit lifts the soft limit on open files towards n (up to the
// hard limit), so the slow attack can hold its connections.
func raiseFileLimit(n int) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur >= uint64(n) {
		return
	}
	l.Cur = min(uint64(n), l.Max)
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

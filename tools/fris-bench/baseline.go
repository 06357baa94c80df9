package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// page is one path's answer as the gateway gave it.
type page struct {
	path        string
	contentType string
	body        []byte
	cacheHit    bool // the gateway said X-Cache: hit
}

// capture GETs url once, with header, and keeps the body and Content-Type
// of a 200.
func capture(ctx context.Context, u string, header http.Header) (page, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return page{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		return page{}, fmt.Errorf("GET %s: %w", u, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return page{}, fmt.Errorf("GET %s: %w", u, err)
	}
	if res.StatusCode != http.StatusOK {
		return page{}, fmt.Errorf("GET %s: %s: %.200s", u, res.Status, body)
	}
	return page{contentType: res.Header.Get("Content-Type"), body: body, cacheHit: res.Header.Get("X-Cache") == "hit"}, nil
}

// baseline is the plain net/http server the gateway is measured against.
type baseline struct {
	URL string
	srv *http.Server
}

// startBaseline serves each page at its path on 127.0.0.1:0, one handler per
// path writing the captured bytes: no routing library, no middleware.
func startBaseline(pages []page) (*baseline, error) {
	handlers := make(map[string]http.Handler, len(pages))
	for _, p := range pages {
		u, err := url.Parse(p.path)
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", p.path, err)
		}
		handlers[u.RequestURI()] = staticHandler(p.contentType, p.body)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h, ok := handlers[r.URL.RequestURI()]; ok {
				h.ServeHTTP(w, r)
				return
			}
			http.NotFound(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(lis) }()
	return &baseline{URL: "http://" + lis.Addr().String(), srv: srv}, nil
}

// staticHandler writes body with the given Content-Type and an explicit
// Content-Length (as the gateway sends one; net/http would chunk a body
// this size otherwise).
func staticHandler(contentType string, body []byte) http.Handler {
	n := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("Content-Length", n)
		_, _ = w.Write(body)
	})
}

func (b *baseline) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.srv.Shutdown(ctx)
}

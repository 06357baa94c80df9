// Package routes maps the documented REST paths onto the services. One
// file per group registers its paths and holds its handlers: auth.go
// (group A, the identity provider), mdr.go (group B, the registry),
// upload.go (group C), broker.go with broker_banks.go,
// broker_connector.go and researcher.go (group D). This file holds what
// every group uses: the Mux they register on, method dispatch, prefix
// rewriting, the one request body reader, and what passes from an HTTP
// request into a gRPC call (the client's Authorization header, header
// values as proto strings).
//
// Groups A, B and the researcher API forward to grpc-gateway's generated
// mux, whose paths are the protos' google.api.http rules; the gateway's
// route table must serve exactly those (a test in package app checks it).
// The banks' API, the central upload and the login page are written by
// hand against the services' plain gRPC methods.
package routes

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/httpx"
	"fris.dev/gateway/internal/protobody"
)

// Mux is what registering a group's paths needs of an http.ServeMux. The
// gateway passes its ServeMux; a test passes a recorder to list the route
// table (docs/interface.md must name every pattern).
type Mux interface {
	Handle(pattern string, handler http.Handler)
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// methods dispatches by method: HEAD is served as GET; a method the path
// does not serve is 405 with Allow; an empty set is an unknown path (404).
// Errors are plain text, as the groups that use it (C, D) answer.
type methods map[string]http.Handler

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(m) == 0 {
		apierr.WriteText(w, http.StatusNotFound, "no such path")
		return
	}
	h, ok := m[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = m[http.MethodGet]
	}
	if !ok {
		allow := make([]string, 0, len(m)+1)
		for k := range m {
			allow = append(allow, k)
			if k == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
		sort.Strings(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		apierr.WriteText(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
		return
	}
	h.ServeHTTP(w, r)
}

// asGET lets HEAD through as GET; net/http drops the body of HEAD responses.
func asGET(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.Clone(r.Context())
			r.Method = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

// rewritePrefix hands grpc-gateway's mux, whose rules are written for a
// group's canonical prefix, a request made under the configured one.
func rewritePrefix(from, to string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = to + strings.TrimPrefix(r.URL.Path, from)
		if r.URL.RawPath != "" {
			r2.URL.RawPath = to + strings.TrimPrefix(r.URL.RawPath, from)
		}
		next.ServeHTTP(w, r2)
	})
}

// canonical is handler h of a group whose grpc-gateway rules are written
// for canonicalPrefix, as served under prefix.
func canonical(prefix, canonicalPrefix string, h http.Handler) http.Handler {
	if prefix == canonicalPrefix {
		return h
	}
	return rewritePrefix(prefix, canonicalPrefix, h)
}

// errorWriter answers an error in a group's format: apierr.WriteJSON or
// apierr.WriteText.
type errorWriter func(w http.ResponseWriter, httpStatus int, description string)

// readBody reads a request body whole, within the gateway's limit
// (httpx.LimitBody), so that an oversized body is 413 and a broken one
// 400, answered with fail; ok is false when it has answered. A body the
// gateway has no memory for now (httpx.BodyMemory) is 503 with
// Retry-After, one that arrives too slowly (httpx.BodyRate) 408, one
// whose text is not UTF-8 (httpx.CheckBodyText) 400. Routes
// whose callers have credentials call it only once those have been
// checked (docs/security.md, "Limits").
func readBody(w http.ResponseWriter, r *http.Request, fail errorWriter) (body []byte, ok bool) {
	body, err := readAll(r.Body, r.ContentLength)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			fail(w, http.StatusRequestEntityTooLarge, "request body larger than "+strconv.FormatInt(tooBig.Limit, 10)+" bytes")
		case errors.Is(err, httpx.ErrBodyMemory):
			w.Header().Set("Retry-After", httpx.BodyMemoryRetry)
			fail(w, http.StatusServiceUnavailable, httpx.ErrBodyMemory.Error())
		case errors.Is(err, httpx.ErrBodyTooSlow):
			w.Header().Set("Connection", "close")
			fail(w, http.StatusRequestTimeout, httpx.ErrBodyTooSlow.Error())
		case errors.Is(err, httpx.ErrNotUTF8):
			fail(w, http.StatusBadRequest, httpx.ErrNotUTF8.Error())
		default:
			fail(w, http.StatusBadRequest, "reading the request body failed")
		}
		return nil, false
	}
	return body, true
}

// readAll reads r whole. With a declared length it reads into one slice
// of that size, where io.ReadAll would grow and copy its buffer up to
// twice the body's size.
func readAll(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, declared)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	// net/http ends a body at its Content-Length; whatever else a reader
	// says (an error past the limit) is appended or reported.
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return append(b, rest...), nil
}

// limitBody caps a route's body below the gateway's -max-body (group A's
// -max-auth-body): readBody answers 413 past it, and a declared length
// past it is refused at once, in JSON.
func limitBody(max int64, next http.Handler) http.Handler {
	if max <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			apierr.WriteJSON(w, http.StatusRequestEntityTooLarge, "request body larger than "+strconv.FormatInt(max, 10)+" bytes")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// bodyRewrite turns an admitted body (form: it came as an HTML form) into
// what grpc-gateway reads: JSON, or the request message itself
// (protobody); on failure it has answered and ok is false.
type bodyRewrite func(w http.ResponseWriter, r *http.Request, b []byte, form bool) (body io.ReadCloser, ok bool)

// jsonBody admits JSON bodies (application/json in any charset, or no
// Content-Type at all) for grpc-gateway and, when rewrite is not nil, HTML
// form bodies, which standard OAuth clients send and rewrite turns into
// JSON. Anything else is 415. The body is read whole here (within the
// gateway's limit) so an oversized one is 413, not a decoding error; an
// empty body goes on empty for the service to refuse.
func jsonBody(rewrite bodyRewrite, next http.Handler) http.Handler {
	want := "application/json"
	if rewrite != nil {
		want += " or application/x-www-form-urlencoded"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form := false
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, err := mime.ParseMediaType(ct)
			switch {
			case err != nil:
				apierr.WriteJSON(w, http.StatusUnsupportedMediaType, "Content-Type must be "+want)
				return
			case mt == "application/json":
			case mt == "application/x-www-form-urlencoded" && rewrite != nil:
				form = true
			default:
				apierr.WriteJSON(w, http.StatusUnsupportedMediaType, "Content-Type must be "+want)
				return
			}
		}
		b, ok := readBody(w, r, apierr.WriteJSON)
		if !ok {
			return
		}
		body, size := io.ReadCloser(io.NopCloser(bytes.NewReader(b))), int64(len(b))
		if rewrite != nil {
			if body, ok = rewrite(w, r, b, form); !ok {
				return
			}
			if protobody.Decoder(body) != nil {
				size = -1 // a message, not bytes
			}
		}
		r2 := r.Clone(r.Context())
		r2.Header.Set("Content-Type", "application/json")
		r2.Body = body
		r2.ContentLength = size
		next.ServeHTTP(w, r2)
	})
}

// headerString is a request header's value for a proto string field,
// which must be UTF-8 (the gRPC client refuses to marshal anything else,
// a 500): bytes that are not become U+FFFD.
func headerString(r *http.Request, name string) string {
	return strings.ToValidUTF8(r.Header.Get(name), "\uFFFD")
}

// forwardingCtx is the context of a call for a client whose credentials
// the service checks itself (banks' tokens, sites' Basic credentials): the
// Authorization header travels unchanged, with the request id, under the
// gateway's deadline. A header gRPC metadata cannot carry (bytes outside
// printable ASCII) cannot hold a credential FRIS issued, so it is dropped
// and the service answers as for a missing one, instead of the call failing
// with a 500.
func forwardingCtx(r *http.Request, timeout time.Duration) (context.Context, context.CancelFunc) {
	md := metadata.Pairs("x-request-id", httpx.RequestID(r.Context()))
	if a := r.Header.Get("Authorization"); a != "" && MetadataSafe(a) {
		md.Set("authorization", a)
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	return metadata.NewOutgoingContext(ctx, md), cancel
}

// MetadataSafe reports whether s can travel as a gRPC metadata value
// (printable ASCII only).
func MetadataSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

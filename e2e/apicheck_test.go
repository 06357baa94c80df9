package e2e

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The API reference cannot drift from the server: every response the
// tests' HTTP clients receive from the gateway is checked against the
// OpenAPI document the gateway serves (gateway/internal/apidoc), and a
// response whose status, headers or body the document does not describe
// fails the test that received it.

var apiDoc struct {
	once   sync.Once
	router routers.Router
	// notAPI are the document's x-fris-not-api patterns: browser pages
	// it leaves out on purpose.
	notAPI []string
	err    error
}

// apiRouter loads the document once per run.
func apiRouter() (routers.Router, error) {
	apiDoc.once.Do(func() {
		b, err := os.ReadFile(filepath.Join(repoRoot, "gateway/internal/apidoc/openapi.json"))
		if err != nil {
			apiDoc.err = err
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(b)
		if err != nil {
			apiDoc.err = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			apiDoc.err = fmt.Errorf("the OpenAPI document is invalid: %w", err)
			return
		}
		list, _ := doc.Extensions["x-fris-not-api"].([]any)
		for _, p := range list {
			if s, ok := p.(string); ok {
				apiDoc.notAPI = append(apiDoc.notAPI, s)
			}
		}
		apiDoc.router, apiDoc.err = gorillamux.NewRouter(doc)
	})
	return apiDoc.router, apiDoc.err
}

func init() {
	// Bodies the document describes as text of some kind: the schema then
	// checks the string. XML must also be well-formed, with the root
	// element the schema names.
	for _, ct := range []string{"text/html", "text/javascript", "application/openmetrics-text", "application/pdf"} {
		openapi3filter.RegisterBodyDecoder(ct, textBody)
	}
	openapi3filter.RegisterBodyDecoder("application/xml", xmlBody)
}

func textBody(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}

func xmlBody(r io.Reader, _ http.Header, schema *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var root string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed XML: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root == "" {
		return nil, errors.New("XML without a root element")
	}
	if schema != nil && schema.Value != nil && schema.Value.XML != nil && schema.Value.XML.Name != "" &&
		!strings.EqualFold(schema.Value.XML.Name, root) {
		return nil, fmt.Errorf("XML root %q, the document says %q", root, schema.Value.XML.Name)
	}
	return string(b), nil
}

// apiCheck is an http.RoundTripper that checks each response against the
// document and notes what does not match; the test fails with the notes
// when it ends.
type apiCheck struct {
	next http.RoundTripper
	// prefixes maps a stack's non-default path prefixes to the defaults
	// the document is written with.
	prefixes map[string]string
	// gateway, when set, is the only host:port checked: a stack's client
	// also reaches the services' operations ports, which the document
	// does not describe.
	gateway string
	// authShaped: the stack's -auth-answers is not the default, so group
	// A's answers carry fewer names (or an envelope) than the document,
	// which describes the default; their bodies are not checked.
	authShaped bool
	mu         sync.Mutex
	problems   []string
}

// checked wraps next (nil: the default transport) so that every response
// is checked against the document, and fails t at its end if one did not
// match. gatewayArgs name the stack's prefixes.
func checked(t *testing.T, next http.RoundTripper, gatewayArgs []string) http.RoundTripper {
	t.Helper()
	if next == nil {
		next = http.DefaultTransport
	}
	c := &apiCheck{next: next, prefixes: map[string]string{}}
	defaults := map[string]string{"-auth-prefix": "/oauth2", "-mdr-prefix": "/v3/api/mdr", "-upload-prefix": "/dktk", "-broker-prefix": "/broker/rest"}
	for i := 0; i+1 < len(gatewayArgs); i++ {
		if def, ok := defaults[gatewayArgs[i]]; ok {
			c.prefixes[strings.TrimRight(gatewayArgs[i+1], "/")] = def
		}
		if gatewayArgs[i] == "-auth-answers" && gatewayArgs[i+1] != "both" {
			c.authShaped = true
		}
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.problems {
			t.Errorf("response differs from the OpenAPI document: %s", p)
		}
	})
	return c
}

func (c *apiCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return res, nil // the caller sees the short body and decides
	}
	if problem := c.check(req, res, body); problem != "" {
		c.mu.Lock()
		c.problems = append(c.problems, problem)
		c.mu.Unlock()
	}
	return res, nil
}

// transportLimit tells the gateway's answers for any path when a client
// holds too much of it: too many requests in flight from its address
// (429), a body too slow (408), the body budget spent (503).
func transportLimit(status int, body []byte) bool {
	switch status {
	case http.StatusTooManyRequests:
		return bytes.Contains(body, []byte("requests in flight from your address"))
	case http.StatusRequestTimeout:
		return bytes.Contains(body, []byte("request body arrived too slowly"))
	case http.StatusServiceUnavailable:
		return bytes.Contains(body, []byte("receiving too many request bodies"))
	}
	return false
}

// check says how the response differs from the document, or "".
func (c *apiCheck) check(req *http.Request, res *http.Response, body []byte) string {
	if c.gateway != "" && req.URL.Host != c.gateway {
		return ""
	}
	router, err := apiRouter()
	if err != nil {
		return err.Error()
	}
	// Not checked, on purpose:
	switch {
	case req.Method == http.MethodHead:
		// HEAD is GET without a body ("served wherever GET is").
		return ""
	case req.Method == http.MethodOptions:
		// CORS preflight, answered by the CORS layer for every path.
		return ""
	case res.StatusCode == http.StatusRequestHeaderFieldsTooLarge:
		// Written by net/http before any route, for any path.
		return ""
	case transportLimit(res.StatusCode, body):
		// What one address may hold (docs/security.md, "Limits"): the
		// document's common rules, for any path.
		return ""
	case notAPI(req.URL.Path):
		// Browser pages (the Explorer), which the document leaves out.
		return ""
	case c.authShaped && res.StatusCode == http.StatusOK && strings.HasPrefix(req.URL.Path, "/oauth2/"):
		// Another answer shape than the document's (see authShaped).
		return ""
	}
	lookup := req.Clone(req.Context())
	var moved bool
	lookup.URL.Path, moved = c.canonical(req.URL.Path)
	lookup.URL.RawPath, _ = c.canonical(req.URL.RawPath)
	route, params, err := router.FindRoute(lookup)
	if moved {
		// A default prefix this stack moved elsewhere: not served here.
		route, err = nil, routers.ErrPathNotFound
	}
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		// Unknown paths answer 404 (the common rules), in any group's format.
		if res.StatusCode == http.StatusNotFound {
			return ""
		}
		return fmt.Sprintf("%s %s -> %d: the path is not in the document", req.Method, req.URL.Path, res.StatusCode)
	case errors.Is(err, routers.ErrMethodNotAllowed):
		if res.StatusCode == http.StatusMethodNotAllowed {
			return ""
		}
		return fmt.Sprintf("%s %s -> %d: the method is not in the document", req.Method, req.URL.Path, res.StatusCode)
	case err != nil:
		return fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: lookup, PathParams: params, Route: route},
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		msg := err.Error()
		if len(msg) > 600 {
			msg = msg[:600] + "..."
		}
		snippet := string(body)
		if len(snippet) > 200 {
			snippet = snippet[:200] + "..."
		}
		return fmt.Sprintf("%s %s -> %d (%s): %s; body %q", req.Method, req.URL.Path, res.StatusCode, route.Path, msg, snippet)
	}
	return ""
}

// canonical rewrites a non-default prefix to the default one; moved says
// that p is under a default prefix the stack does not serve.
func (c *apiCheck) canonical(p string) (_ string, moved bool) {
	under := func(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
	for from, to := range c.prefixes {
		if under(p, from) {
			return to + strings.TrimPrefix(p, from), false
		}
	}
	for _, to := range c.prefixes {
		if under(p, to) {
			return p, true
		}
	}
	return p, false
}

// notAPI tells whether p is one of the document's x-fris-not-api patterns
// (ServeMux syntax: "/{$}" the root alone, a trailing "/" a subtree).
func notAPI(p string) bool {
	for _, pat := range apiDoc.notAPI {
		if exact, ok := strings.CutSuffix(pat, "{$}"); ok {
			if p == exact {
				return true
			}
			continue
		}
		if p == pat || strings.HasSuffix(pat, "/") && strings.HasPrefix(p, pat) {
			return true
		}
	}
	return false
}

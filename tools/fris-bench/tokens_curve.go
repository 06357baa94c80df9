package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// The auth suite's flows of clients an operator set to another algorithm
// (-es256-client-id) or that the bench build of auth answers with signing
// stubbed out (-null-client-id): both are OAuth-shaped refreshes, like
// refresh-oauth, so the three differ only in how the access token is
// signed (RS256, ES256, a stub of no measurable cost); the refresh token
// is HS256 under the key derived from the refresh key in all three.
const (
	flowRefreshES256 = "refresh-es256"
	flowRefreshNull  = "refresh-null"
	// flowSignatureES256 is the signature flow for the ES256 client: a
	// request of the spec's shape, so its access and id tokens are ES256
	// and its refresh token RS256 (docs/decisions.md, "What a token
	// response carries").
	flowSignatureES256 = "signature-es256"
)

// curveFlows are the flows that need a client of their own.
var curveFlows = []string{flowRefreshES256, flowRefreshNull}

// oauthFlow reports whether flow's refreshes are OAuth-shaped (grant_type).
func oauthFlow(flow string) bool {
	return flow == flowRefreshOAuth || flow == flowRefreshES256 || flow == flowRefreshNull
}

// judged reports whether the crypto-limit target applies to flow: not to
// the OAuth-shaped refreshes, which make one RSA signature or none and are
// judged by their CPU per response against the spec-shaped refresh
// (RefreshComparison) instead, nor to the ES256 client's signature flow
// (one RSA signature), compared with the RS256 client's.
func judged(flow string) bool { return !oauthFlow(flow) && flow != flowSignatureES256 }

// flowClient is the client flow's sessions sign in with.
func (c config) flowClient(flow string) credentials {
	cr := c.creds
	switch flow {
	case flowRefreshES256, flowSignatureES256:
		cr.clientID = c.es256Client
	case flowRefreshNull:
		cr.clientID = c.nullClient
	}
	return cr
}

// writeProtocolCost compares the ES256 refresh with the stubbed one: the
// target is an ES256 response within 2× of the pure protocol cost.
func writeProtocolCost(w io.Writer, cs []RefreshComparison) {
	var es, null *RefreshComparison
	for i := range cs {
		switch cs[i].Name {
		case flowRefreshES256:
			es = &cs[i]
		case flowRefreshNull:
			null = &cs[i]
		}
	}
	if es == nil || null == nil || null.AuthCPU <= 0 || null.ServerCPU <= 0 {
		return
	}
	a, s := es.AuthCPU/null.AuthCPU, es.ServerCPU/null.ServerCPU
	verdict := "met"
	if s > 2 {
		verdict = "missed"
	}
	fmt.Fprintf(w, "\nES256 against the pure protocol cost (%s: the same response with the access token's signature stubbed out): auth CPU per response %.2f×, server CPU per response %.2f× the stub's; target within 2× (server): %s.\n", flowRefreshNull, a, s, verdict)
}

// parseTokenFlows sets c.tokenFlows from -token-flows and the clients
// given: a client given adds its flow; a flow named without its client is
// refused.
func (c *config) parseTokenFlows(spec string) error {
	for _, f := range strings.Split(spec, ",") {
		switch f = strings.TrimSpace(f); f {
		case flowRefresh, flowRefreshOAuth, flowSignature, flowRefreshES256, flowRefreshNull, flowSignatureES256:
			if !slices.Contains(c.tokenFlows, f) {
				c.tokenFlows = append(c.tokenFlows, f)
			}
		case "":
		default:
			return fmt.Errorf("-token-flows: unknown flow %q (have %s)", f, strings.Join(allFlows, ", "))
		}
	}
	for _, f := range [][2]string{{flowRefreshES256, c.es256Client}, {flowRefreshNull, c.nullClient}} {
		switch has := slices.Contains(c.tokenFlows, f[0]); {
		case f[1] != "" && !has:
			c.tokenFlows = append(c.tokenFlows, f[0])
		case f[1] == "" && has:
			return fmt.Errorf("-token-flows: %s needs its client (-es256-client-id, -null-client-id)", f[0])
		}
	}
	// The ES256 client's signature flow comes with the signature flow.
	switch has := slices.Contains(c.tokenFlows, flowSignatureES256); {
	case c.es256Client != "" && slices.Contains(c.tokenFlows, flowSignature) && !has:
		c.tokenFlows = append(c.tokenFlows, flowSignatureES256)
	case c.es256Client == "" && has:
		return fmt.Errorf("-token-flows: %s needs its client (-es256-client-id)", flowSignatureES256)
	}
	if len(c.tokenFlows) == 0 {
		return errors.New("-token-flows: name at least one flow")
	}
	return nil
}

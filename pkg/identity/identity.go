// Package identity carries the caller the gateway verified to the services,
// as gRPC metadata (and the one fact about the gateway itself a service
// needs: the auth prefix). Only the gateway sets it: its header matcher never
// lets a client send these keys itself.
package identity

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"
)

// Metadata keys set by the gateway.
const (
	KeySubject = "x-fris-subject"
	KeyScope   = "x-fris-scope"
	KeyClient  = "x-fris-client"
	// KeyAuthPrefix is the path prefix the gateway publishes group A under
	// (its -auth-prefix), so the auth service's discovery document names
	// the paths clients actually reach.
	KeyAuthPrefix = "x-fris-auth-prefix"
	// KeyClientAddr is the address the gateway's HTTP client connected
	// from (its RemoteAddr, or what the gateway's trusted proxies wrote in
	// X-Forwarded-For; never a header the client itself sent), for the
	// services' audit log and abuse limits (pkg/ratelimit).
	KeyClientAddr = "x-fris-client-addr"
)

// Role scopes: what a token must carry beyond a valid signature.
// Operators grant them (auth set-scopes, create-user -scopes, or the auth
// service's -register-scopes for self-registered users); clients'
// own tokens (client_credentials) never carry them.
const (
	// ScopeResearcher admits the broker's researcher API: creating and
	// releasing inquiries to sites and reading their replies.
	ScopeResearcher = "broker:researcher"
	// ScopeUserSearch admits the auth service's users/search, which lists
	// names and email addresses.
	ScopeUserSearch = "users:search"
	// ScopeOperator admits the operator views of the FRIS Explorer: the
	// admin RPCs the gateway may call on an operator's behalf (banks,
	// upload status, monitoring, registry status; docs/security.md,
	// "Service-to-service trust"). The service checks it itself.
	ScopeOperator = "fris:operator"
	// ScopeUserAdmin admits a user administrator to the Explorer's users
	// view and the auth admin RPCs behind it, and nothing else an operator
	// may do. A user administrator acts only on users who hold neither this
	// role nor ScopeOperator and grants neither (the auth service checks),
	// so the role cannot escalate itself (docs/security.md).
	ScopeUserAdmin = "fris:user-admin"
)

// Privileged reports whether s is a role that administers others
// (ScopeOperator, ScopeUserAdmin): only an operator grants or takes it.
func Privileged(s string) bool { return s == ScopeOperator || s == ScopeUserAdmin }

// IsRoleScope reports whether s is a role scope, one only operators grant
// to users.
func IsRoleScope(s string) bool {
	switch s {
	case ScopeResearcher, ScopeUserSearch, ScopeOperator, ScopeUserAdmin:
		return true
	}
	return false
}

// ScopeToken reports whether s is a scope-token of RFC 6749 3.3: one or
// more printable ASCII characters other than space, '"' and '\\'
// (%x21 / %x23-5B / %x5D-7E). Only such a scope can be granted: a scope
// travels space-separated in the token's claim, and as gRPC metadata,
// which carries printable ASCII only. Case counts (scopes match exactly),
// so FRIS:OPERATOR is a scope-token that opens nothing.
func ScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// ScopeTokenRule says what ScopeToken admits, for refusals.
const ScopeTokenRule = `a scope is printable ASCII without space, '"' or '\' (an RFC 6749 scope-token)`

// Identity is a verified bearer token's subject and scopes; zero means
// anonymous.
type Identity struct {
	Subject string
	Client  string
	Scopes  []string
}

// Anonymous reports whether no token was verified.
func (i Identity) Anonymous() bool { return i.Subject == "" }

// HasScope reports whether the token grants scope s.
func (i Identity) HasScope(s string) bool {
	for _, x := range i.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// Pairs renders the identity as metadata pairs for an outgoing call.
func (i Identity) Pairs() []string {
	if i.Anonymous() {
		return nil
	}
	p := []string{KeySubject, i.Subject}
	if i.Client != "" {
		p = append(p, KeyClient, i.Client)
	}
	for _, s := range i.Scopes {
		// A scope stored before scopes were checked (ScopeToken) may
		// still be in a token: it grants nothing, and gRPC would refuse
		// the whole call for it (metadata is printable ASCII).
		if ScopeToken(s) {
			p = append(p, KeyScope, s)
		}
	}
	return p
}

// FromIncoming reads the identity a service was called with.
// It reads only its keys: FromIncomingContext would copy every key of the
// call's metadata, on every call of every service.
func FromIncoming(ctx context.Context) Identity {
	id := Identity{Subject: Incoming(ctx, KeySubject), Client: Incoming(ctx, KeyClient)}
	if id.Subject == "" {
		return Identity{}
	}
	for _, s := range metadata.ValueFromIncomingContext(ctx, KeyScope) {
		id.Scopes = append(id.Scopes, strings.Fields(s)...)
	}
	return id
}

// Incoming returns the first value of an incoming metadata key.
func Incoming(ctx context.Context, key string) string {
	if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

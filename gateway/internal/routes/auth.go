package routes

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	"fris.dev/pkg/authheader"
	"fris.dev/pkg/identity"
	authv1 "fris.dev/proto/auth/v1"
)

// CanonicalAuthPrefix is the prefix the auth service's HTTP rules are
// written for.
const CanonicalAuthPrefix = "/oauth2"

// DiscoveryPath is the OpenID Provider metadata; it is never prefixed.
const DiscoveryPath = "/.well-known/openid-configuration"

// AuthorizePath is the browser login below the prefix.
const AuthorizePath = "/authorize"

// loginPaths are the pages the login handler serves below the prefix: the
// authorize page, and the self-service pages beside it (forgot password,
// the mailed reset and verification links; login.ForgotPath, ResetPath,
// VerifyPath).
var loginPaths = []string{AuthorizePath, "/forgot", "/reset", "/verify"}

// passkeyRoutes are the login handler's routes of the passkey sign-in: the
// ceremony's begin (login.PasskeyPath) and the page's script
// (login.PasskeyScript).
var passkeyRoutes = []string{"POST /passkey", "GET /passkey.js"}

// body kinds a POST route of group A accepts (see rewrite).
type bodyKind int

const (
	jsonOnly bodyKind = iota
	// tokenBody is the token endpoint's: JSON or an HTML form, and the
	// client may authenticate with HTTP Basic instead of in the body.
	tokenBody
	// revokeBody and introspectBody are the same for RFC 7009's and RFC
	// 7662's requests.
	revokeBody
	introspectBody
)

// message is the request a form body of kind becomes; nil for JSON only.
func (k bodyKind) message() proto.Message {
	switch k {
	case tokenBody:
		return &authv1.TokenRequest{}
	case revokeBody:
		return &authv1.RevokeRequest{}
	case introspectBody:
		return &authv1.IntrospectRequest{}
	}
	return nil
}

// authRoute is one group A path below the prefix.
type authRoute struct {
	method, path string
	bearer       bool     // a verified bearer token is required and forwarded
	scope        string   // with bearer: a scope the token must carry
	noStore      bool     // the response carries secrets or personal data
	body         bodyKind // POST only
}

var authRoutes = []authRoute{
	{method: http.MethodGet, path: "/clients"},
	{method: http.MethodGet, path: "/certs"},
	{method: http.MethodGet, path: "/jwks"},
	{method: http.MethodGet, path: "/tokeninfo", bearer: true, noStore: true},
	{method: http.MethodGet, path: "/userinfo", bearer: true, noStore: true},
	// Lists names and email addresses: only for tokens an operator
	// granted it to (docs/security.md, Roles).
	{method: http.MethodGet, path: "/users/search", bearer: true, scope: identity.ScopeUserSearch, noStore: true},
	{method: http.MethodPost, path: "/token", noStore: true, body: tokenBody},
	{method: http.MethodPost, path: "/access_token", noStore: true, body: tokenBody},
	{method: http.MethodPost, path: "/sign_request", noStore: true},
	{method: http.MethodPost, path: "/signRequest", noStore: true},
	{method: http.MethodPost, path: "/register", noStore: true},
	{method: http.MethodPost, path: "/revoke", noStore: true, body: revokeBody},
	{method: http.MethodPost, path: "/introspect", noStore: true, body: introspectBody},
}

// Auth registers group A under prefix. gw is grpc-gateway's mux holding the
// AuthService handlers (rules written for CanonicalAuthPrefix); login serves
// GET and POST of the authorize page. A nil gw means the auth service is
// not configured: every group A path answers 503.
// maxBody bounds every POST body of the group (-max-auth-body): 413
// beyond.
func Auth(mux Mux, prefix string, gw http.Handler, v authn.Verifier, login http.Handler, maxBody int64) {
	prefix = strings.TrimRight(prefix, "/")
	if gw == nil {
		off := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			apierr.WriteJSON(w, http.StatusServiceUnavailable, "the auth service is not configured")
		})
		for _, rt := range authRoutes {
			mux.Handle(rt.method+" "+prefix+rt.path, off)
		}
		for _, path := range loginPaths {
			mux.Handle("GET "+prefix+path, off)
			mux.Handle("POST "+prefix+path, off)
		}
		for _, rt := range passkeyRoutes {
			method, path, _ := strings.Cut(rt, " ")
			mux.Handle(method+" "+prefix+path, off)
		}
		mux.Handle("GET "+DiscoveryPath, off)
		mux.Handle("GET "+prefix+DiscoveryPath, off)
		return
	}
	h := canonical(prefix, CanonicalAuthPrefix, gw)
	for _, rt := range authRoutes {
		var rh http.Handler = h
		switch {
		case rt.bearer && rt.scope != "":
			rh = authn.Required(v, authn.Scope(rt.scope, "", rh))
		case rt.bearer:
			rh = authn.Required(v, rh)
		case rt.method == http.MethodPost:
			rh = limitBody(maxBody, jsonBody(rt.body.rewrite(), rh))
		}
		if rt.noStore {
			rh = noStore(rh)
		}
		if rt.method == http.MethodGet {
			rh = asGET(rh)
		}
		mux.Handle(rt.method+" "+prefix+rt.path, rh)
	}
	for _, path := range loginPaths {
		mux.Handle("GET "+prefix+path, login)
		mux.Handle("POST "+prefix+path, login) // bounded by its own MaxForm, with a page
	}
	for _, rt := range passkeyRoutes {
		method, path, _ := strings.Cut(rt, " ")
		mux.Handle(method+" "+prefix+path, login)
	}
	discovery := asGET(withAuthPrefix(prefix, gw))
	mux.Handle("GET "+DiscoveryPath, discovery)
	// Also below the prefix, where the Samply auth client looks for it
	// (<host>/oauth2/.well-known/openid-configuration).
	mux.Handle("GET "+prefix+DiscoveryPath, http.StripPrefix(prefix, discovery))
}

type authPrefixKey struct{}

// withAuthPrefix tells the discovery call (see AuthPrefix) which prefix the
// endpoints it lists are served under.
func withAuthPrefix(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authPrefixKey{}, prefix)))
	})
}

// AuthPrefix is the group A prefix of a discovery request, "" on any other.
func AuthPrefix(ctx context.Context) string {
	p, _ := ctx.Value(authPrefixKey{}).(string)
	return p
}

// noStore keeps tokens and personal data out of every cache (RFC 6749 5.1).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// rewrite is how a POST body of kind reaches the service: nil (JSON as
// sent) for JSON only; for the OAuth endpoints a form becomes the
// equivalent JSON, and client_secret_basic credentials move into it.
func (k bodyKind) rewrite() bodyRewrite {
	if k == jsonOnly {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request, b []byte, form bool) ([]byte, bool) {
		var err error
		if form && len(bytes.TrimSpace(b)) > 0 {
			if b, err = formToJSON(string(b), k.message()); err != nil {
				apierr.WriteJSON(w, http.StatusBadRequest, err.Error())
				return nil, false
			}
		}
		if b, err = basicClient(r.Header.Get("Authorization"), b, k.message()); err != nil {
			var ce clientAuthError
			if errors.As(err, &ce) {
				apierr.WriteOAuth(w, http.StatusUnauthorized, "invalid_client", err.Error())
			} else {
				apierr.WriteJSON(w, http.StatusBadRequest, err.Error())
			}
			return nil, false
		}
		return b, true
	}
}

// clientAuthError is a malformed Basic header: 401 invalid_client.
type clientAuthError string

func (e clientAuthError) Error() string { return string(e) }

// basicClient moves client_secret_basic credentials (RFC 6749 2.3.1) into
// the JSON body b of a request like msg (a token, revocation or
// introspection request, each with client_id and client_secret fields),
// where the service reads client_id and
// client_secret whichever way they came. The user and password of the
// Basic header are each form-urlencoded, as RFC 6749 2.3.1 asks (most
// libraries encode; a secret with '%' or '+' sent raw is not ours to
// guess). A request without a Basic header is left untouched, so the
// spec's JSON clients pay nothing for it. Credentials in both places are
// refused unless they agree: a client uses one method (RFC 6749 2.3).
func basicClient(authz string, b []byte, msg proto.Message) ([]byte, error) {
	user, pass, err := authheader.Basic(authz)
	switch {
	case errors.Is(err, authheader.ErrNotBasic):
		return b, nil
	case errors.Is(err, authheader.ErrNotBase64):
		return nil, clientAuthError("the Basic credentials are not base64")
	case err != nil:
		return nil, clientAuthError("the Basic credentials have no ':' between client ID and secret")
	}
	id, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	// Both go into proto strings, which must be UTF-8; no client FRIS
	// registers has an ID or secret that is not, so such credentials are
	// refused as malformed (before, protojson's error was a 400).
	if err1 != nil || err2 != nil || id == "" || !utf8.ValidString(id) || !utf8.ValidString(secret) {
		return nil, clientAuthError("the Basic credentials are not a form-urlencoded client ID and secret")
	}
	if len(bytes.TrimSpace(b)) > 0 {
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, msg); err != nil {
			return nil, errors.New("the body is not a " + string(msg.ProtoReflect().Descriptor().Name()))
		}
	}
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	idField, secretField := fields.ByName("client_id"), fields.ByName("client_secret")
	if (m.Get(idField).String() != "" && m.Get(idField).String() != id) || (m.Get(secretField).String() != "" && m.Get(secretField).String() != secret) {
		return nil, errors.New("client credentials both in the Authorization header and in the body, and they differ")
	}
	m.Set(idField, protoreflect.ValueOfString(id))
	m.Set(secretField, protoreflect.ValueOfString(secret))
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
}

// formToJSON fills msg's string fields from an urlencoded form, by each
// field's wire name (the proto name, e.g. client_id) or its JSON name
// (clientId), and renders msg as JSON. Unknown form fields are ignored, as
// unknown JSON fields are; a field sent twice is an error (RFC 6749 3.2).
func formToJSON(body string, msg proto.Message) ([]byte, error) {
	vals, err := url.ParseQuery(body)
	if err != nil {
		return nil, errors.New("malformed form body")
	}
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			continue
		}
		for _, name := range []string{string(fd.Name()), fd.JSONName()} {
			vs, ok := vals[name]
			if !ok {
				continue
			}
			if len(vs) > 1 {
				return nil, errors.New("form field " + name + " sent more than once")
			}
			m.Set(fd, protoreflect.ValueOfString(vs[0]))
			break
		}
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
}

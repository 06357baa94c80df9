package routes

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
	"fris.dev/gateway/internal/protobody"
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
// sent) for JSON only; for the OAuth endpoints a form becomes the request
// message, and client_secret_basic credentials move into it. A message goes
// to grpc-gateway as it is (protobody), not as JSON to be parsed again; a
// JSON body without Basic credentials goes as sent.
func (k bodyKind) rewrite() bodyRewrite {
	if k == jsonOnly {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request, b []byte, form bool) (io.ReadCloser, bool) {
		msg := k.message()
		parsed := form && len(bytes.TrimSpace(b)) > 0
		if parsed {
			if err := formToMessage(string(b), msg); err != nil {
				apierr.WriteJSON(w, http.StatusBadRequest, err.Error())
				return nil, false
			}
		}
		id, secret, basic, err := basicCredentials(r.Header.Get("Authorization"))
		switch {
		case err != nil:
			apierr.WriteOAuth(w, http.StatusUnauthorized, "invalid_client", err.Error())
			return nil, false
		case !basic && !parsed && (form || len(bytes.TrimSpace(b)) == 0):
			return io.NopCloser(bytes.NewReader(b)), true
		case !basic && !parsed:
			// JSON read once here rather than twice by grpc-gateway's
			// decoder (a json.Decoder's pass, then protojson's). What
			// protojson reads whole, grpc-gateway reads the same; what it
			// refuses goes on as sent, for grpc-gateway to answer as
			// before.
			if jsonpb.Unmarshal(b, msg) != nil {
				return io.NopCloser(bytes.NewReader(b)), true
			}
			return protobody.New(msg), true
		case !basic:
			return protobody.New(msg), true
		}
		if !form && len(bytes.TrimSpace(b)) > 0 {
			if err := jsonpb.Unmarshal(b, msg); err != nil {
				apierr.WriteJSON(w, http.StatusBadRequest, "the body is not a "+string(msg.ProtoReflect().Descriptor().Name()))
				return nil, false
			}
		}
		if err := basicClient(id, secret, msg); err != nil {
			apierr.WriteJSON(w, http.StatusBadRequest, err.Error())
			return nil, false
		}
		return protobody.New(msg), true
	}
}

// jsonpb reads request bodies as the gateway's grpc-gateway marshaler does.
var jsonpb = protojson.UnmarshalOptions{DiscardUnknown: true}

// clientAuthError is a malformed Basic header: 401 invalid_client.
type clientAuthError string

func (e clientAuthError) Error() string { return string(e) }

// basicCredentials reads client_secret_basic credentials (RFC 6749
// 2.3.1): the client ID and secret, and whether the header is Basic at all
// (a request without one is left as it came, so the spec's JSON clients pay
// nothing for it). The user and password of the Basic header are each
// form-urlencoded, as RFC 6749 2.3.1 asks (most libraries encode; a secret
// with '%' or '+' sent raw is not ours to guess). A malformed Basic header
// is a clientAuthError: 401 invalid_client.
func basicCredentials(authz string) (id, secret string, basic bool, err error) {
	user, pass, err := authheader.Basic(authz)
	switch {
	case errors.Is(err, authheader.ErrNotBasic):
		return "", "", false, nil
	case errors.Is(err, authheader.ErrNotBase64):
		return "", "", true, clientAuthError("the Basic credentials are not base64")
	case err != nil:
		return "", "", true, clientAuthError("the Basic credentials have no ':' between client ID and secret")
	}
	id, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	// Both go into proto strings, which must be UTF-8; no client FRIS
	// registers has an ID or secret that is not, so such credentials are
	// refused as malformed (before, protojson's error was a 400).
	if err1 != nil || err2 != nil || id == "" || !utf8.ValidString(id) || !utf8.ValidString(secret) {
		return "", "", true, clientAuthError("the Basic credentials are not a form-urlencoded client ID and secret")
	}
	return id, secret, true, nil
}

// basicClient moves client_secret_basic credentials into msg (a token,
// revocation or introspection request, each with client_id and
// client_secret fields), where the service reads client_id and
// client_secret whichever way they came. Credentials in both places are
// refused unless they agree: a client uses one method (RFC 6749 2.3).
func basicClient(id, secret string, msg proto.Message) error {
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	idField, secretField := fields.ByName("client_id"), fields.ByName("client_secret")
	if (m.Get(idField).String() != "" && m.Get(idField).String() != id) || (m.Get(secretField).String() != "" && m.Get(secretField).String() != secret) {
		return errors.New("client credentials both in the Authorization header and in the body, and they differ")
	}
	m.Set(idField, protoreflect.ValueOfString(id))
	m.Set(secretField, protoreflect.ValueOfString(secret))
	return nil
}

// formToMessage fills msg's string fields from an urlencoded form, by each
// field's wire name (the proto name, e.g. client_id) or its JSON name
// (clientId). Unknown form fields are ignored, as unknown JSON fields are;
// a field sent twice is an error (RFC 6749 3.2), and so is a value that is
// not UTF-8, which a proto string cannot hold.
func formToMessage(body string, msg proto.Message) error {
	vals, err := url.ParseQuery(body)
	if err != nil {
		return errors.New("malformed form body")
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
				return errors.New("form field " + name + " sent more than once")
			}
			if !utf8.ValidString(vs[0]) {
				return errors.New("form field " + name + " is not UTF-8")
			}
			m.Set(fd, protoreflect.ValueOfString(vs[0]))
			break
		}
	}
	return nil
}

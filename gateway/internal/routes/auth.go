package routes

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"fris.dev/gateway/internal/apierr"
	"fris.dev/gateway/internal/authn"
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

// body kinds a POST route accepts.
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
		mux.Handle("GET "+prefix+AuthorizePath, off)
		mux.Handle("POST "+prefix+AuthorizePath, off)
		mux.Handle("GET "+DiscoveryPath, off)
		mux.Handle("GET "+prefix+DiscoveryPath, off)
		return
	}
	h := gw
	if prefix != CanonicalAuthPrefix {
		h = rewritePrefix(prefix, CanonicalAuthPrefix, gw)
	}
	for _, rt := range authRoutes {
		var rh http.Handler = h
		switch {
		case rt.bearer && rt.scope != "":
			rh = authn.Required(v, authn.Scope(rt.scope, "", rh))
		case rt.bearer:
			rh = authn.Required(v, rh)
		case rt.method == http.MethodPost:
			rh = limitBody(maxBody, requestBody(rt.body, rh))
		}
		if rt.noStore {
			rh = noStore(rh)
		}
		if rt.method == http.MethodGet {
			rh = asGET(rh)
		}
		mux.Handle(rt.method+" "+prefix+rt.path, rh)
	}
	mux.Handle("GET "+prefix+AuthorizePath, login)
	mux.Handle("POST "+prefix+AuthorizePath, login) // bounded by its own MaxForm, with a page
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

// limitBody caps a route's body below the gateway's -max-body; the
// handler sees an *http.MaxBytesError past it and answers 413. A declared
// length past it is refused at once.
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

// noStore keeps tokens and personal data out of every cache (RFC 6749 5.1).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// requestBody admits JSON bodies (application/json in any charset, or no
// Content-Type at all) and, for the token endpoint, HTML form bodies, which
// standard OAuth clients send; a form becomes the equivalent JSON. Anything
// else is 415. The body is read whole here (within the gateway's limit) so
// an oversized one is 413, not a decoding error; an empty body goes on
// empty for the service to refuse.
func requestBody(kind bodyKind, next http.Handler) http.Handler {
	want := "application/json"
	if kind != jsonOnly {
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
			case mt == "application/x-www-form-urlencoded" && kind != jsonOnly:
				form = true
			default:
				apierr.WriteJSON(w, http.StatusUnsupportedMediaType, "Content-Type must be "+want)
				return
			}
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				apierr.WriteJSON(w, http.StatusRequestEntityTooLarge, "request body larger than "+strconv.FormatInt(tooBig.Limit, 10)+" bytes")
				return
			}
			apierr.WriteJSON(w, http.StatusBadRequest, "reading the request body failed")
			return
		}
		if form && len(bytes.TrimSpace(b)) > 0 {
			if b, err = formToJSON(string(b), kind.message()); err != nil {
				apierr.WriteJSON(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		if kind != jsonOnly {
			if b, err = basicClient(r.Header.Get("Authorization"), b, kind.message()); err != nil {
				var ce clientAuthError
				if errors.As(err, &ce) {
					apierr.WriteOAuth(w, http.StatusUnauthorized, "invalid_client", err.Error())
				} else {
					apierr.WriteJSON(w, http.StatusBadRequest, err.Error())
				}
				return
			}
		}
		r2 := r.Clone(r.Context())
		r2.Header.Set("Content-Type", "application/json")
		r2.Body = io.NopCloser(bytes.NewReader(b))
		r2.ContentLength = int64(len(b))
		next.ServeHTTP(w, r2)
	})
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
	scheme, cred, ok := strings.Cut(strings.TrimSpace(authz), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return b, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return nil, clientAuthError("the Basic credentials are not base64")
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return nil, clientAuthError("the Basic credentials have no ':' between client ID and secret")
	}
	id, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	if err1 != nil || err2 != nil || id == "" {
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

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Real clients, unchanged, against the real gateway: the Go OpenID Connect
// and OAuth 2.0 libraries (github.com/coreos/go-oidc/v3,
// golang.org/x/oauth2), and the requests the Samply auth client sends.

// issuerClient reaches the stack under its public issuer URL (Issuer,
// http://fris.test), as a deployed client would: every connection goes to
// the gateway, the Host stays the issuer's. Discovery and every endpoint it
// lists then work without rewriting URLs.
func issuerClient(t *testing.T, s *Stack) *http.Client {
	t.Helper()
	gw := strings.TrimPrefix(s.URL, "http://")
	var d net.Dialer
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: checked(t, &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, gw)
		}}, nil),
		// The login's redirect goes to the client's callback, which the
		// tests read instead of following.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// oidcSetup starts a stack with the demo client and user, and discovers it
// with go-oidc.
func oidcSetup(t *testing.T, o Options) (*Stack, context.Context, *oidc.Provider) {
	t.Helper()
	s := NewStack(t, o)
	seedAuth(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	ctx = oidc.ClientContext(ctx, issuerClient(t, s))
	ctx = context.WithValue(ctx, oauth2.HTTPClient, issuerClient(t, s))
	p, err := oidc.NewProvider(ctx, Issuer)
	if err != nil {
		t.Fatalf("discovery with go-oidc: %v", err)
	}
	return s, ctx, p
}

// authorizeVia sends the browser to the authorization URL a library built,
// signs in on the login page and returns the callback's query.
func authorizeVia(t *testing.T, s *Stack, authURL string) url.Values {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme+"://"+u.Host != Issuer || u.Path != oauth+"/authorize" {
		t.Fatalf("authorization URL %s is not the discovered endpoint", authURL)
	}
	c := browser(t)
	form := loginForm(t, s, c, u.RawQuery)
	form.Set("email", demoEmail)
	form.Set("password", demoPass)
	res, body := submit(t, s, c, form)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login = %d: %s", res.StatusCode, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.String() == "" || !strings.HasPrefix(loc.String(), callback) {
		t.Fatalf("redirect to %q, want the client's callback", res.Header.Get("Location"))
	}
	return loc.Query()
}

func oauthConfig(p *oidc.Provider, style oauth2.AuthStyle, scopes ...string) *oauth2.Config {
	ep := p.Endpoint()
	ep.AuthStyle = style
	return &oauth2.Config{ClientID: demoClient, ClientSecret: demoSecret, Endpoint: ep, RedirectURL: callback,
		Scopes: append([]string{oidc.ScopeOpenID}, scopes...)}
}

func TestCompatOIDCDiscovery(t *testing.T) {
	t.Parallel()
	_, _, p := oidcSetup(t, Options{})
	var d struct {
		Issuer     string   `json:"issuer"`
		AuthMeths  []string `json:"token_endpoint_auth_methods_supported"`
		Grants     []string `json:"grant_types_supported"`
		Userinfo   string   `json:"userinfo_endpoint"`
		SigningAlg []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client_secret_basic", "client_secret_post"} {
		if !contains(d.AuthMeths, want) {
			t.Errorf("token_endpoint_auth_methods_supported = %v, lacks %s", d.AuthMeths, want)
		}
	}
	for _, want := range []string{"authorization_code", "refresh_token", "client_credentials"} {
		if !contains(d.Grants, want) {
			t.Errorf("grant_types_supported = %v, lacks %s", d.Grants, want)
		}
	}
	if p.Endpoint().TokenURL != Issuer+oauth+"/token" || p.UserInfoEndpoint() != Issuer+oauth+"/userinfo" || !contains(d.SigningAlg, "RS256") {
		t.Fatalf("discovered %+v, token %s", d, p.Endpoint().TokenURL)
	}
}

// The browser code flow as an OpenID relying party does it: PKCE, state,
// nonce, client_secret_basic, id token verified against the discovered
// keys, userinfo, and refresh when the access token runs out.
func TestCompatOIDCCodeFlow(t *testing.T) {
	t.Parallel()
	// Access tokens that are "expired" at once for x/oauth2 (it renews
	// 10 s early), so its TokenSource refreshes on its own.
	s, ctx, p := oidcSetup(t, Options{AuthArgs: []string{"-access-ttl", "5s"}})
	verifier := p.Verifier(&oidc.Config{ClientID: demoClient})

	for _, tc := range []struct {
		name  string
		style oauth2.AuthStyle
		nonce string
	}{
		{"basic with nonce", oauth2.AuthStyleInHeader, "n-" + oauth2.GenerateVerifier()[:16]},
		{"post without nonce", oauth2.AuthStyleInParams, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := oauthConfig(p, tc.style)
			pkce := oauth2.GenerateVerifier()
			opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(pkce)}
			if tc.nonce != "" {
				opts = append(opts, oidc.Nonce(tc.nonce))
			}
			q := authorizeVia(t, s, cfg.AuthCodeURL("st-"+tc.name, opts...))
			if q.Get("state") != "st-"+tc.name {
				t.Fatalf("state = %q", q.Get("state"))
			}
			// Without the verifier, the code is refused.
			if _, err := cfg.Exchange(ctx, q.Get("code")); err == nil {
				t.Fatal("code exchanged without the PKCE verifier")
			}
			q = authorizeVia(t, s, cfg.AuthCodeURL("st", opts...))
			tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(pkce))
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Expiry.IsZero() || time.Until(tok.Expiry) > 10*time.Second {
				t.Fatalf("token = %+v (expires_in must set Expiry)", tok)
			}
			raw, _ := tok.Extra("id_token").(string)
			idt, err := verifier.Verify(ctx, raw)
			if err != nil {
				t.Fatalf("id token does not verify: %v", err)
			}
			if idt.Nonce != tc.nonce {
				t.Fatalf("id token nonce = %q, want %q", idt.Nonce, tc.nonce)
			}
			var idc struct {
				Email string `json:"email"`
				Name  string `json:"name"`
			}
			if err := idt.Claims(&idc); err != nil || idc.Email != demoEmail || idc.Name != "Ada Lovelace" {
				t.Fatalf("id token claims %+v, %v", idc, err)
			}

			ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
			if err != nil {
				t.Fatalf("userinfo: %v", err)
			}
			var uic struct {
				Name     string `json:"name"`
				RealName string `json:"real_name"`
			}
			if err := ui.Claims(&uic); err != nil {
				t.Fatal(err)
			}
			if ui.Subject != idt.Subject || ui.Email != demoEmail || uic.Name != "Ada Lovelace" || uic.RealName != "Ada Lovelace" {
				t.Fatalf("userinfo sub %q (id token %q), email %q, %+v", ui.Subject, idt.Subject, ui.Email, uic)
			}

			// The TokenSource sees an expiring token and refreshes by itself
			// (authenticating the client as configured); the refresh token
			// rotates.
			ts := cfg.TokenSource(ctx, tok)
			next, err := ts.Token()
			if err != nil {
				t.Fatalf("automatic refresh: %v", err)
			}
			if next.AccessToken == tok.AccessToken || next.RefreshToken == tok.RefreshToken || next.RefreshToken == "" {
				t.Fatal("the token source did not refresh")
			}
			if raw, _ := next.Extra("id_token").(string); raw != "" {
				if _, err := verifier.Verify(ctx, raw); err != nil {
					t.Fatalf("refreshed id token: %v", err)
				}
			}
			// The refreshed access token opens the bearer endpoints.
			if _, err := p.UserInfo(ctx, oauth2.StaticTokenSource(next)); err != nil {
				t.Fatalf("userinfo with the refreshed token: %v", err)
			}
			// The spent refresh token is refused: reuse revokes the chain.
			if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
				t.Fatal("a spent refresh token was accepted")
			}
		})
	}
}

// A machine client's own token through x/oauth2/clientcredentials.
func TestCompatOIDCClientCredentials(t *testing.T) {
	t.Parallel()
	s, ctx, p := oidcSetup(t, Options{})
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		cc := clientcredentials.Config{ClientID: demoClient, ClientSecret: demoSecret, TokenURL: p.Endpoint().TokenURL, AuthStyle: style, Scopes: []string{"registry"}}
		tok, err := cc.Token(ctx)
		if err != nil {
			t.Fatalf("client_credentials (style %d): %v", style, err)
		}
		if tok.TokenType != "Bearer" || tok.RefreshToken != "" || tok.Extra("id_token") != nil || tok.Expiry.IsZero() {
			t.Fatalf("token = %+v, id_token %v", tok, tok.Extra("id_token"))
		}
		_, b := s.Get(t, oauth+"/tokeninfo", 200, "Authorization", "Bearer "+tok.AccessToken)
		if sub := field(t, JSON(t, b), "subject"); sub != "client:"+demoClient {
			t.Fatalf("tokeninfo subject = %v", sub)
		}
		// No user behind it.
		s.Get(t, oauth+"/userinfo", 403, "Authorization", "Bearer "+tok.AccessToken)
	}
	cc := clientcredentials.Config{ClientID: demoClient, ClientSecret: "wrong-wrong-wrong", TokenURL: p.Endpoint().TokenURL, AuthStyle: oauth2.AuthStyleInHeader}
	wantRetrieveError(t, fn(cc.Token(ctx)), 401, "invalid_client")
	s.AuthCLI(t, 0, "disable-client", demoClient)
	cc.ClientSecret = demoSecret
	wantRetrieveError(t, fn(cc.Token(ctx)), 401, "invalid_client")
}

func fn(_ *oauth2.Token, err error) error { return err }

func wantRetrieveError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RetrieveError %d %s", err, status, code)
	}
	if re.Response.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("RetrieveError %d %q (%s), want %d %q", re.Response.StatusCode, re.ErrorCode, re.Body, status, code)
	}
}

// The token endpoint's refusals, as a library reports them.
func TestCompatOIDCErrors(t *testing.T) {
	t.Parallel()
	s, ctx, p := oidcSetup(t, Options{})
	cfg := oauthConfig(p, oauth2.AuthStyleInHeader)
	// An unknown grant type (x/oauth2 still speaks the password grant).
	wantRetrieveError(t, fn(cfg.PasswordCredentialsToken(ctx, demoEmail, demoPass)), 400, "unsupported_grant_type")

	tok, err := cfg.Exchange(ctx, authorizeVia(t, s, cfg.AuthCodeURL("st")).Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	// A refresh that authenticates with a wrong secret is refused, and
	// the refresh token is not spent by it.
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		bad := oauthConfig(p, style)
		bad.ClientSecret = "wrong-wrong-wrong"
		wantRetrieveError(t, fn(bad.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()), 401, "invalid_client")
	}
	if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
		t.Fatalf("refresh with the right secret after refused ones: %v", err)
	}
	// No payload stays the spec's plain 400.
	res, v := postJSON(t, s, oauth+"/token", `{}`)
	wantStatus(t, res, v, 400)
	if field(t, v, "error") != "invalid_request" {
		t.Fatalf("empty request: %v", v)
	}
}

type samplyTokens struct {
	AccessToken  string `json:"access_token"`
	IDToken      string `json:"id_token"`
	RefreshToken string `json:"refresh_token"`
}

// samplyClaims reads claims the way nimbus-jose-jwt's JWTClaimsSet does for
// the Samply client: scope must be a string (an array fails to parse).
type samplyClaims struct {
	Subject   string          `json:"sub"`
	Audience  json.RawMessage `json:"aud"`
	Type      string          `json:"type"`
	Scope     string          `json:"scope"`
	Expires   int64           `json:"exp"`
	NotBefore int64           `json:"nbf"`
}

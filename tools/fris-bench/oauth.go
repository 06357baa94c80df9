package main

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// authPrefix is where the gateway serves group A (its -auth-prefix default).
const authPrefix = "/oauth2"

// credentials are the seeded client and user the auth suites sign in with.
type credentials struct {
	clientID, clientSecret string
	email, password        string
}

// authClient makes the set-up calls of the auth suites (sign in, register a
// key) through the gateway, outside any measurement.
type authClient struct {
	base string
	hc   *http.Client
}

func newAuthClient(base string) *authClient {
	return &authClient{base: base, hc: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{Proxy: nil},
		// The login answers with a redirect to the client's redirect URL,
		// where nothing listens: the code is read from it, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (a *authClient) close() { a.hc.CloseIdleConnections() }

// tokenSet is the token endpoint's answer.
type tokenSet struct {
	Access  string `json:"access_token"`
	ID      string `json:"id_token"`
	Refresh string `json:"refresh_token"`
}

// parseTokenSet reads a token response; all three tokens must be there.
func parseTokenSet(body []byte) (tokenSet, error) { return parseTokens(body, true) }

// parseTokens reads a token response: access and refresh token, and the
// id token when withID.
func parseTokens(body []byte, withID bool) (tokenSet, error) {
	var ts tokenSet
	if err := json.Unmarshal(body, &ts); err != nil {
		return ts, fmt.Errorf("token response is not JSON: %.80s", body)
	}
	if ts.Access == "" || (withID && ts.ID == "") || ts.Refresh == "" {
		return ts, errors.New("token response lacks a token")
	}
	return ts, nil
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signIn is flow 1 as a browser and a client do it: the login page (for
// its CSRF cookie and field), the form, the code from the redirect, and the
// code exchanged with the client's secret.
func (a *authClient) signIn(ctx context.Context, c credentials) (tokenSet, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return tokenSet{}, err
	}
	hc := *a.hc
	hc.Jar = jar
	page := a.base + authPrefix + "/authorize"
	q := url.Values{"client_id": {c.clientID}, "state": {"fris-bench"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page+"?"+q.Encode(), nil)
	if err != nil {
		return tokenSet{}, err
	}
	body, res, err := do(&hc, req)
	if err != nil {
		return tokenSet{}, fmt.Errorf("login page: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return tokenSet{}, fmt.Errorf("login page: %s: %.200s", res.Status, body)
	}
	m := csrfField.FindSubmatch(body)
	if m == nil {
		return tokenSet{}, errors.New("login page: no csrf_token field")
	}
	form := url.Values{
		"client_id": {c.clientID}, "state": {"fris-bench"}, "csrf_token": {string(m[1])},
		"email": {c.email}, "password": {c.password},
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, page, strings.NewReader(form.Encode()))
	if err != nil {
		return tokenSet{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	body, res, err = do(&hc, req)
	if err != nil {
		return tokenSet{}, fmt.Errorf("login: %w", err)
	}
	if res.StatusCode != http.StatusFound {
		return tokenSet{}, fmt.Errorf("login as %s: %s (want 302): %.200s", c.email, res.Status, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	code := ""
	if err == nil {
		code = loc.Query().Get("code")
	}
	if code == "" {
		return tokenSet{}, fmt.Errorf("login: no code in the redirect %q", res.Header.Get("Location"))
	}
	var ts tokenSet
	err = a.postJSON(ctx, authPrefix+"/token",
		map[string]string{"code": code, "client_id": c.clientID, "client_secret": c.clientSecret}, &ts)
	if err == nil && (ts.Access == "" || ts.Refresh == "") {
		err = errors.New("token response lacks a token")
	}
	return ts, err
}

// register makes a user holding pub (flow 2's registration) and returns
// the key's id.
func (a *authClient) register(ctx context.Context, email string, pub *rsa.PublicKey) (int32, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return 0, err
	}
	var res struct {
		UserID int32 `json:"userId"`
		KeyID  int32 `json:"keyId"`
	}
	err = a.postJSON(ctx, authPrefix+"/register", map[string]string{
		"email": email, "name": "fris-bench", "description": "load test key",
		"base64EncodedPublicKey": base64.StdEncoding.EncodeToString(der),
	}, &res)
	if err == nil && res.KeyID <= 0 {
		err = errors.New("register: no keyId in the answer")
	}
	return res.KeyID, err
}

// checkBearer makes sure the gateway accepts tok (a bearer-only route
// answers 200), so a bearer run measures verified requests, not anonymous
// ones with an ignored header.
func (a *authClient) checkBearer(ctx context.Context, tok string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+authPrefix+"/tokeninfo", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	body, res, err := do(a.hc, req)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/tokeninfo with the token: %s: %.200s", authPrefix, res.Status, body)
	}
	return nil
}

func (a *authClient) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	body, res, err := do(a.hc, req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %.200s", path, res.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("POST %s: answer is not JSON: %.200s", path, body)
	}
	return nil
}

func do(hc *http.Client, req *http.Request) ([]byte, *http.Response, error) {
	res, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return body, res, err
}

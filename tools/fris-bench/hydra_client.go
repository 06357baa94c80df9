package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
)

// The hydra suite's set-up at Hydra: a client and sign-ins, through its
// public and admin APIs.

// hydraClient makes the set-up calls against Hydra.
type hydraClient struct {
	public, admin string
	hc            *http.Client
}

func (h *hydraClient) send(ctx context.Context, method, u string, body io.Reader, ctype string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	b, res, err := do(h.hc, req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %.300s", method, u, res.Status, b)
	}
	if out != nil && json.Unmarshal(b, out) != nil {
		return fmt.Errorf("%s %s: answer is not JSON: %.200s", method, u, b)
	}
	return nil
}

func (h *hydraClient) sendJSON(ctx context.Context, method, u string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return h.send(ctx, method, u, bytes.NewReader(b), "application/json", out)
}

// createClient registers a public client (no secret, PKCE) whose access
// tokens are JWTs.
func (h *hydraClient) createClient(ctx context.Context) (string, error) {
	var c struct {
		ID string `json:"client_id"`
	}
	err := h.sendJSON(ctx, http.MethodPost, h.admin+"/admin/clients", map[string]any{
		"client_name": "fris-bench", "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "scope": "openid offline_access", "redirect_uris": []string{peerRedirect},
		"token_endpoint_auth_method": "none", "access_token_strategy": "jwt",
	}, &c)
	if err == nil && c.ID == "" {
		err = errors.New("hydra: created client without client_id")
	}
	return c.ID, err
}

// signIn is the authorization-code flow with PKCE, the login and consent
// accepted through the admin API as a login/consent app would: the
// authorize request, the login challenge accepted for subject, the consent
// challenge accepted with openid and offline_access, the code exchanged.
func (h *hydraClient) signIn(ctx context.Context, clientID, subject string) (tokenSet, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return tokenSet{}, err
	}
	hc := *h.hc
	hc.Jar = jar
	verifier := randomString()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"client_id": {clientID}, "response_type": {"code"}, "scope": {"openid offline_access"},
		"redirect_uri": {peerRedirect}, "state": {randomString()}, "nonce": {randomString()},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	// redirect follows one hop and returns the query parameter want of
	// where Hydra sends the browser next.
	redirect := func(u, want string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return "", err
		}
		b, res, err := do(&hc, req)
		if err != nil {
			return "", err
		}
		loc, err := url.Parse(res.Header.Get("Location"))
		if res.StatusCode/100 != 3 || err != nil || loc.Query().Get(want) == "" {
			return "", fmt.Errorf("hydra: GET %s: %s, Location %q, want %s: %.200s", u, res.Status, res.Header.Get("Location"), want, b)
		}
		return loc.Query().Get(want), nil
	}
	var next struct {
		RedirectTo string `json:"redirect_to"`
	}
	login, err := redirect(h.public+"/oauth2/auth?"+q.Encode(), "login_challenge")
	if err != nil {
		return tokenSet{}, err
	}
	if err := h.sendJSON(ctx, http.MethodPut, h.admin+"/admin/oauth2/auth/requests/login/accept?login_challenge="+url.QueryEscape(login),
		map[string]any{"subject": subject}, &next); err != nil {
		return tokenSet{}, err
	}
	consent, err := redirect(next.RedirectTo, "consent_challenge")
	if err != nil {
		return tokenSet{}, err
	}
	if err := h.sendJSON(ctx, http.MethodPut, h.admin+"/admin/oauth2/auth/requests/consent/accept?consent_challenge="+url.QueryEscape(consent),
		map[string]any{"grant_scope": []string{"openid", "offline_access"}}, &next); err != nil {
		return tokenSet{}, err
	}
	code, err := redirect(next.RedirectTo, "code")
	if err != nil {
		return tokenSet{}, err
	}
	form := url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {peerRedirect},
		"client_id": {clientID}, "code_verifier": {verifier},
	}
	var ts tokenSet
	err = h.send(ctx, http.MethodPost, h.public+"/oauth2/token", strings.NewReader(form.Encode()), "application/x-www-form-urlencoded", &ts)
	if err == nil && (ts.Access == "" || ts.Refresh == "" || ts.ID == "") {
		err = errors.New("hydra: token response lacks a token")
	}
	return ts, err
}

// jwsKid is the kid of a JWS's header, or "?".
func jwsKid(tok string) string {
	h, _, _ := strings.Cut(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	var hdr struct {
		Kid string `json:"kid"`
	}
	if err != nil || json.Unmarshal(b, &hdr) != nil || hdr.Kid == "" {
		return "?"
	}
	return hdr.Kid
}

// randomString is 43 characters: long enough for a PKCE verifier.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

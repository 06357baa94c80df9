package explorer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"fris.dev/gateway/internal/i18n"
	authv1 "fris.dev/proto/auth/v1"
)

// The account holder's credentials: a password, a registered key nobody
// proved, and what the owner's reset removed.
func (f *fakeAccountAuth) ListCredentials(context.Context, *authv1.ListCredentialsRequest, ...grpc.CallOption) (*authv1.ListCredentialsResponse, error) {
	return &authv1.ListCredentialsResponse{
		Credentials: []*authv1.Credential{
			{Kind: "password", Created: uint32(t0.Unix() - 3600), AddedBy: "reset", Proven: true, LastUsed: uint32(t0.Unix() - 60)},
			{Kind: "key", Id: "12", Description: "laptop", Created: uint32(t0.Unix() - 7200), AddedBy: "registration"},
		},
		Removed: []*authv1.Credential{{Kind: "key", Id: "7", Description: "stranger's", AddedBy: "registration", Removed: uint32(t0.Unix() - 3600)}},
	}, nil
}

// RemoveCredential: key 12 goes; key 13 is the only way in.
func (f *fakeAccountAuth) RemoveCredential(ctx context.Context, r *authv1.RemoveCredentialRequest, _ ...grpc.CallOption) (*authv1.RemoveCredentialResponse, error) {
	f.saw(ctx)
	switch {
	case r.GetKind() == "key" && r.GetId() == "12":
		return &authv1.RemoveCredentialResponse{}, nil
	case r.GetKind() == "key" && r.GetId() == "14":
		return &authv1.RemoveCredentialResponse{SignedOut: true}, nil
	case r.GetKind() == "key" && r.GetId() == "13":
		return nil, status.Error(codes.FailedPrecondition, "this is your only way to sign in")
	case r.GetKind() == "password":
		return nil, status.Error(codes.InvalidArgument, "the password cannot be removed")
	}
	return nil, status.Error(codes.NotFound, "no such key")
}

func TestAccountCredentials(t *testing.T) {
	e, fa := newAccountEnv(t)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", AccountPath, nil)
	body := rec.Body.String()
	for _, want := range []string{"Ways to sign in", `<tr data-kind="password" data-id="">`, `<tr data-kind="key" data-id="12" data-unproven="true">`,
		"Key 12 „laptop“", "unproven", "registered without sign-in", "with a reset link", `action="/explorer/account/credentials/remove"`,
		`name="kind" value="key"`, `<li data-kind="key" data-id="7">Key 7 „stranger&#39;s“`, "these ways to sign in were removed"} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("account page = %d, lacks %q:\n%s", rec.Code, want, body)
		}
	}
	if strings.Count(body, `action="/explorer/account/credentials/remove"`) != 1 {
		t.Fatal("the password has a remove form")
	}
	if de := b.do("GET", AccountPath, nil, "Accept-Language", "de").Body.String(); !strings.Contains(de, "Anmeldewege") || !strings.Contains(de, "unbestätigt") {
		t.Fatalf("the German page:\n%s", de)
	}
	sess, err := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	form := func(kind, id string) url.Values {
		return url.Values{CSRFField: {sess.CSRF}, "kind": {kind}, "id": {id}}
	}
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  []string
		code int
		text string
	}{
		{"NoCSRF", url.Values{CSRFField: {"nope"}, "kind": {"key"}, "id": {"12"}}, nil, 403, ""},
		{"OtherSite", form("key", "12"), []string{"Sec-Fetch-Site", "cross-site"}, 403, ""},
		{"LastWay", form("key", "13"), nil, 400, "This is your only way to sign in"},
		{"Password", form("password", ""), nil, 400, "cannot be removed"},
		{"Unknown", form("key", "99"), nil, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do("POST", CredentialRemove, tc.form, tc.hdr...)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.text) {
				t.Fatalf("= %d, want %d with %q:\n%s", rec.Code, tc.code, tc.text, rec.Body)
			}
		})
	}
	fa.mu.Lock()
	n := len(fa.seen)
	fa.mu.Unlock()
	rec = b.do("POST", CredentialRemove, form("key", "12"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != AccountPath+"?credential=removed#creds-heading" {
		t.Fatalf("remove = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	fa.mu.Lock()
	if len(fa.seen) != n+1 || fa.seen[n] != "Bearer "+sess.Token.AccessToken {
		t.Fatalf("calls %v, want one with the session's token", fa.seen[n:])
	}
	fa.mu.Unlock()
	if done := b.do("GET", AccountPath+"?credential=removed", nil).Body.String(); !strings.Contains(done, "It has been removed.") {
		t.Fatalf("after the removal:\n%s", done)
	}
	// An unproven one's removal ended every session: this browser is
	// signed out, and the sign-in comes back to the page.
	rec = b.do("POST", CredentialRemove, form("key", "14"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != LoginPath+"?return=%2Fexplorer%2Faccount%3Fcredential%3Dremoved" {
		t.Fatalf("remove with sign-out = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if _, err := e.store.Get(context.Background(), sess.ID); err == nil {
		t.Fatal("the session outlived the removal")
	}
	for k, v := range credentialMessages {
		for _, l := range i18n.Supported {
			if strings.TrimSpace(v[l]) == "" {
				t.Errorf("%s lacks %s", k, l)
			}
		}
	}
}

package explorer

import (
	"context"
	"encoding/json"
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

// The fake identity provider's passkeys: Ada has "Laptop" (pk1), used
// once; the answer "good" with a name adds one.

func (f *fakeAccountAuth) ListPasskeys(ctx context.Context, _ *authv1.ListPasskeysRequest, _ ...grpc.CallOption) (*authv1.ListPasskeysResponse, error) {
	f.saw(ctx)
	return &authv1.ListPasskeysResponse{Passkeys: []*authv1.Passkey{
		{Id: "pk1", Name: "Laptop <work>", Created: uint32(t0.Unix() - 3*86400), LastUsed: uint32(t0.Unix() - 3600)},
		{Id: "pk2", Name: "Key", Created: uint32(t0.Unix() - 86400)},
	}}, nil
}

func (f *fakeAccountAuth) BeginPasskeyRegistration(ctx context.Context, _ *authv1.BeginPasskeyRegistrationRequest, _ ...grpc.CallOption) (*authv1.BeginPasskeyRegistrationResponse, error) {
	f.saw(ctx)
	return &authv1.BeginPasskeyRegistrationResponse{Ceremony: "cer", Options: `{"publicKey":{"challenge":"AAAA","user":{"id":"dQ"}}}`}, nil
}

func (f *fakeAccountAuth) FinishPasskeyRegistration(ctx context.Context, r *authv1.FinishPasskeyRegistrationRequest, _ ...grpc.CallOption) (*authv1.FinishPasskeyRegistrationResponse, error) {
	f.saw(ctx)
	if r.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name the passkey")
	}
	if r.GetCeremony() != "cer" || r.GetCredential() != "good" {
		return nil, status.Error(codes.InvalidArgument, "the passkey was not accepted: start again")
	}
	return &authv1.FinishPasskeyRegistrationResponse{Passkey: &authv1.Passkey{Id: "pk3", Name: r.GetName()}}, nil
}

func (f *fakeAccountAuth) RemovePasskey(ctx context.Context, r *authv1.RemovePasskeyRequest, _ ...grpc.CallOption) (*authv1.RemovePasskeyResponse, error) {
	f.saw(ctx)
	if r.GetId() != "pk1" {
		return nil, status.Error(codes.NotFound, "no such passkey")
	}
	return &authv1.RemovePasskeyResponse{}, nil
}

// The account page lists the passkeys (escaped), with a confirmed remove
// form each and the add form for the page's script.
func TestAccountPasskeysListed(t *testing.T) {
	e, _ := newAccountEnv(t)
	b := e.browser()
	b.signIn()
	rec := b.do("GET", AccountPath+"?passkey=added", nil)
	body := rec.Body.String()
	for _, want := range []string{`id="passkeys-heading"`, "Laptop &lt;work&gt;", "never", `action="/explorer/account/passkeys/remove"`, `name="id" value="pk1"`,
		`<details class="danger">`, "Remove the passkey now", `id="pk-add"`, `data-begin="/explorer/account/passkeys/begin"`, `<label for="pk-name">`,
		`<script src="/explorer/static/passkeys.js" defer></script>`, "The passkey has been added"} {
		if rec.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("account page = %d, lacks %q:\n%s", rec.Code, want, body)
		}
	}
	for k, v := range passkeyMessages {
		for _, l := range i18n.Supported {
			if strings.TrimSpace(v[l]) == "" {
				t.Errorf("%s lacks %s", k, l)
			}
		}
	}
	if js := b.do("GET", StaticPath+"passkeys.js", nil); js.Code != 200 || !strings.Contains(js.Body.String(), "navigator.credentials.create") {
		t.Fatalf("script = %d", js.Code)
	}
}

// Adding: begin answers the options as JSON, the form's answer is passed
// through; each needs the CSRF token and this origin; a refusal shows the
// page with the reason. Removing needs the same.
func TestAccountPasskeyForms(t *testing.T) {
	e, fa := newAccountEnv(t)
	b := e.browser()
	b.signIn()
	sess, err := e.store.Get(context.Background(), b.cookies[SessionCookie].Value)
	if err != nil {
		t.Fatal(err)
	}
	calls := func() int {
		fa.mu.Lock()
		defer fa.mu.Unlock()
		return len(fa.seen)
	}
	for _, path := range []string{PasskeyBegin, PasskeysPath, PasskeyRemove} {
		n := calls()
		if rec := b.do("POST", path, url.Values{CSRFField: {"nope"}, "id": {"pk1"}}); rec.Code != http.StatusForbidden {
			t.Fatalf("%s without the CSRF token: %d", path, rec.Code)
		}
		if rec := b.do("POST", path, url.Values{CSRFField: {sess.CSRF}, "id": {"pk1"}}, "Sec-Fetch-Site", "cross-site"); rec.Code != http.StatusForbidden {
			t.Fatalf("%s from another site: %d", path, rec.Code)
		}
		if calls() != n {
			t.Fatalf("%s called the identity provider without the form's token", path)
		}
	}

	rec := b.do("POST", PasskeyBegin, url.Values{CSRFField: {sess.CSRF}})
	var begun struct {
		Ceremony string         `json:"ceremony"`
		Options  map[string]any `json:"options"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &begun) != nil || begun.Ceremony != "cer" || begun.Options["publicKey"] == nil {
		t.Fatalf("begin = %d %s", rec.Code, rec.Body)
	}
	fa.mu.Lock()
	if last := fa.seen[len(fa.seen)-1]; last != "Bearer "+sess.Token.AccessToken {
		t.Fatalf("begin sent %q", last)
	}
	fa.mu.Unlock()

	rec = b.do("POST", PasskeysPath, url.Values{CSRFField: {sess.CSRF}, "ceremony": {"cer"}, "name": {"Phone"}, "credential": {"forged"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "The passkey was not added: the passkey was not accepted") || !strings.Contains(rec.Body.String(), `id="pk-error"`) {
		t.Fatalf("refused = %d\n%s", rec.Code, rec.Body)
	}
	rec = b.do("POST", PasskeysPath, url.Values{CSRFField: {sess.CSRF}, "ceremony": {"cer"}, "name": {"Phone"}, "credential": {"good"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != AccountPath+"?passkey=added#passkeys-heading" {
		t.Fatalf("add = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	big := url.Values{CSRFField: {sess.CSRF}, "credential": {strings.Repeat("a", passkeyFormMax)}}
	if rec := b.do("POST", PasskeysPath, big); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("overlong = %d", rec.Code)
	}

	rec = b.do("POST", PasskeyRemove, url.Values{CSRFField: {sess.CSRF}, "id": {"pk1"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != AccountPath+"?passkey=removed#passkeys-heading" {
		t.Fatalf("remove = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := b.do("POST", PasskeyRemove, url.Values{CSRFField: {sess.CSRF}, "id": {"other"}}); rec.Code != http.StatusNotFound {
		t.Fatalf("remove another = %d", rec.Code)
	}
}

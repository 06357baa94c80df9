package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"fris.dev/pkg/audit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// errPasskeyRefused is the one answer for a passkey that signs no one in:
// unknown, of a disabled or deleted user, a signature that does not
// verify, an authenticator that looks cloned.
var errPasskeyRefused = unauth("the passkey was not accepted")

// BeginPasskeyLogin starts a sign-in with a passkey for an authorization
// request: the browser asks its authenticators for any passkey of this
// relying party (a discoverable credential names its user).
func (p Public) BeginPasskeyLogin(ctx context.Context, r *authv1.BeginPasskeyLoginRequest) (*authv1.BeginPasskeyLoginResponse, error) {
	if p.rp == nil {
		return nil, p.err(ctx, errPasskeysOff)
	}
	if _, _, err := p.authorize(ctx, r.GetRequest()); err != nil {
		return nil, p.err(ctx, err)
	}
	// An address that is held back for failed passkeys starts none.
	a, err := p.cfg.Guards.Passkey.Begin(ctx, "", false)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	a.Cancel(ctx)
	assertion, session, err := p.rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, p.err(ctx, err)
	}
	id, err := p.putCeremony(ctx, ceremonyLogin, 0, session)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	options, err := json.Marshal(assertion)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.BeginPasskeyLoginResponse{Ceremony: id, Options: string(options)}, nil
}

// FinishPasskeyLogin checks the browser's answer and, as Login does for a
// password, issues the authorization code.
func (p Public) FinishPasskeyLogin(ctx context.Context, r *authv1.FinishPasskeyLoginRequest) (res *authv1.LoginResponse, err error) {
	var (
		user int32
		used string
	)
	defer func() {
		ev := audit.Event{Action: "auth.passkey_login", Err: err,
			Attrs: []slog.Attr{slog.String("client_id", r.GetRequest().GetClientId()), slog.String("passkey", used)}}
		if user != 0 {
			ev.Actor, ev.Target = strconv.Itoa(int(user)), strconv.Itoa(int(user))
		}
		ev.Class = signedIn(err == nil)
		p.cfg.Audit.Record(ctx, ev)
	}()
	if p.rp == nil {
		return nil, p.err(ctx, errPasskeysOff)
	}
	if err := ceremonyFields(r.GetCeremony(), r.GetCredential()); err != nil {
		return nil, p.err(ctx, err)
	}
	c, redirect, err := p.authorize(ctx, r.GetRequest())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	a, err := p.cfg.Guards.Passkey.Begin(ctx, "", false)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	u, pk, err := p.checkAssertion(ctx, r.GetCeremony(), r.GetCredential())
	if err != nil {
		if errors.Is(err, errPasskeyRefused) || errors.Is(err, errCeremony) {
			a.Failed(ctx)
		} else {
			a.Cancel(ctx)
		}
		return nil, p.err(ctx, err)
	}
	a.Succeeded(ctx)
	used = pk
	// The browser's known-device token for the account's password too: a
	// passkey is the surest sign of its holder.
	device, err := p.cfg.Guards.Login.RememberDevice(ctx, loginAccount(u.Email), r.GetDevice())
	if err != nil {
		p.log.WarnContext(ctx, "remembering a known device", "err", err)
	}
	if res, err := p.requiredStep(ctx, c, redirect, u, r.GetRequest(), storage.MethodPasskey); err != nil {
		return nil, p.err(ctx, err)
	} else if res != nil {
		res.Device = device
		user = u.ID
		return res, nil
	}
	code, err := p.authorizationCode(ctx, c, redirect, u, r.GetRequest(), storage.MethodPasskey)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	user = u.ID
	return &authv1.LoginResponse{Code: code, RedirectUri: redirect, Device: device}, nil
}

// checkAssertion verifies a passkey's answer to a sign-in ceremony and
// returns its user and the passkey's id, having recorded its use (last
// used, the signature counter).
func (p Public) checkAssertion(ctx context.Context, id, credential string) (storage.User, string, error) {
	session, err := p.takeCeremony(ctx, id, ceremonyLogin)
	if err != nil {
		return storage.User{}, "", err
	}
	parsed, err := parseAssertion(credential)
	if err != nil {
		return storage.User{}, "", errPasskeyRefused
	}
	var (
		u      storage.User
		stored []storage.Passkey
		lookup error // the store failing, which is not the passkey's fault
	)
	found := func(_, handle []byte) (webauthn.User, error) {
		uid, ok := handleUser(handle)
		if !ok {
			return nil, errPasskeyRefused
		}
		var err error
		if u, err = p.store.GetUser(ctx, uid); err != nil {
			if !errors.Is(err, storage.ErrNotFound) {
				lookup = err
			}
			return nil, errPasskeyRefused
		}
		if u.Disabled {
			return nil, errPasskeyRefused
		}
		if stored, err = p.store.Passkeys(ctx, uid); err != nil {
			lookup = err
			return nil, err
		}
		return passkeyUser{u, credentials(stored)}, nil
	}
	_, cred, err := p.rp.ValidatePasskeyLogin(found, session.data, parsed)
	if lookup != nil {
		return storage.User{}, "", lookup
	}
	if err != nil {
		p.log.InfoContext(ctx, "a passkey sign-in was refused", "err", err)
		return storage.User{}, "", errPasskeyRefused
	}
	// A counter that went back means two copies of the key exist: the
	// passkey signs no one in until its holder replaces it.
	if cred.Authenticator.CloneWarning {
		p.log.WarnContext(ctx, "a passkey's signature counter went back: refused as cloned", "user", u.ID)
		return storage.User{}, "", errPasskeyRefused
	}
	pkID := credentialID(cred.ID)
	rec, err := json.Marshal(cred)
	if err != nil {
		return storage.User{}, "", err
	}
	err = p.store.UpdatePasskey(ctx, u.ID, pkID, func(sp *storage.Passkey) error {
		sp.LastUsed, sp.Credential = p.now().Unix(), rec
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return storage.User{}, "", errPasskeyRefused // removed meanwhile
	} else if err != nil {
		return storage.User{}, "", err
	}
	return u, pkID, nil
}

package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"

	"github.com/go-webauthn/webauthn/webauthn"

	"fris.dev/pkg/audit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// passkeyHolder is the signed-in user of the presented access token, with
// the relying party; a client's own token has no user.
func (p Public) passkeyHolder(ctx context.Context) (storage.User, *webauthn.WebAuthn, error) {
	if p.rp == nil {
		return storage.User{}, nil, errPasskeysOff
	}
	u, t, err := p.bearer(ctx)
	if err != nil {
		return u, nil, err
	}
	if t.IsClient() {
		return u, nil, denied("the access token is a client's own: it has no user")
	}
	return u, p.rp, nil
}

// BeginPasskeyRegistration starts adding a passkey: the options for the
// browser, and the ceremony that holds their challenge.
func (p Public) BeginPasskeyRegistration(ctx context.Context, _ *authv1.BeginPasskeyRegistrationRequest) (*authv1.BeginPasskeyRegistrationResponse, error) {
	u, rp, err := p.passkeyHolder(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	have, err := p.store.Passkeys(ctx, u.ID)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if len(have) >= MaxPasskeys {
		return nil, p.err(ctx, invalid("you have %d passkeys, the most there may be: remove one first", MaxPasskeys))
	}
	creds := credentials(have)
	// The authenticators that hold one already are not asked again.
	creation, session, err := rp.BeginRegistration(passkeyUser{u, creds}, webauthn.WithExclusions(webauthn.Credentials(creds).CredentialDescriptors()))
	if err != nil {
		return nil, p.err(ctx, err)
	}
	id, err := p.putCeremony(ctx, ceremonyRegister, u.ID, session)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	options, err := json.Marshal(creation)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.BeginPasskeyRegistrationResponse{Ceremony: id, Options: string(options)}, nil
}

// FinishPasskeyRegistration checks the browser's new credential against
// the ceremony and keeps it under the name the user gave.
func (p Public) FinishPasskeyRegistration(ctx context.Context, r *authv1.FinishPasskeyRegistrationRequest) (_ *authv1.FinishPasskeyRegistrationResponse, err error) {
	var actor, added string
	defer func() {
		if actor == "" {
			return // no signed-in user: nothing of an account happened
		}
		p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.passkey_add", Actor: actor, Target: actor, Err: err, Class: audit.ClassSignedIn,
			Attrs: []slog.Attr{slog.String("passkey", added)}})
	}()
	u, rp, err := p.passkeyHolder(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	actor = strconv.Itoa(int(u.ID))
	if err := ceremonyFields(r.GetCeremony(), r.GetCredential()); err != nil {
		return nil, p.err(ctx, err)
	}
	name, err := checkPasskeyName(r.GetName())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	session, err := p.takeCeremony(ctx, r.GetCeremony(), ceremonyRegister)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if session.UserID != u.ID {
		return nil, p.err(ctx, errCeremony) // another user's
	}
	parsed, err := parseAttestation(r.GetCredential())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	have, err := p.store.Passkeys(ctx, u.ID)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	cred, err := rp.CreateCredential(passkeyUser{u, credentials(have)}, session.data, parsed)
	if err != nil {
		p.log.InfoContext(ctx, "a passkey registration was refused", "user", u.ID, "err", err)
		return nil, p.err(ctx, invalid("the passkey was not accepted: start again"))
	}
	rec, err := json.Marshal(cred)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// Added while nobody has verified the address, it is unproven: the
	// owner's proof removes it (credentials.go).
	pk := storage.Passkey{ID: credentialID(cred.ID), UserID: u.ID, Name: name, Created: p.now().Unix(), Credential: rec,
		AddedBy: storage.AddedHolder, Unproven: !u.EmailVerified}
	added = pk.ID
	switch err := p.store.AddPasskey(ctx, pk, MaxPasskeys); {
	case errors.Is(err, storage.ErrTooMany):
		return nil, p.err(ctx, invalid("you have %d passkeys, the most there may be: remove one first", MaxPasskeys))
	case errors.Is(err, storage.ErrExists):
		return nil, p.err(ctx, invalid("this passkey is registered already"))
	case err != nil:
		return nil, p.err(ctx, err)
	}
	return &authv1.FinishPasskeyRegistrationResponse{Passkey: apiPasskey(pk)}, nil
}

func (p Public) ListPasskeys(ctx context.Context, _ *authv1.ListPasskeysRequest) (*authv1.ListPasskeysResponse, error) {
	u, _, err := p.passkeyHolder(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	have, err := p.store.Passkeys(ctx, u.ID)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	out := &authv1.ListPasskeysResponse{}
	for _, pk := range have {
		out.Passkeys = append(out.Passkeys, apiPasskey(pk))
	}
	return out, nil
}

// RemovePasskey deletes one of the user's passkeys: it signs no one in
// from then on. Sessions it began stand, as a changed password's do not:
// removing a passkey is tidying up; whoever fears a stolen one signs out
// everywhere. An unproven passkey's removal ends them (credentials.go).
func (p Public) RemovePasskey(ctx context.Context, r *authv1.RemovePasskeyRequest) (_ *authv1.RemovePasskeyResponse, err error) {
	var actor string
	defer func() {
		if actor != "" {
			p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.passkey_remove", Actor: actor, Target: actor, Err: err, Class: audit.ClassSignedIn,
				Attrs: []slog.Attr{slog.String("passkey", auditEmail(r.GetId()))}}) // bounded as an email
		}
	}()
	u, _, err := p.passkeyHolder(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	actor = strconv.Itoa(int(u.ID))
	if len(r.GetId()) > 1024 {
		return nil, p.err(ctx, notFound("no such passkey"))
	}
	gone, err := p.store.DeletePasskey(ctx, u.ID, r.GetId())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, notFound("no such passkey"))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	// One nobody had proven ends every session, as RemoveCredential's.
	if gone.Unproven {
		if err := p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error { cur.RevokedBefore = p.revokeNow(cur.RevokedBefore); return nil }); err != nil {
			return nil, p.err(ctx, err)
		}
	}
	return &authv1.RemovePasskeyResponse{SignedOut: gone.Unproven}, nil
}

// errCeremony is the one answer for a ceremony that cannot be finished:
// unknown, taken, expired, of another kind or user.
var errCeremony = invalid("the passkey request has expired or was used: start again")

// ceremony is a taken ceremony with the library's session data.
type ceremony struct {
	UserID int32
	data   webauthn.SessionData
}

func (p Public) putCeremony(ctx context.Context, kind string, user int32, session *webauthn.SessionData) (string, error) {
	data, err := json.Marshal(session)
	if err != nil {
		return "", err
	}
	id := tokens.RandomString(32)
	c := storage.Ceremony{Kind: kind, UserID: user, Session: data, Expires: p.now().Add(passkeyCeremonyTTL).Unix()}
	return id, p.store.PutCeremony(ctx, id, c)
}

// takeCeremony spends a ceremony of kind: errCeremony when there is none.
func (p Public) takeCeremony(ctx context.Context, id, kind string) (ceremony, error) {
	c, err := p.store.TakeCeremony(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && c.Kind != kind) {
		return ceremony{}, errCeremony
	} else if err != nil {
		return ceremony{}, err
	}
	var out ceremony
	if err := json.Unmarshal(c.Session, &out.data); err != nil {
		return ceremony{}, err
	}
	out.UserID = c.UserID
	return out, nil
}

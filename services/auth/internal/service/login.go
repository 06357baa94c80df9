package service

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// authorize checks an authorization request and picks the redirect URI.
func (p Public) authorize(ctx context.Context, r *authv1.AuthorizeRequest) (storage.Client, string, error) {
	if err := authorizeLimits(r); err != nil {
		return storage.Client{}, "", err
	}
	c, err := p.store.GetClient(ctx, r.GetClientId())
	if errors.Is(err, storage.ErrNotFound) {
		return c, "", notFound("unknown client_id")
	} else if err != nil {
		return c, "", err
	}
	if c.Disabled {
		return c, "", unauth("the client has been disabled")
	}
	redirect := r.GetRedirectUri()
	if redirect == "" {
		if len(c.RedirectURLs) == 0 {
			return c, "", invalid("the client has no registered redirect URL")
		}
		redirect = c.RedirectURLs[0]
	} else if !contains(c.RedirectURLs, redirect) {
		return c, "", invalid("redirect_uri is not registered for this client")
	}
	switch r.GetCodeChallengeMethod() {
	case "", "S256":
	default:
		return c, "", invalid("code_challenge_method must be S256")
	}
	if r.GetCodeChallengeMethod() == "S256" && r.GetCodeChallenge() == "" {
		return c, "", invalid("code_challenge is missing")
	}
	if ch := r.GetCodeChallenge(); ch != "" {
		if b, err := base64.RawURLEncoding.DecodeString(ch); err != nil || len(b) != sha256.Size {
			return c, "", invalid("code_challenge must be the base64url SHA-256 of the verifier (S256)")
		}
	}
	return c, redirect, nil
}

func (p Public) Authorize(ctx context.Context, r *authv1.AuthorizeRequest) (*authv1.AuthorizeResponse, error) {
	c, redirect, err := p.authorize(ctx, r)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.AuthorizeResponse{ClientName: c.Name, RedirectUri: redirect}, nil
}

func (p Public) Login(ctx context.Context, r *authv1.LoginRequest) (res *authv1.LoginResponse, err error) {
	var user int32
	var pending bool
	defer func() {
		ev := audit.Event{Action: "auth.login", Target: auditEmail(r.GetEmail()), Err: err,
			Attrs: []slog.Attr{slog.String("client_id", r.GetRequest().GetClientId())}}
		if pending {
			// The password was right; the code waits for the second
			// factor (auth.login_second_factor) or a required action.
			ev.Attrs = append(ev.Attrs, slog.Bool("second_factor_pending", true))
		}
		if err == nil {
			ev.Actor, ev.Class = strconv.Itoa(int(user)), audit.ClassSignedIn
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email), inputlimit.F("password", r.GetPassword(), inputlimit.Password)); err != nil {
		return nil, p.err(ctx, err)
	}
	c, redirect, err := p.authorize(ctx, r.GetRequest())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// The answer, a refusal included, is the same for an address no
	// account has, and a refusal costs no hash.
	account := loginAccount(r.GetEmail())
	guard := p.cfg.Guards.Login
	known, err := guard.KnownDevice(ctx, account, r.GetDevice())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	wrong := unauth("email or password is wrong")
	u, err := p.store.GetUserByEmail(ctx, r.GetEmail())
	if errors.Is(err, storage.ErrNotFound) || (err == nil && u.PasswordHash == "") {
		a, err := guard.Begin(ctx, account, known)
		if err != nil {
			return nil, p.err(ctx, err)
		}
		p.hash.Burn(ctx, r.GetPassword())
		a.Done(ctx, cmp.Or(ctx.Err(), password.ErrMismatch))
		return nil, p.err(ctx, cmp.Or(ctx.Err(), wrong))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	if err := p.hash.Verify(ctx, u.PasswordHash, r.GetPassword(), guard.Gate(account, known)); err != nil || u.Disabled {
		if ratelimit.IsThrottled(err) {
			return nil, p.err(ctx, err)
		}
		if ctx.Err() != nil {
			return nil, p.err(ctx, ctx.Err())
		}
		return nil, p.err(ctx, wrong)
	}
	// The browser's known-device token: its next sign-in is not held back
	// by the account's ceiling, whoever else guesses. Failing to remember
	// it only costs that.
	device, err := guard.RememberDevice(ctx, account, r.GetDevice())
	if err != nil {
		p.log.WarnContext(ctx, "remembering a known device", "err", err)
	}
	// An account with a second factor (or whose role requires one) gets
	// no code yet: LoginSecondFactor issues it.
	if res, err := p.secondStep(ctx, c, redirect, u, r.GetRequest()); err != nil {
		return nil, p.err(ctx, err)
	} else if res != nil {
		res.Device = device
		user, pending = u.ID, true
		return res, nil
	}
	p.passwordUsed(ctx, u)
	if res, err := p.requiredStep(ctx, c, redirect, u, r.GetRequest(), storage.MethodPassword); err != nil {
		return nil, p.err(ctx, err)
	} else if res != nil {
		res.Device = device
		user, pending = u.ID, true
		return res, nil
	}
	code, err := p.authorizationCode(ctx, c, redirect, u, r.GetRequest(), storage.MethodPassword)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	user = u.ID
	return &authv1.LoginResponse{Code: code, RedirectUri: redirect, Device: device}, nil
}

// authorizationCode issues the code of a sign-in (the password's or a
// passkey's: method) for the authorization request ar, and records the
// sign-in.
func (p Public) authorizationCode(ctx context.Context, c storage.Client, redirect string, u storage.User, ar *authv1.AuthorizeRequest, method string) (string, error) {
	code := tokens.RandomString(32)
	g := storage.Grant{
		Kind: storage.GrantAuthorization, ClientID: c.ID, UserID: u.ID, RedirectURI: redirect,
		Challenge: ar.GetCodeChallenge(), ChallengeMeth: ar.GetCodeChallengeMethod(), Scope: ar.GetScope(), Nonce: ar.GetNonce(),
		Addr: identity.Incoming(ctx, identity.KeyClientAddr), Expires: p.now().Add(p.cfg.AuthCodeTTL).Unix(),
	}
	if err := p.store.PutGrant(ctx, code, g); err != nil {
		return "", err
	}
	p.recordSignIn(ctx, u.ID, method, c.ID)
	return code, nil
}

// recordSignIn notes a sign-in for the operators' users view (its recent
// sign-ins); losing it costs only that.
func (p Public) recordSignIn(ctx context.Context, user int32, method, client string) {
	ev := storage.SignInEvent{At: p.now().Unix(), Method: method, Client: client, Addr: identity.Incoming(ctx, identity.KeyClientAddr)}
	if err := p.store.RecordSignIn(ctx, user, ev); err != nil {
		p.log.WarnContext(ctx, "recording a sign-in", "err", err)
	}
}

// loginAccount is the key of an email address's sign-in budget: its case
// and surrounding spaces do not make another account.
func loginAccount(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

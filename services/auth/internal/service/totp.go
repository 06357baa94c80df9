package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// A TOTP second factor (RFC 6238: SHA-1, 6 digits, 30 s steps, one step
// of clock skew either way) on top of a password, with single-use
// recovery codes; docs/security.md, Second factor. Its secret is sealed at
// rest like the signing keys; a code is accepted once (the step of the
// latest accepted code is kept), and wrong codes are throttled by the
// password's guard, per account and address.

const (
	kindTOTP = "totp"
	// totpIssuer names FRIS in the authenticator app.
	totpIssuer = "FRIS"
	// pendingTTL: how long a sign-in whose password was right waits for
	// its second factor; enrolTTL: how long a begun enrolment waits for
	// its first code.
	pendingTTL = 5 * time.Minute
	enrolTTL   = 10 * time.Minute
	// recoveryCount recovery codes of recoveryChars base32 characters
	// (5 bits each: 80 bits, so a fast hash of them is safe).
	recoveryCount = 10
	recoveryChars = 16
	// Grant kinds of a sign-in waiting for its second factor, or for
	// the enrolment its role requires.
	grantSecondFactor = "second-factor"
	grantEnrolFactor  = "second-factor-enrol"
	// maxCode bounds a submitted code (a TOTP code or a recovery code
	// with its dashes and spaces).
	maxCode = 64
)

var totpOpts = totp.ValidateOpts{Period: 30, Skew: 0, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// errWrongFactor: the code is no TOTP code of this step or its
// neighbours, one accepted before, or no unspent recovery code.
var errWrongFactor = errors.New("the code is wrong")

// newTOTPSecret makes a secret for u's authenticator app.
func newTOTPSecret(email string) (*otp.Key, error) {
	return totp.Generate(totp.GenerateOpts{Issuer: totpIssuer, AccountName: email, Period: 30, SecretSize: 20, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
}

// totpStep is the 30 s window of code at now (this one or a neighbour),
// or false.
func totpStep(secret, code string, now time.Time) (int64, bool) {
	code = strings.TrimSpace(code)
	if len(code) != 6 {
		return 0, false
	}
	for _, d := range []int64{0, -1, 1} {
		t := now.Add(time.Duration(d) * 30 * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / 30, true
		}
	}
	return 0, false
}

// recoveryHash is how a recovery code is kept: SHA-256, bound to the user,
// of the code without case, dashes and spaces. The codes carry 80 random
// bits, so no slow hash is needed.
func recoveryHash(user int32, code string) string {
	sum := sha256.Sum256([]byte("fris recovery code\x00" + strconv.Itoa(int(user)) + "\x00" + normalRecovery(code)))
	return hex.EncodeToString(sum[:])
}

func normalRecovery(code string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ', '\t':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, code)
}

// newRecoveryCodes returns the codes to show and their hashes to keep.
func newRecoveryCodes(user int32) ([]string, []string) {
	var codes, hashes []string
	for range recoveryCount {
		b := make([]byte, recoveryChars*5/8)
		_, _ = rand.Read(b)
		s := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
		var parts []string
		for i := 0; i < len(s); i += 4 {
			parts = append(parts, s[i:min(i+4, len(s))])
		}
		c := strings.Join(parts, "-")
		codes = append(codes, c)
		hashes = append(hashes, recoveryHash(user, c))
	}
	return codes, hashes
}

// useSecondFactor checks code against u's TOTP factor (or, enrol, against
// the pending one, which it then makes u's factor) and spends it: a TOTP
// code's step, or the recovery code. It answers the new recovery codes of
// an enrolment, and whether a recovery code was spent.
func (s *Service) useSecondFactor(ctx context.Context, user int32, code string, enrol bool) (codes []string, recovered bool, err error) {
	now := s.now()
	err = s.store.UpdateUser(ctx, user, func(u *storage.User) error {
		codes, recovered = nil, false
		if enrol {
			if u.TOTP != nil || len(u.TOTPPending) == 0 || u.TOTPPendingUntil < now.Unix() {
				return errWrongFactor
			}
			secret, err := s.store.OpenSecret(u.ID, u.TOTPPending)
			if err != nil {
				return err
			}
			step, ok := totpStep(string(secret), code, now)
			if !ok {
				return errWrongFactor
			}
			var hashes []string
			codes, hashes = newRecoveryCodes(u.ID)
			u.TOTP = &storage.TOTP{Secret: u.TOTPPending, Created: now.Unix(), AddedBy: storage.AddedHolder, LastUsed: now.Unix(), Step: step, Recovery: hashes,
				Unproven: !u.EmailVerified}
			u.TOTPPending, u.TOTPPendingUntil = nil, 0
			return nil
		}
		if u.TOTP == nil {
			return errWrongFactor
		}
		secret, err := s.store.OpenSecret(u.ID, u.TOTP.Secret)
		if err != nil {
			return err
		}
		if step, ok := totpStep(string(secret), code, now); ok {
			if step <= u.TOTP.Step {
				return errWrongFactor // this window's code was used
			}
			u.TOTP.Step, u.TOTP.LastUsed = step, now.Unix()
			return nil
		}
		h := recoveryHash(u.ID, code)
		for i, r := range u.TOTP.Recovery {
			if subtle.ConstantTimeCompare([]byte(r), []byte(h)) == 1 {
				u.TOTP.Recovery = append(u.TOTP.Recovery[:i:i], u.TOTP.Recovery[i+1:]...)
				u.TOTP.LastUsed, recovered = now.Unix(), true
				return nil
			}
		}
		return errWrongFactor
	})
	return codes, recovered, err
}

// guardedFactor is useSecondFactor under the password's abuse limits for
// account (known: the caller recognised the holder's device or token).
func (s *Service) guardedFactor(ctx context.Context, u storage.User, code string, enrol, known bool) ([]string, bool, error) {
	a, err := s.cfg.Guards.Login.Begin(ctx, loginAccount(u.Email), known)
	if err != nil {
		return nil, false, err
	}
	codes, recovered, err := s.useSecondFactor(ctx, u.ID, code, enrol)
	switch {
	case errors.Is(err, errWrongFactor):
		a.Done(ctx, password.ErrMismatch)
	case err != nil && ctx.Err() == nil:
		a.Cancel(ctx) // the store's fault, not the caller's
	default:
		a.Done(ctx, err)
	}
	if recovered {
		s.cfg.Audit.Record(ctx, audit.Event{Action: "auth.recovery_code_use", Actor: strconv.Itoa(int(u.ID)), Target: strconv.Itoa(int(u.ID)), Class: audit.ClassSignedIn,
			Attrs: []slog.Attr{slog.Int("left", s.recoveryLeft(ctx, u.ID))}})
	}
	return codes, recovered, err
}

func (s *Service) recoveryLeft(ctx context.Context, user int32) int {
	u, err := s.store.GetUser(ctx, user)
	if err != nil || u.TOTP == nil {
		return 0
	}
	return len(u.TOTP.Recovery)
}

// requiresSecondFactor reports whether one of u's roles requires a second
// factor (-require-2fa-for).
func (s *Service) requiresSecondFactor(u storage.User) bool {
	for _, sc := range u.Scopes {
		if contains(s.cfg.RequireSecondFactor, sc) {
			return true
		}
	}
	return false
}

// secondStep decides, after u's right password, whether the sign-in needs
// a second factor: when it does it answers the pending sign-in (nil when
// not). An account with TOTP is asked for a code; one whose role requires
// a second factor and has none is led to enrol TOTP; one with a passkey
// instead is told to sign in with it.
func (p Public) secondStep(ctx context.Context, c storage.Client, redirect string, u storage.User, ar *authv1.AuthorizeRequest) (*authv1.LoginResponse, error) {
	kind := grantSecondFactor
	res := &authv1.LoginResponse{RedirectUri: redirect}
	if u.TOTP == nil {
		role := p.requiresSecondFactor(u)
		if !role && !u.Requires(storage.ActionAddSecondFactor) {
			return nil, nil
		}
		ps, err := p.store.Passkeys(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		if len(ps) > 0 {
			if !role {
				// An operator's add_second_factor: a passkey is one
				// already (requiredStep clears the action).
				return nil, nil
			}
			return nil, rpcerr.New(rpcerr.ErrPrecondition, "your role requires a second factor: sign in with your passkey")
		}
		key, err := newTOTPSecret(u.Email)
		if err != nil {
			return nil, err
		}
		sealed, err := p.store.SealSecret(u.ID, []byte(key.Secret()))
		if err != nil {
			return nil, err
		}
		if err := p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
			cur.TOTPPending, cur.TOTPPendingUntil = sealed, p.now().Add(pendingTTL).Unix()
			return nil
		}); err != nil {
			return nil, err
		}
		kind, res.Enrol, res.TotpSecret, res.TotpUri = grantEnrolFactor, true, key.Secret(), key.URL()
	}
	pending := tokens.RandomString(32)
	g := storage.Grant{Kind: kind, ClientID: c.ID, UserID: u.ID, RedirectURI: redirect, Challenge: ar.GetCodeChallenge(), ChallengeMeth: ar.GetCodeChallengeMethod(),
		Scope: ar.GetScope(), Nonce: ar.GetNonce(), Expires: p.now().Add(pendingTTL).Unix()}
	if err := p.store.PutGrant(ctx, pending, g); err != nil {
		return nil, err
	}
	res.Pending = pending
	return res, nil
}

// LoginSecondFactor completes a sign-in whose password was right with a
// TOTP code or a recovery code (or enrols the factor its role requires).
// The pending sign-in is taken while its code is checked, so two tries
// never race, and put back after a wrong code until it expires.
func (p Public) LoginSecondFactor(ctx context.Context, r *authv1.LoginSecondFactorRequest) (res *authv1.LoginResponse, err error) {
	var user int32
	defer func() {
		ev := audit.Event{Action: "auth.login_second_factor", Err: err, Attrs: []slog.Attr{slog.String("client_id", r.GetRequest().GetClientId())}}
		if user != 0 {
			ev.Target = strconv.Itoa(int(user))
		}
		if err == nil {
			ev.Actor, ev.Class = strconv.Itoa(int(user)), audit.ClassSignedIn
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if err := inputlimit.Check(inputlimit.F("code", r.GetCode(), maxCode), inputlimit.F("pending", r.GetPending(), 256)); err != nil {
		return nil, p.err(ctx, err)
	}
	c, redirect, err := p.authorize(ctx, r.GetRequest())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	expired := unauth("the sign-in has expired: enter your password again")
	g, err := p.store.TakeGrant(ctx, r.GetPending())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, expired)
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	ar := r.GetRequest()
	if g.Expires < p.now().Unix() {
		return nil, p.err(ctx, expired)
	}
	if (g.Kind != grantSecondFactor && g.Kind != grantEnrolFactor) || g.ClientID != c.ID || g.RedirectURI != redirect || g.Challenge != ar.GetCodeChallenge() ||
		g.ChallengeMeth != ar.GetCodeChallengeMethod() || g.Scope != ar.GetScope() || g.Nonce != ar.GetNonce() {
		return nil, p.err(ctx, expired) // another flow's: spent, as it was shown elsewhere
	}
	user = g.UserID
	u, err := p.store.GetUser(ctx, g.UserID)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if u.Disabled {
		return nil, p.err(ctx, expired)
	}
	known, err := p.cfg.Guards.Login.KnownDevice(ctx, loginAccount(u.Email), r.GetDevice())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	codes, _, err := p.guardedFactor(ctx, u, r.GetCode(), g.Kind == grantEnrolFactor, known)
	if err != nil {
		if errors.Is(err, errWrongFactor) || ratelimit.IsThrottled(err) {
			if perr := p.store.PutGrant(ctx, r.GetPending(), g); perr != nil && g.Expires > p.now().Unix() {
				p.log.WarnContext(ctx, "putting back a pending sign-in", "err", perr)
			}
		}
		if errors.Is(err, errWrongFactor) {
			return nil, p.err(ctx, unauth("the code is wrong"))
		}
		return nil, p.err(ctx, err)
	}
	if g.Kind == grantEnrolFactor {
		p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.totp_enrol", Actor: strconv.Itoa(int(u.ID)), Target: strconv.Itoa(int(u.ID)), Class: audit.ClassSignedIn,
			Attrs: []slog.Attr{slog.String("reason", "role requires a second factor")}})
	}
	p.passwordUsed(ctx, u)
	if u, err = p.store.GetUser(ctx, u.ID); err != nil {
		return nil, p.err(ctx, err)
	}
	if res, err := p.requiredStep(ctx, c, redirect, u, ar, storage.MethodPasswordTOTP); err != nil {
		return nil, p.err(ctx, err)
	} else if res != nil {
		res.RecoveryCodes = codes
		return res, nil
	}
	code, err := p.authorizationCode(ctx, c, redirect, u, ar, storage.MethodPasswordTOTP)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.LoginResponse{Code: code, RedirectUri: redirect, RecoveryCodes: codes}, nil
}

// BeginTOTP starts the enrolment of a TOTP factor for the token's user.
func (p Public) BeginTOTP(ctx context.Context, r *authv1.BeginTOTPRequest) (*authv1.BeginTOTPResponse, error) {
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	if u.TOTP != nil {
		return nil, p.err(ctx, rpcerr.New(rpcerr.ErrPrecondition, "the account already has an authenticator app: remove it first"))
	}
	if u.PasswordHash != "" {
		if len(r.GetPassword()) > inputlimit.Password {
			return nil, p.err(ctx, unauth("the password is wrong"))
		}
		if err := p.hash.Verify(ctx, u.PasswordHash, r.GetPassword(), p.cfg.Guards.Login.Gate(loginAccount(u.Email), true)); err != nil {
			if ratelimit.IsThrottled(err) || ctx.Err() != nil || !errors.Is(err, password.ErrMismatch) {
				return nil, p.err(ctx, err)
			}
			return nil, p.err(ctx, unauth("the password is wrong"))
		}
	}
	key, err := newTOTPSecret(u.Email)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	sealed, err := p.store.SealSecret(u.ID, []byte(key.Secret()))
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if err := p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
		cur.TOTPPending, cur.TOTPPendingUntil = sealed, p.now().Add(enrolTTL).Unix()
		return nil
	}); err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.BeginTOTPResponse{Secret: key.Secret(), Uri: key.URL()}, nil
}

// FinishTOTP proves the begun factor with its first code and makes it the
// account's; it answers the recovery codes, shown once.
func (p Public) FinishTOTP(ctx context.Context, r *authv1.FinishTOTPRequest) (_ *authv1.FinishTOTPResponse, err error) {
	var actor string
	defer func() {
		if actor != "" {
			p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.totp_enrol", Actor: actor, Target: actor, Err: err, Class: audit.ClassSignedIn})
		}
	}()
	if err := inputlimit.Check(inputlimit.F("code", r.GetCode(), maxCode)); err != nil {
		return nil, p.err(ctx, err)
	}
	u, t, err := p.bearer(ctx)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if t.IsClient() {
		return nil, p.err(ctx, denied("the access token is a client's own: it has no user"))
	}
	actor = strconv.Itoa(int(u.ID))
	codes, _, err := p.guardedFactor(ctx, u, r.GetCode(), true, true)
	if errors.Is(err, errWrongFactor) {
		return nil, p.err(ctx, invalid("the code is wrong, or the enrolment has expired: start again"))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.FinishTOTPResponse{RecoveryCodes: codes}, nil
}

// proveHolder checks the proof a holder gives to remove the second
// factor: a current TOTP code (or recovery code) or the password.
func (p Public) proveHolder(ctx context.Context, u storage.User, proof string) error {
	if len(proof) > inputlimit.Password {
		return unauth("the code or password is wrong")
	}
	if u.TOTP != nil {
		_, _, err := p.guardedFactor(ctx, u, proof, false, true)
		if err == nil || !errors.Is(err, errWrongFactor) {
			return err
		}
	}
	if u.PasswordHash == "" {
		return unauth("the code or password is wrong")
	}
	if err := p.hash.Verify(ctx, u.PasswordHash, proof, p.cfg.Guards.Login.Gate(loginAccount(u.Email), true)); err != nil {
		if ratelimit.IsThrottled(err) || ctx.Err() != nil || !errors.Is(err, password.ErrMismatch) {
			return err
		}
		return unauth("the code or password is wrong")
	}
	return nil
}

func totpCredential(t *storage.TOTP) *authv1.Credential {
	return &authv1.Credential{Kind: kindTOTP, Created: uint32(t.Created), AddedBy: t.AddedBy, Proven: !t.Unproven, LastUsed: uint32(t.LastUsed)}
}

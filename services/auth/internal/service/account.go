package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/inputlimit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Account self-service: links mailed to a person (password reset), and
// what they do with them. A link's token is 256 random bits, stored by its
// SHA-256 only (storage.AccountToken), single use and short-lived.

// Mailer sends a person a mail (pkg/mailer.SMTP is one).
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// errDeadLink is the one answer for a link that cannot be used: unknown,
// spent, expired, of another purpose, or of a password changed since.
var errDeadLink = notFound("this link has expired or has been used already")

// passwordStamp binds a reset token to the password it replaces: once the
// password changes, by a reset, a change or an operator, the link is dead.
func passwordStamp(hash string) string {
	sum := sha256.Sum256([]byte("password-reset\x00" + hash))
	return hex.EncodeToString(sum[:16])
}

func (p Public) RequestPasswordReset(ctx context.Context, r *authv1.RequestPasswordResetRequest) (_ *authv1.RequestPasswordResetResponse, err error) {
	var user int32
	defer func() {
		ev := audit.Event{Action: "auth.password_reset_request", Target: auditEmail(r.GetEmail()), Err: err}
		if user != 0 {
			ev.Attrs = []slog.Attr{slog.Int("user", int(user))}
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if err := inputlimit.Check(inputlimit.F("email", r.GetEmail(), inputlimit.Email), inputlimit.F("lang", r.GetLang(), inputlimit.Param)); err != nil {
		return nil, p.err(ctx, err)
	}
	email := strings.TrimSpace(r.GetEmail())
	if !validEmail(email) {
		return nil, p.err(ctx, invalid("email is not a valid address"))
	}
	// Every request is spent, known address or not, before anything is
	// looked up: a refusal says nothing about the account, and the mails
	// one address or one stranger can cause are bounded. The holder's own
	// browser (a known device) skips the account's ceiling, which strangers
	// from many addresses can reach.
	account := loginAccount(email)
	known, err := p.cfg.Guards.Login.KnownDevice(ctx, account, r.GetDevice())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	a, err := p.cfg.Guards.Reset.Begin(ctx, account, known)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	a.Failed(ctx)
	u, err := p.store.GetUserByEmail(ctx, email)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && u.Disabled) {
		return &authv1.RequestPasswordResetResponse{}, nil
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	token := tokens.RandomString(32)
	t := storage.AccountToken{Purpose: storage.TokenPasswordReset, UserID: u.ID, Email: u.Email, Stamp: passwordStamp(u.PasswordHash),
		Expires: p.now().Add(p.cfg.ResetTTL).Unix()}
	user = u.ID
	link := strings.TrimRight(p.cfg.Issuer, "/") + publicPrefix(ctx) + "/reset?token=" + token
	subject, body := resetMail(r.GetLang(), u.Email, link, ttlText(p.cfg.ResetTTL))
	// Stored and sent in the background: the answer for an address with
	// an account must not take longer than for one without.
	bg := context.WithoutCancel(ctx)
	p.spawn(func() {
		if err := p.store.PutAccountToken(bg, token, t); err != nil {
			p.log.ErrorContext(bg, "storing a password reset link failed", "user", u.ID, "err", err)
			return
		}
		p.mail(bg, "password reset link", u.Email, subject, body, link)
	})
	return &authv1.RequestPasswordResetResponse{}, nil
}

// mail sends in the background: the answer must not take longer for an
// address that has an account than for one that has none. Without a mail
// server the link goes to the operator's log, as the broker's activation
// codes do.
func (s *Service) mail(ctx context.Context, what, to, subject, body, link string) {
	ctx = context.WithoutCancel(ctx)
	if s.cfg.Mail == nil {
		s.log.WarnContext(ctx, what+" (no SMTP server configured: hand it to the user)", "email", to, "link", link)
		return
	}
	s.spawn(func() {
		if err := s.cfg.Mail.Send(ctx, to, subject, body); err != nil {
			s.log.ErrorContext(ctx, "sending a mail failed", "what", what, "email", to, "err", err)
		}
	})
}

// ttlText writes a link's lifetime as people read it: "30m", "72h".
func ttlText(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// resetMail is the reset link's mail, in the language the page was in.
func resetMail(lang, email, link, ttl string) (subject, body string) {
	if lang == "de" {
		return "FRIS: Passwort zurücksetzen", fmt.Sprintf("Jemand hat für das FRIS-Konto %s ein neues Passwort angefordert.\r\n\r\n"+
			"Mit diesem Link setzen Sie es (er gilt %s und nur einmal):\r\n%s\r\n\r\n"+
			"Waren Sie das nicht, ignorieren Sie diese Nachricht: Ihr Passwort bleibt, wie es ist.\r\n", email, ttl, link)
	}
	return "FRIS: reset your password", fmt.Sprintf("Someone asked for a new password for the FRIS account %s.\r\n\r\n"+
		"Set it with this link (good for %s, once):\r\n%s\r\n\r\n"+
		"If that was not you, ignore this message: your password stays as it is.\r\n", email, ttl, link)
}

// linkToken reads a live token of purpose and its user, without spending
// it; errDeadLink when it cannot be used. Presenting tokens is limited per
// client address, as every credential is.
func (p Public) linkToken(ctx context.Context, token, purpose string) (storage.AccountToken, storage.User, error) {
	if err := inputlimit.Check(inputlimit.F("token", token, inputlimit.Param)); err != nil {
		return storage.AccountToken{}, storage.User{}, err
	}
	a, err := p.cfg.Guards.Link.Begin(ctx, "", false)
	if err != nil {
		return storage.AccountToken{}, storage.User{}, err
	}
	t, u, err := p.liveToken(ctx, token, purpose)
	if errors.Is(err, errDeadLink) {
		a.Failed(ctx)
	} else {
		a.Cancel(ctx)
	}
	return t, u, err
}

func (p Public) liveToken(ctx context.Context, token, purpose string) (storage.AccountToken, storage.User, error) {
	t, err := p.store.PeekAccountToken(ctx, token)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && t.Purpose != purpose) {
		return t, storage.User{}, errDeadLink
	} else if err != nil {
		return t, storage.User{}, err
	}
	u, err := p.store.GetUser(ctx, t.UserID)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && (u.Disabled || !stillGood(t, u))) {
		return t, u, errDeadLink
	}
	return t, u, err
}

// stillGood: a reset token only for the password it was issued for, a
// verification token only for the address it was sent to.
func stillGood(t storage.AccountToken, u storage.User) bool {
	switch t.Purpose {
	case storage.TokenPasswordReset:
		return t.Stamp == passwordStamp(u.PasswordHash)
	case storage.TokenEmailVerification:
		return storage.NormalizeEmail(t.Email) == storage.NormalizeEmail(u.Email)
	}
	return false
}

func purposeOf(p authv1.AccountTokenPurpose) string {
	switch p {
	case authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_PASSWORD_RESET:
		return storage.TokenPasswordReset
	case authv1.AccountTokenPurpose_ACCOUNT_TOKEN_PURPOSE_EMAIL_VERIFICATION:
		return storage.TokenEmailVerification
	}
	return ""
}

func (p Public) CheckAccountToken(ctx context.Context, r *authv1.CheckAccountTokenRequest) (*authv1.CheckAccountTokenResponse, error) {
	purpose := purposeOf(r.GetPurpose())
	if purpose == "" {
		return nil, p.err(ctx, invalid("purpose is required"))
	}
	_, u, err := p.linkToken(ctx, r.GetToken(), purpose)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.CheckAccountTokenResponse{Email: u.Email}, nil
}

func (p Public) ResetPassword(ctx context.Context, r *authv1.ResetPasswordRequest) (_ *authv1.ResetPasswordResponse, err error) {
	var u storage.User
	defer func() {
		ev := audit.Event{Action: "auth.password_reset", Err: err}
		if u.ID != 0 {
			ev.Target = strconv.Itoa(int(u.ID))
		}
		if err == nil {
			// The mailed link proved the address: its holder signed in.
			ev.Actor, ev.Class = ev.Target, audit.ClassSignedIn
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	// A password the policy refuses does not spend the link; the policy
	// needs the account's address, which the link names.
	if err := inputlimit.Check(inputlimit.F("password", r.GetPassword(), inputlimit.Password)); err != nil {
		return nil, p.err(ctx, err)
	}
	t, u, err := p.linkToken(ctx, r.GetToken(), storage.TokenPasswordReset)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if err := p.checkNewPassword(r.GetPassword(), u.Email); err != nil {
		return nil, p.err(ctx, err)
	}
	h, err := p.hash.Hash(ctx, r.GetPassword())
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if _, err := p.store.TakeAccountToken(ctx, r.GetToken()); errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, errDeadLink) // spent by a concurrent use
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	// Following the link proved the mailbox: what nobody proved before
	// (a stranger's key registered for the address) goes, before the
	// update revokes every token it may have got.
	removed, err := p.revokeUnproven(ctx, u, "reset")
	if err != nil {
		return nil, p.err(ctx, err)
	}
	// Whoever learnt the old password may hold tokens: the new one ends
	// every session, as an operator's set-password does.
	err = p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
		if !stillGood(t, *cur) {
			return errDeadLink
		}
		cur.PasswordHash, cur.RevokedBefore = h, p.revokeNow(cur.RevokedBefore)
		cur.Clear(storage.ActionChangePassword) // the holder chose this one
		cur.PasswordSet, cur.PasswordBy = p.now().Unix(), storage.AddedReset
		if len(removed) > 0 {
			cur.Removed = removedRecords(p.now().Unix(), removed, cur.Removed)
		}
		if storage.NormalizeEmail(cur.Email) == storage.NormalizeEmail(t.Email) {
			cur.EmailVerified = true
		}
		return nil
	})
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.ResetPasswordResponse{Email: u.Email, Removed: removed}, nil
}

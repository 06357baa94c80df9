package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fris.dev/pkg/audit"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Email verification: a user whose address nobody has confirmed gets a
// link; following it sets email_verified, which userinfo and the id
// tokens issued from then on carry.

// sendVerification mails u a verification link for its current address.
// A failure is logged, never the caller's: the user exists either way,
// and an operator can have the link sent again.
func (s *Service) sendVerification(ctx context.Context, u storage.User) {
	token := tokens.RandomString(32)
	t := storage.AccountToken{Purpose: storage.TokenEmailVerification, UserID: u.ID, Email: u.Email, Expires: s.now().Add(s.cfg.VerifyTTL).Unix()}
	if err := s.store.PutAccountToken(ctx, token, t); err != nil {
		s.log.ErrorContext(ctx, "storing an email verification link failed", "user", u.ID, "err", err)
		return
	}
	link := strings.TrimRight(s.cfg.Issuer, "/") + publicPrefix(ctx) + "/verify?token=" + token
	subject, body := verifyMail(u.Email, link, ttlText(s.cfg.VerifyTTL))
	s.mail(ctx, "email verification link", u.Email, subject, body, link)
}

// verifyMail is in English and German: an operator's create-user has no
// page whose language it could follow.
func verifyMail(email, link, ttl string) (subject, body string) {
	return "FRIS: confirm your email address / E-Mail-Adresse bestätigen", fmt.Sprintf(
		"A FRIS account was set up for %[1]s. Confirm that this address is yours with this link (good for %[3]s):\r\n%[2]s\r\n\r\n"+
			"Für %[1]s wurde ein FRIS-Konto eingerichtet. Bestätigen Sie mit diesem Link, dass die Adresse Ihnen gehört (er gilt %[3]s):\r\n%[2]s\r\n\r\n"+
			"If you did not expect this, ignore this message. / Haben Sie das nicht erwartet, ignorieren Sie diese Nachricht.\r\n", email, link, ttl)
}

func (p Public) VerifyEmail(ctx context.Context, r *authv1.VerifyEmailRequest) (_ *authv1.VerifyEmailResponse, err error) {
	var u storage.User
	defer func() {
		ev := audit.Event{Action: "auth.email_verify", Err: err}
		if u.ID != 0 {
			ev.Target = strconv.Itoa(int(u.ID))
		}
		if err == nil {
			// The mailed link proved the address: its holder signed in.
			ev.Actor, ev.Class = ev.Target, audit.ClassSignedIn
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	t, u, err := p.linkToken(ctx, r.GetToken(), storage.TokenEmailVerification)
	if err != nil {
		return nil, p.err(ctx, err)
	}
	if _, err := p.store.TakeAccountToken(ctx, r.GetToken()); errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, errDeadLink)
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	// The owner has proven the address: what nobody proved before goes,
	// and with it every token issued so far (a stranger's key may have
	// got some).
	removed, err := p.revokeUnproven(ctx, u, "verification")
	if err != nil {
		return nil, p.err(ctx, err)
	}
	err = p.store.UpdateUser(ctx, u.ID, func(cur *storage.User) error {
		if !stillGood(t, *cur) {
			return errDeadLink
		}
		cur.EmailVerified = true
		cur.Clear(storage.ActionVerifyEmail)
		if len(removed) > 0 {
			cur.RevokedBefore = p.revokeNow(cur.RevokedBefore)
			cur.Removed = removedRecords(p.now().Unix(), removed, cur.Removed)
		}
		return nil
	})
	if err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.VerifyEmailResponse{Email: u.Email, Removed: removed}, nil
}

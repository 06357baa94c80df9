package service

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Grant types of the token endpoint (RFC 6749). The spec's clients send
// none: their flow follows from the fields they send.
const (
	grantCode    = "authorization_code"
	grantRefresh = "refresh_token"
	grantClient  = "client_credentials"
)

// OAuth 2.0 error codes (RFC 6749 5.2) the status code alone does not tell.
const (
	reasonUnsupportedGrant = "unsupported_grant_type"
	reasonInvalidClient    = "invalid_client"
)

// Token issues tokens by one of the spec's three flows, or by
// client_credentials.
func (p Public) Token(ctx context.Context, r *authv1.TokenRequest) (*authv1.TokenResponse, error) {
	var (
		set  tokens.Set
		err  error
		flow string
	)
	gt := r.GetGrantType()
	tooLong := tokenLimits(r)
	switch {
	case tooLong != nil:
		flow = "invalid"
		err = tooLong
	case gt == grantClient:
		flow = grantClient
		set, err = p.clientCredentials(ctx, r)
	case gt != "" && gt != grantCode && gt != grantRefresh:
		flow = "unsupported"
		err = rpcerr.WithReason(invalid("grant_type is not supported: use authorization_code, refresh_token or client_credentials"), reasonUnsupportedGrant)
	case r.GetRefreshToken() != "" && gt != grantCode:
		flow = grantRefresh
		set, err = p.refresh(ctx, r)
	case r.GetCode() != "" && gt != grantRefresh && r.GetSignature() != "":
		flow = "signature"
		set, err = p.signedCode(ctx, r)
	case r.GetCode() != "" && gt != grantRefresh:
		flow = grantCode
		set, err = p.clientCode(ctx, r)
	default:
		flow = "none"
		err = invalid("no payload: send code with client_id and client_secret, code with signature, or refresh_token")
	}
	if err != nil {
		err = p.err(ctx, err)
	}
	// Who signed in, by which flow; never the code, secret or token.
	ev := audit.Event{Action: "auth.token." + flow, Actor: set.Subject, Err: err, Class: signedIn(err == nil)}
	if id := r.GetClientId(); id != "" {
		ev.Attrs = append(ev.Attrs, slog.String("client_id", id))
	}
	p.cfg.Audit.Record(ctx, ev)
	if err != nil {
		return nil, err
	}
	res := &authv1.TokenResponse{AccessToken: set.Access, TokenType: "Bearer", ExpiresIn: uint32(set.ExpiresIn / time.Second)}
	if set.ID != "" {
		res.IdToken = &set.ID
	}
	if set.Refresh != "" {
		res.RefreshToken = &set.Refresh
	}
	return res, nil
}

// clientCredentials issues a client a token of its own (RFC 6749 4.4): the
// client authenticates with its secret, and the token names the client, not
// a user (tokens.IssueClient). It carries the deployment's default scopes
// except the role scopes: those name what a person may do, and a client's
// own token acts for no person (docs/security.md, Roles).
func (p Public) clientCredentials(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	failed := rpcerr.WithReason(unauth("client authentication failed"), reasonInvalidClient)
	if r.GetClientId() == "" || r.GetClientSecret() == "" {
		return tokens.Set{}, failed
	}
	c, err := p.store.GetClient(ctx, r.GetClientId())
	if errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, p.unknownClient(ctx, r.GetClientId(), r.GetClientSecret(), failed)
	} else if err != nil {
		return tokens.Set{}, err
	}
	if err := p.checkSecret(ctx, c, r.GetClientSecret(), failed, false); err != nil {
		return tokens.Set{}, err
	}
	if c.Disabled {
		return tokens.Set{}, rpcerr.WithReason(unauth("the client has been disabled"), reasonInvalidClient)
	}
	var scopes []string
	for _, s := range p.cfg.DefaultScopes {
		if !identity.IsRoleScope(s) {
			scopes = append(scopes, s)
		}
	}
	return p.tokens.IssueClient(c.ID, scopes, c.RevokedBefore, jwa.SignatureAlgorithm(c.Alg))
}

// checkSecret verifies a client's secret: failed when wrong, 429 while
// the client ID failed too often from the caller's address (or from
// everywhere, for an address the client never succeeded from) or the
// address failed too often, then without hashing anything. A secret
// verified a moment ago is accepted without touching the abuse limits, and
// concurrent checks of one secret share a hash and one limiter charge
// (password.Hasher.Verify): a client's holder is never refused because
// strangers guess its secret.
//
// known says the request itself shows the client's holder (a fresh code
// of the client's): the account ceiling does not apply.
func (p Public) checkSecret(ctx context.Context, c storage.Client, secret string, failed error, known bool) error {
	err := p.hash.Verify(ctx, c.SecretHash, secret, p.cfg.Guards.Secret.Gate(c.ID, known))
	switch {
	case err == nil:
		return nil
	case ratelimit.IsThrottled(err):
		return err
	case ctx.Err() != nil:
		// Gave up waiting for a hashing slot: not the client's mistake.
		return ctx.Err()
	}
	return failed
}

// unknownClient answers a secret presented for a client ID that does not
// exist exactly as a wrong secret: refused by the same abuse limit, after
// as long as a hash takes, counted as a failure; failed is the answer.
func (p Public) unknownClient(ctx context.Context, id, secret string, failed error) error {
	a, err := p.cfg.Guards.Secret.Begin(ctx, id, false)
	if err != nil {
		return err
	}
	p.hash.Burn(ctx, secret)
	if ctx.Err() != nil {
		a.Cancel(ctx)
		return ctx.Err()
	}
	a.Failed(ctx)
	return failed
}

// authClient authenticates a client by id and secret (RFC 6749 2.3.1, the
// gateway moves Basic credentials into the request): unknown, wrong or
// disabled is 401 invalid_client, without telling which.
func (p Public) authClient(ctx context.Context, id, secret string) (storage.Client, error) {
	failed := rpcerr.WithReason(unauth("client authentication failed"), reasonInvalidClient)
	if id == "" || secret == "" {
		return storage.Client{}, failed
	}
	c, err := p.store.GetClient(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Client{}, p.unknownClient(ctx, id, secret, failed)
	} else if err != nil {
		return storage.Client{}, err
	}
	if err := p.checkSecret(ctx, c, secret, failed, false); err != nil {
		return storage.Client{}, err
	}
	if c.Disabled {
		return storage.Client{}, failed
	}
	return c, nil
}

// clientCode is flow 1: a code from the browser login plus the client's
// secret.
func (p Public) clientCode(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	unknown := notFound("client ID, client secret or code unknown")
	c, err := p.store.GetClient(ctx, r.GetClientId())
	if errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, p.unknownClient(ctx, r.GetClientId(), r.GetClientSecret(), unknown)
	} else if err != nil {
		return tokens.Set{}, err
	}
	if r.GetClientSecret() == "" {
		return tokens.Set{}, unknown
	}
	// A code fresh from a user's sign-in at this client shows the
	// client's own flow (a browser coming through the Explorer from an
	// address never seen before): its secret check skips the account
	// ceiling that strangers guessing the secret can exhaust. The code is
	// only looked at here; a failed check leaves it usable.
	g, err := p.store.PeekGrant(ctx, r.GetCode())
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, err
	}
	fresh := err == nil && g.Kind == storage.GrantAuthorization && g.ClientID == c.ID
	if err := p.checkSecret(ctx, c, r.GetClientSecret(), unknown, fresh); err != nil {
		return tokens.Set{}, err
	}
	if c.Disabled {
		return tokens.Set{}, unauth("the client has been disabled")
	}
	g, err = p.store.TakeGrant(ctx, r.GetCode())
	if errors.Is(err, storage.ErrNotFound) || (err == nil && (g.Kind != storage.GrantAuthorization || g.ClientID != c.ID)) {
		return tokens.Set{}, notFound("client ID, client secret or code unknown")
	} else if err != nil {
		return tokens.Set{}, err
	}
	if g.Challenge != "" {
		sum := sha256.Sum256([]byte(r.GetCodeVerifier()))
		if r.GetCodeVerifier() == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.Challenge {
			return tokens.Set{}, invalid("code_verifier does not match the code_challenge")
		}
	}
	if r.GetRedirectUri() != "" && r.GetRedirectUri() != g.RedirectURI {
		return tokens.Set{}, invalid("redirect_uri differs from the authorization request's")
	}
	u, err := p.activeUser(ctx, g.UserID)
	if err != nil {
		return tokens.Set{}, err
	}
	return p.signInShaped(ctx, u, c, g.Nonce, g.Addr, shapeOf(r))
}

// signedCode is flow 2: a code from a sign request, signed with the user's
// private key. client_id is optional: the sign request already names the key
// and its user, and the Samply auth client sends none. Without it the tokens
// are issued to no client: their aud is the issuer.
func (p Public) signedCode(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	var c storage.Client
	if id := r.GetClientId(); id != "" {
		var err error
		c, err = p.store.GetClient(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return tokens.Set{}, notFound("client ID or sign request unknown")
		} else if err != nil {
			return tokens.Set{}, err
		}
		if c.Disabled {
			return tokens.Set{}, unauth("the client has been disabled")
		}
	}
	// The key is known once the sign request is taken (a lookup, no
	// work); an unknown code counts against the address alone.
	guard := p.cfg.Guards.Signature
	g, err := p.store.TakeGrant(ctx, r.GetCode())
	if errors.Is(err, storage.ErrNotFound) || (err == nil && g.Kind != storage.GrantSignRequest) {
		a, err := guard.Begin(ctx, "", false)
		if err != nil {
			return tokens.Set{}, err
		}
		a.Failed(ctx)
		return tokens.Set{}, notFound("the sign request is unknown")
	} else if err != nil {
		return tokens.Set{}, err
	}
	account := "key:" + strconv.Itoa(int(g.KeyID))
	a, err := guard.Begin(ctx, account, false)
	if err != nil {
		return tokens.Set{}, err
	}
	key, err := p.store.GetUserKey(ctx, g.KeyID)
	if err != nil {
		a.Cancel(ctx)
		return tokens.Set{}, fmt.Errorf("key of a sign request: %w", err)
	}
	pub, err := parseRSA(key.DER, 0)
	if err != nil {
		a.Cancel(ctx)
		return tokens.Set{}, err
	}
	sig, err := decodeSignature(r.GetSignature())
	if err != nil {
		a.Failed(ctx)
		return tokens.Set{}, invalid("signature is not base64")
	}
	sum := sha512.Sum512([]byte(r.GetCode()))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA512, sum[:], sig) != nil {
		a.Failed(ctx)
		return tokens.Set{}, unauth("the signature does not verify with the registered key")
	}
	a.Succeeded(ctx)
	u, err := p.activeUser(ctx, g.UserID)
	if err != nil {
		return tokens.Set{}, err
	}
	set, err := p.signInShaped(ctx, u, c, "", identity.Incoming(ctx, identity.KeyClientAddr), shapeOf(r))
	if err == nil {
		p.recordSignIn(ctx, u.ID, storage.MethodKey, c.ID)
		p.keyUsed(ctx, key)
	}
	return set, err
}

// decodeSignature reads standard base64, tolerating whitespace, missing
// padding and the URL alphabet, which clients produce in the wild.
func decodeSignature(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\n', '\r', '\t':
			return -1
		case '-':
			return '+'
		case '_':
			return '/'
		}
		return r
	}, s)
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// refresh is flow 3, with rotation and reuse detection. The refresh token
// alone is enough (the spec's clients send nothing else); a client that
// also authenticates, as standard libraries do, must be the token's client
// and present its right secret.
func (p Public) refresh(ctx context.Context, r *authv1.TokenRequest) (tokens.Set, error) {
	t, err := p.tokens.Read(ctx, r.GetRefreshToken(), tokens.TypeRefresh)
	switch {
	case errors.Is(err, tokens.ErrMalformed):
		return tokens.Set{}, invalid("the refresh token is not valid")
	case err != nil:
		return tokens.Set{}, denied("the refresh token is expired or not a refresh token")
	}
	if id := r.GetClientId(); id != "" && id != t.ClientID() {
		return tokens.Set{}, denied("the refresh token was issued to another client")
	}
	var c storage.Client
	if t.ClientID() != "" {
		c, err = p.store.GetClient(ctx, t.ClientID())
		if errors.Is(err, storage.ErrNotFound) {
			return tokens.Set{}, denied("the refresh token's client no longer exists")
		} else if err != nil {
			return tokens.Set{}, err
		}
	}
	u, err := p.store.GetUser(ctx, t.UserID())
	if errors.Is(err, storage.ErrNotFound) {
		return tokens.Set{}, denied("the user no longer exists")
	} else if err != nil {
		return tokens.Set{}, err
	}
	// Revoked (a disable, a new password, an operator's or RFC 7009
	// revocation after the token was issued) is 403 like any dead refresh
	// token, even once the user or client is enabled again.
	if revokedBy(t, u, c) {
		return tokens.Set{}, denied("the refresh token has been revoked")
	}
	if c.Disabled {
		return tokens.Set{}, unauth("the client has been disabled")
	}
	if sec := r.GetClientSecret(); sec != "" {
		if c.ID == "" {
			return tokens.Set{}, rpcerr.WithReason(unauth("client authentication failed: the refresh token was issued to no client"), reasonInvalidClient)
		}
		if err := p.checkSecret(ctx, c, sec, rpcerr.WithReason(unauth("client authentication failed"), reasonInvalidClient), false); err != nil {
			return tokens.Set{}, err
		}
	}
	if u.Disabled {
		return tokens.Set{}, unauth("the user has been disabled")
	}
	if t.Session == "" {
		// Issued before refresh tokens carried their chain: its record
		// is not kept any more.
		return tokens.Set{}, denied("the refresh token is not valid any more; sign in again")
	}
	spent := storage.Refresh{JTI: t.ID, Chain: t.Session, UserID: u.ID, ClientID: c.ID, Expires: int64(t.ExpiresAt)}
	return p.issue(ctx, u, c, "", &spent, shapeOf(r))
}

func (p Public) activeUser(ctx context.Context, id int32) (storage.User, error) {
	u, err := p.store.GetUser(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return u, denied("the user no longer exists")
	} else if err != nil {
		return u, err
	}
	if u.Disabled {
		return u, unauth("the user has been disabled")
	}
	return u, nil
}

// issue signs a token set. A sign-in starts a new refresh chain, which
// needs no write: the refresh token carries its chain, and the store only
// learns of a token when it is spent. A refresh spends the presented token
// (spent) and continues its chain; the spend is committed while the tokens
// are signed, so the response waits for the slower of the two rather than
// for both in turn, and is only answered once the spend is durable. Under
// load the spend shares its commit with others (defaultSpendWait). A
// refused spend (reuse, revoked chain) wastes the signatures, which is no
// more work than an accepted one. Signing cannot fail with a loaded key; if
// it did after a spend, the presented token would be gone and the client
// would sign in again.
//
// What the response carries follows the request's shape (shape).
func (p Public) issue(ctx context.Context, u storage.User, c storage.Client, nonce string, spent *storage.Refresh, sh shape) (tokens.Set, error) {
	scopes := append([]string{"openid"}, p.cfg.DefaultScopes...)
	own, dropped := grantable(u.Scopes)
	if len(dropped) > 0 {
		p.log.WarnContext(ctx, "the user holds scopes that are not RFC 6749 scope-tokens: left out of the token; set their scopes again", "user", u.ID, "scopes", fmt.Sprintf("%q", dropped))
	}
	scopes = append(scopes, own...)
	legacy := sh == shapeSpec || p.cfg.LegacyRefresh
	sub := tokens.Subject{
		UserID: u.ID, ClientID: c.ID, Email: u.Email, Name: u.RealName,
		EmailVerified: u.EmailVerified, Scopes: scopes, Nonce: nonce,
		RevokedBefore: max(u.RevokedBefore, c.RevokedBefore),
		RSARefresh:    legacy, NoIDToken: spent != nil && !legacy,
		LinkAccess: p.cfg.RefreshSupersedesAccess,
		Alg:        jwa.SignatureAlgorithm(c.Alg),
	}
	if spent == nil {
		sub.Session = tokens.RandomString(16)
		return p.tokens.Plan(sub).Sign()
	}
	sub.Session = spent.Chain
	plan := p.tokens.Plan(sub)
	recorded := make(chan error, 1)
	// The spend may wait up to SpendWait for others to share its commit;
	// signed() commits it at once if it is still waiting by then.
	wctx, signed := kv.WithFlush(ctx, p.cfg.SpendWait)
	go func() { recorded <- p.spend(wctx, *spent, plan.RefreshExpires) }()
	set, signErr := plan.Sign()
	signed()
	if err := <-recorded; err != nil {
		return tokens.Set{}, err
	}
	return set, signErr
}

// defaultSpendWait bounds how long a refresh's spend waits for others to
// share its commit. On an idle store the spend commits at once, while the
// tokens are signed. On a busy machine the spend's goroutine mostly gets no
// CPU until the signing is done; it then waits up to the bound, and the
// spends of that time share one commit: fewer commits, and less time the
// cores wait on fdatasync with nothing to sign (BENCHMARKS.md, suite auth,
// eighth series).
const defaultSpendWait = 10 * time.Millisecond

// spend marks a presented refresh token used. chainUntil is when the
// newest token of its chain, the one being issued, expires.
func (p Public) spend(ctx context.Context, r storage.Refresh, chainUntil time.Time) error {
	err := p.store.SpendRefresh(ctx, r, chainUntil)
	switch {
	case errors.Is(err, storage.ErrReused):
		p.log.WarnContext(ctx, "refresh token reused: chain revoked", "user", r.UserID, "client", r.ClientID)
		err := denied("the refresh token was already used; its chain is revoked")
		// Signed-in, not folded: the presenter holds a refresh token this
		// service issued to the user, and a chain is revoked, so reported,
		// once.
		p.cfg.Audit.Record(ctx, audit.Event{Action: "auth.refresh.reuse", Actor: strconv.Itoa(int(r.UserID)), Err: err, Class: audit.ClassSignedIn,
			Attrs: []slog.Attr{slog.String("client_id", r.ClientID), slog.Bool("chain_revoked", true)}})
		return err
	case errors.Is(err, storage.ErrRevoked):
		return denied("the refresh token has been revoked")
	case errors.Is(err, storage.ErrNotFound):
		return denied("the refresh token is not valid any more")
	}
	return err
}

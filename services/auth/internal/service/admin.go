package service

import (
	"context"
	"fmt"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"net/url"
	"regexp"
	"strings"
	"time"

	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/keys"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Admin implements AuthAdmin.
type Admin struct {
	authv1.UnimplementedAuthAdminServer
	*Service
}

// Client types of the spec's `type`.
var clientTypes = map[string]bool{"MDR": true, "FORMREPOSITORY": true, "UNDEFINED": true}

// validClientID: client IDs travel unescaped in query strings, form posts and
// the tokens' aud claim, and a store key must hold them.
var validClientID = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,128}$`)

func (a Admin) clientRecord(c storage.Client) *authv1.ClientRecord {
	return &authv1.ClientRecord{Client: apiClient(c), Disabled: c.Disabled, Created: uint32(c.Created), Alg: a.keys.SignerFor(jwa.SignatureAlgorithm(c.Alg)).Alg.String()}
}

// clientAlg is the stored form of a client's algorithm: "" for RSA (the
// RSA key's algorithm, RS256 unless -alg says RS512), ES256 or EdDSA.
func clientAlg(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "rs256", "rsa":
		return "", nil
	case "es256":
		return jwa.ES256.String(), nil
	case "eddsa":
		return jwa.EdDSA.String(), nil
	}
	return "", invalid("alg must be RS256, ES256 or EdDSA")
}

func userRecord(u storage.User) *authv1.UserRecord {
	return &authv1.UserRecord{
		Id: u.ID, Email: u.Email, RealName: u.RealName, ContactInformation: u.Contact,
		Locality:      &authv1.Locality{Id: u.Locality.ID, Name: u.Locality.Name, Description: u.Locality.Description},
		EmailVerified: u.EmailVerified, Disabled: u.Disabled, Scopes: u.Scopes, HasPassword: u.PasswordHash != "",
		Created: uint32(u.Created), RequiredActions: u.RequiredActions,
	}
}

func splitURLs(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := url.Parse(part)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
			return nil, invalid("redirect URL %q must be an absolute http(s) URL without fragment", part)
		}
		if len(part) > inputlimit.URL {
			return nil, invalid("a redirect URL may have at most %d bytes", inputlimit.URL)
		}
		out = append(out, part)
	}
	if len(out) > maxRedirectURLs {
		return nil, invalid("a client may have at most %d redirect URLs", maxRedirectURLs)
	}
	return out, nil
}

func (a Admin) CreateClient(ctx context.Context, r *authv1.CreateClientRequest) (*authv1.CreateClientResponse, error) {
	if err := createClientLimits(r); err != nil {
		return nil, a.err(ctx, err)
	}
	typ := strings.ToUpper(r.GetType())
	if typ == "" {
		typ = "UNDEFINED"
	}
	if !clientTypes[typ] {
		return nil, a.err(ctx, invalid("type must be MDR, FORMREPOSITORY or UNDEFINED"))
	}
	if strings.TrimSpace(r.GetName()) == "" {
		return nil, a.err(ctx, invalid("name is required"))
	}
	urls, err := splitURLs(r.GetRedirectUrl())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	id := r.GetClientId()
	if id == "" {
		id = tokens.RandomString(12)
	} else if !validClientID.MatchString(id) {
		return nil, a.err(ctx, invalid("a client ID is 1 to 128 of A-Z a-z 0-9 . _ ~ -"))
	}
	secret := r.GetSecret()
	if secret == "" {
		secret = tokens.RandomString(32)
	} else if len(secret) < 16 {
		return nil, a.err(ctx, invalid("a client secret needs at least 16 characters"))
	}
	alg, err := clientAlg(r.GetAlg())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	h, err := a.hash.Hash(ctx, secret)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	c := storage.Client{ID: id, Name: r.GetName(), Description: r.GetDescription(), RedirectURLs: urls, Type: typ, SecretHash: h, Created: a.now().Unix(), Alg: alg}
	if err := a.store.CreateClient(ctx, c); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.CreateClientResponse{Client: a.clientRecord(c), Secret: secret}, nil
}

// revokeNow is the revoked-before a revocation made now sets, given the
// one before (prev): every token issued up to and including this second
// (iat has whole seconds) is revoked; tokens issued later in the same
// second carry it as their iat (tokens.Subject.RevokedBefore). It is
// always past prev, since tokens issued since prev may carry prev.
func (s *Service) revokeNow(prev int64) int64 { return max(s.now().Unix(), prev) + 1 }

func (a Admin) SetClientDisabled(ctx context.Context, r *authv1.SetClientDisabledRequest) (*authv1.SetClientDisabledResponse, error) {
	// Disabling revokes every token issued to the client; enabling it
	// again brings none of them back.
	err := a.store.UpdateClient(ctx, r.GetClientId(), func(c *storage.Client) error {
		c.Disabled = r.GetDisabled()
		if c.Disabled {
			c.RevokedBefore = a.revokeNow(c.RevokedBefore)
		}
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetClientDisabledResponse{}, nil
}

func (a Admin) ListAllClients(ctx context.Context, _ *authv1.ListAllClientsRequest) (*authv1.ListAllClientsResponse, error) {
	cs, err := a.store.ListClients(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	out := &authv1.ListAllClientsResponse{}
	for _, c := range cs {
		out.Clients = append(out.Clients, a.clientRecord(c))
	}
	return out, nil
}

func (a Admin) CreateUser(ctx context.Context, r *authv1.CreateUserRequest) (*authv1.CreateUserResponse, error) {
	if err := createUserLimits(r); err != nil {
		return nil, a.err(ctx, err)
	}
	email := strings.TrimSpace(r.GetEmail())
	if !validEmail(email) {
		return nil, a.err(ctx, invalid("email is not a valid address"))
	}
	if err := CheckScopes(r.GetScopes()); err != nil {
		return nil, a.err(ctx, err)
	}
	if err := mayGrant(ctx, r.GetScopes()); err != nil {
		return nil, a.err(ctx, err)
	}
	u := storage.User{
		Email: email, RealName: r.GetRealName(), Contact: r.GetContactInformation(),
		Locality:      storage.Locality{ID: r.GetLocality().GetId(), Name: r.GetLocality().GetName(), Description: r.GetLocality().GetDescription()},
		EmailVerified: r.GetEmailVerified(), Scopes: r.GetScopes(), Created: a.now().Unix(),
	}
	if pw := r.GetPassword(); pw != "" {
		if err := a.checkNewPassword(pw, email); err != nil {
			return nil, a.err(ctx, err)
		}
		h, err := a.hash.Hash(ctx, pw)
		if err != nil {
			return nil, a.err(ctx, err)
		}
		u.PasswordHash, u.PasswordSet, u.PasswordBy = h, u.Created, storage.AddedOperator
	}
	created, _, err := a.store.CreateUser(ctx, u, nil)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	// An address the operator did not vouch for is confirmed by its
	// holder: a link by mail (or in the log).
	if !created.EmailVerified {
		a.sendVerification(ctx, created)
	}
	return &authv1.CreateUserResponse{User: userRecord(created)}, nil
}

func (a Admin) updateByEmail(ctx context.Context, email string, fn func(*storage.User) error) error {
	u, err := a.store.GetUserByEmail(ctx, email)
	if err != nil {
		return fmt.Errorf("user %q: %w", email, err)
	}
	return a.store.UpdateUser(ctx, u.ID, fn)
}

func (a Admin) SetUserDisabled(ctx context.Context, r *authv1.SetUserDisabledRequest) (*authv1.SetUserDisabledResponse, error) {
	err := a.updateUser(ctx, r.GetEmail(), func(u *storage.User) error {
		u.Disabled = r.GetDisabled()
		if u.Disabled {
			u.RevokedBefore = a.revokeNow(u.RevokedBefore)
		}
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetUserDisabledResponse{}, nil
}

func (a Admin) RevokeUser(ctx context.Context, r *authv1.RevokeUserRequest) (*authv1.RevokeUserResponse, error) {
	if err := a.updateUser(ctx, r.GetEmail(), func(u *storage.User) error { u.RevokedBefore = a.revokeNow(u.RevokedBefore); return nil }); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RevokeUserResponse{}, nil
}

func (a Admin) RevokeClient(ctx context.Context, r *authv1.RevokeClientRequest) (*authv1.RevokeClientResponse, error) {
	if err := a.store.UpdateClient(ctx, r.GetClientId(), func(c *storage.Client) error { c.RevokedBefore = a.revokeNow(c.RevokedBefore); return nil }); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RevokeClientResponse{}, nil
}

func (a Admin) SetPassword(ctx context.Context, r *authv1.SetPasswordRequest) (*authv1.SetPasswordResponse, error) {
	if err := a.checkNewPassword(r.GetPassword(), r.GetEmail()); err != nil {
		return nil, a.err(ctx, err)
	}
	h, err := a.hash.Hash(ctx, r.GetPassword())
	if err != nil {
		return nil, a.err(ctx, err)
	}
	// A new password ends every session of the old one: whoever learnt
	// it may hold tokens.
	if err := a.updateByEmail(ctx, r.GetEmail(), func(u *storage.User) error {
		u.PasswordHash, u.RevokedBefore = h, a.revokeNow(u.RevokedBefore)
		u.PasswordSet, u.PasswordBy = a.now().Unix(), storage.AddedOperator
		return nil
	}); err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetPasswordResponse{}, nil
}

func (a Admin) SetUserScopes(ctx context.Context, r *authv1.SetUserScopesRequest) (*authv1.SetUserScopesResponse, error) {
	if err := CheckScopes(r.GetScopes()); err != nil {
		return nil, a.err(ctx, err)
	}
	if err := mayGrant(ctx, r.GetScopes()); err != nil {
		return nil, a.err(ctx, err)
	}
	// A role granted to an account nobody has proven is a role for
	// whoever holds its credentials: the caller confirms it knowingly.
	unproven := false
	if !r.GetConfirm() {
		u, err := a.store.GetUserByEmail(ctx, r.GetEmail())
		if err != nil {
			return nil, a.err(ctx, fmt.Errorf("user %q: %w", r.GetEmail(), err))
		}
		if unproven, err = a.hasUnproven(ctx, u); err != nil {
			return nil, a.err(ctx, err)
		}
	}
	err := a.updateUser(ctx, r.GetEmail(), func(u *storage.User) error {
		if !r.GetConfirm() && (unproven || !u.EmailVerified) && grantsNew(u.Scopes, r.GetScopes()) {
			what := "its address is not verified"
			if unproven {
				what = "it has credentials nobody has proven (added while its address was unverified)"
			}
			return rpcerr.New(rpcerr.ErrPrecondition, "%s: %s; confirm to grant the role anyway", u.Email, what)
		}
		u.Scopes = r.GetScopes()
		return nil
	})
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.SetUserScopesResponse{}, nil
}

func (a Admin) ListUsers(ctx context.Context, _ *authv1.ListUsersRequest) (*authv1.ListUsersResponse, error) {
	us, err := a.store.ListUsers(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	// The sign-ins are a convenience: without them the list still helps.
	signIns, err := a.store.SignIns(ctx)
	if err != nil {
		a.log.WarnContext(ctx, "reading the sign-ins", "err", err)
	}
	unproven, passkey, err := a.unprovenUsers(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	out := &authv1.ListUsersResponse{}
	lim := limited(ctx)
	for _, u := range us {
		if lim && privileged(u.Scopes) != "" {
			out.Users = append(out.Users, existenceOnly(u))
			continue
		}
		r := userRecord(u)
		r.UnprovenCredentials, r.HasPasskey = unproven[u.ID], passkey[u.ID]
		if si, ok := signIns[u.ID]; ok {
			r.LastSignIn, r.LastSignInAddr = uint32(si.At), si.Addr
		}
		out.Users = append(out.Users, r)
	}
	return out, nil
}

func signingKey(k storage.SigningKey) *authv1.SigningKey {
	return &authv1.SigningKey{Kid: k.KID, Alg: k.Alg, Created: uint32(k.Created / int64(time.Second)), Retired: uint32(k.Retired), PublishUntil: uint32(k.PublishUntil), Active: k.Active()}
}

func (a Admin) ListKeys(ctx context.Context, _ *authv1.ListKeysRequest) (*authv1.ListKeysResponse, error) {
	ks, err := a.store.SigningKeys(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	// The published keys of every algorithm, RSA first, each oldest
	// first; the refresh keys are never published, so not listed.
	cs, err := a.store.CurveKeys(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	for _, alg := range keys.CurveAlgs {
		for _, k := range cs {
			if k.Alg == alg.String() {
				ks = append(ks, k)
			}
		}
	}
	out := &authv1.ListKeysResponse{}
	for _, k := range ks {
		out.Keys = append(out.Keys, signingKey(k))
	}
	return out, nil
}

func (a Admin) RotateKeys(ctx context.Context, _ *authv1.RotateKeysRequest) (*authv1.RotateKeysResponse, error) {
	k, err := a.keys.Rotate(ctx)
	if err != nil {
		return nil, a.err(ctx, err)
	}
	return &authv1.RotateKeysResponse{Key: signingKey(k)}, nil
}

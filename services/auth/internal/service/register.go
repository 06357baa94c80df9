package service

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

func (p Public) Register(ctx context.Context, r *authv1.RegisterRequest) (res *authv1.RegisterResponse, err error) {
	defer func() {
		ev := audit.Event{Action: "auth.register", Target: auditEmail(r.GetEmail()), Err: err}
		if err == nil {
			ev.Actor = strconv.Itoa(int(res.GetUserId()))
			ev.Attrs = []slog.Attr{slog.Int("key_id", int(res.GetKeyId())), slog.String("scopes", strings.Join(p.cfg.RegisterScopes, ","))}
		}
		p.cfg.Audit.Record(ctx, ev)
	}()
	if !p.cfg.AllowRegister {
		return nil, p.err(ctx, rpcerr.New(rpcerr.ErrUnimplemented, "registration has been disabled"))
	}
	if err := registerLimits(r); err != nil {
		return nil, p.err(ctx, err)
	}
	email := strings.TrimSpace(r.GetEmail())
	if email == "" && r.GetBase64EncodedPublicKey() == "" {
		return nil, p.err(ctx, invalid("no payload"))
	}
	if !validEmail(email) {
		return nil, p.err(ctx, invalid("email is not a valid address"))
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(r.GetBase64EncodedPublicKey()), ""))
	if err != nil || len(der) == 0 {
		return nil, p.err(ctx, invalid("base64EncodedPublicKey is not base64"))
	}
	if _, err := parseRSA(der, p.cfg.MinKeyBits); err != nil {
		return nil, p.err(ctx, err)
	}
	// Every well-formed registration spends the address's budget, taken
	// email or not: the 409 tells which emails have accounts, so it must
	// not come at speed.
	if err := p.cfg.Guards.Register.Spend(ctx, ""); err != nil {
		return nil, p.err(ctx, err)
	}
	sum := sha512.Sum512(der)
	u, k, err := p.store.CreateUser(ctx, storage.User{Email: email, RealName: r.GetName(), Scopes: append([]string(nil), p.cfg.RegisterScopes...), Created: p.now().Unix()},
		&storage.UserKey{DER: der, SHA512: hex.EncodeToString(sum[:]), Description: r.GetDescription(), Created: p.now().Unix(),
			// Anonymous, for an address nobody has verified: unproven
			// until an operator vouches, removed when the owner proves it.
			AddedBy: storage.AddedRegistration})
	if errors.Is(err, storage.ErrExists) {
		return nil, p.err(ctx, rpcerr.New(kv.ErrExists, "a user with this email address (or this key) already exists"))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	p.log.InfoContext(ctx, "registered", "user", u.ID, "key", k.ID)
	return &authv1.RegisterResponse{UserId: u.ID, KeyId: k.ID, UserId_: u.ID, KeyId_: k.ID}, nil
}

// signAlgorithm is the Java name (Signature.getInstance) of
// RSASSA-PKCS1-v1_5 with SHA-512, the signature a signed code must carry.
const signAlgorithm = "SHA512withRSA"

// SignRequest hands out a code to be signed with the key named by id or by
// the SHA-512 of its SPKI DER.
func (p Public) SignRequest(ctx context.Context, r *authv1.SignRequestRequest) (*authv1.SignRequestResponse, error) {
	var (
		key storage.UserKey
		err error
	)
	id := r.GetKeyId()
	if id == 0 {
		id = r.GetKeyIdAlias()
	}
	hash := strings.ToLower(strings.TrimSpace(r.GetSha512Hash()))
	switch {
	case id > 0:
		key, err = p.store.GetUserKey(ctx, id)
	case hash != "":
		if _, derr := hex.DecodeString(hash); derr != nil || len(hash) != 128 {
			return nil, p.err(ctx, invalid("sha512Hash must be 128 hex digits"))
		}
		key, err = p.store.GetUserKeyByHash(ctx, hash)
	default:
		return nil, p.err(ctx, invalid("no payload: send keyId or sha512Hash"))
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, p.err(ctx, notFound("the key could not be found"))
	} else if err != nil {
		return nil, p.err(ctx, err)
	}
	exp := p.now().Add(p.cfg.SignRequestTTL)
	code := tokens.RandomString(32)
	if err := p.store.PutGrant(ctx, code, storage.Grant{Kind: storage.GrantSignRequest, UserID: key.UserID, KeyID: key.ID, Expires: exp.Unix()}); err != nil {
		return nil, p.err(ctx, err)
	}
	return &authv1.SignRequestResponse{
		Code: code, ExpirationDate: seconds(exp), Algoritm: signAlgorithm,
		Algorithm: signAlgorithm, Exp: seconds(exp),
	}, nil
}

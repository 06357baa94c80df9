// Package app wires the identity provider: config -> store -> keys ->
// server.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	"fris.dev/pkg/audit"
	"fris.dev/pkg/backup"
	"fris.dev/pkg/cmdutil"
	"fris.dev/pkg/identity"
	"fris.dev/pkg/kv"
	"fris.dev/pkg/mailer"
	"fris.dev/pkg/password"
	"fris.dev/pkg/ratelimit"
	"fris.dev/pkg/server"
	"fris.dev/pkg/throttles"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/keys"
	"fris.dev/services/auth/internal/service"
	"fris.dev/services/auth/internal/storage"
	"fris.dev/services/auth/internal/tokens"
)

// Run serves the identity provider until ctx ends.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.Store.Partitions = storage.Partitions
	deps, err := cfg.Open(ctx, "auth", log)
	if err != nil {
		return err
	}
	defer deps.Close()
	db, auditLog := deps.Store, deps.Audit
	codes, err := kv.OpenVolatile(cfg.Store, "auth", db, log)
	if err != nil {
		return err
	}
	defer codes.Close()
	box, err := cfg.keySecrets()
	if err != nil {
		return err
	}
	store := storage.NewSplit(db, codes, box)
	// The revocation log serves resource servers, which accept access
	// tokens only.
	store.LogRetention = cfg.AccessTTL + cfg.Skew
	// Keys sealed under an older secret, or kept in clear before encryption
	// at rest, move to the first secret before anything reads them; a
	// secret that opens none of them stops the start here (below, the keys
	// manager would otherwise fail the same way, never replace them).
	rewrapped, err := store.RewrapSigningKeys(ctx)
	if errors.Is(err, envelope.ErrUnknownSecret) {
		return fmt.Errorf("wrong key secret: %w; start with the secret the signing keys were encrypted under (when rotating: the new secret first, the old one after it)", err)
	}
	if err != nil {
		return fmt.Errorf("signing keys: %w", err)
	}
	if len(rewrapped.KIDs) > 0 {
		log.InfoContext(ctx, "signing keys re-encrypted under the first key secret", "kids", rewrapped.KIDs, "secret_id", box.Current())
	}
	if len(rewrapped.Plain) > 0 {
		// Encrypting the record does not erase the copies a store keeps
		// (bbolt's free pages, Redis's AOF and snapshots, backups).
		log.WarnContext(ctx, "signing keys were stored in clear before this start: copies may remain in the store's free pages, its AOF or snapshots and in backups; run `auth rotate-keys` so a key never stored in clear signs from now on", "kids", rewrapped.Plain)
	}
	log.InfoContext(ctx, "signing keys encrypted at rest", "secret_id", box.Current(), "secret_ids", box.IDs())
	// Retired keys stay published as long as the longest-lived token.
	longest := max(cfg.AccessTTL, cfg.IDTTL, cfg.RefreshTTL) + cfg.Skew
	km, err := keys.New(ctx, store, keys.Options{
		Bits: cfg.KeyBits, Alg: jwa.SignatureAlgorithm(cfg.KeyAlg), RotateEvery: cfg.KeyRotation, PublishFor: longest, Log: log,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Replicas pick up a rotation made elsewhere within seconds, so every
	// replica's /jwks soon publishes the new key (a store read each time).
	maintain := 10 * time.Second
	if cfg.KeyRotation > 0 {
		maintain = min(maintain, cfg.KeyRotation/4)
	}
	go km.Run(ctx, maintain)
	go publishPending(ctx, store, log, time.Minute)

	iss := tokens.New(km, strings.TrimRight(cfg.Issuer, "/"), tokens.Lifetimes{Access: cfg.AccessTTL, ID: cfg.IDTTL, Refresh: cfg.RefreshTTL, Skew: cfg.Skew})
	if cfg.BenchNullSigner != "" {
		iss.SetBenchNull(cfg.BenchNullSigner)
		log.Warn("BENCHMARK BUILD: the client's tokens are signed by a stub and verify nowhere", "client", cfg.BenchNullSigner)
	}
	reg := prometheus.NewRegistry()
	auditLog.RegisterMetrics(reg)
	limits := ratelimit.New(db, reg, log)
	auditLog.LimitRefusals(limits.AllowLog)
	params := password.Default
	params.Memory = uint32(cfg.Argon2Memory)
	hasher := password.New(params, cfg.SecretCacheTTL)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "fris_password_hashes_total",
		Help: "argon2id computations (password and secret checks, burns for unknown accounts, new hashes): what the abuse limits bound.",
	}, func() float64 { return float64(hasher.Computations()) }))
	passwords, err := cfg.Passwords.policy()
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "password policy", "min_length", passwords.MinLength(), "common_passwords", passwords.CommonCount())
	svc := service.New(service.Config{
		Issuer: strings.TrimRight(cfg.Issuer, "/"), AllowRegister: cfg.Registration, MinKeyBits: cfg.MinKeyBits,
		SignRequestTTL: cfg.SignRequestTTL, AuthCodeTTL: cfg.CodeTTL, DefaultScopes: cmdutil.SplitList(cfg.Scopes),
		RegisterScopes: cmdutil.SplitList(cfg.RegisterScopes), Audit: auditLog,
		Guards: service.Guards{
			Login:     limits.Guard("login", cfg.LimitLogin, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			Secret:    limits.Guard("client_secret", cfg.LimitSecret, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			Signature: limits.Guard("signature", cfg.LimitSignature, cfg.LimitAddr).WithCeiling(cfg.LimitCeiling),
			Register:  limits.Guard("register", ratelimit.Policy{}, cfg.LimitRegister),
			Reset:     limits.Guard("password_reset", cfg.LimitReset, cfg.LimitResetAddr).WithCeiling(cfg.LimitResetCeiling),
			Link:      limits.Guard("account_link", ratelimit.Policy{}, cfg.LimitAddr),
			Passkey:   limits.Guard("passkey", ratelimit.Policy{}, cfg.LimitAddr),
		},
		Passkeys: cfg.relyingParty(cfg.Issuer),
		Mail:     accountMailer(cfg.Account, log), ResetTTL: cfg.ResetTTL, VerifyTTL: cfg.VerifyTTL,
		LegacyRefresh: cfg.LegacyRefresh, RefreshSupersedesAccess: cfg.RefreshSupersedesAccess,
		Passwords:           passwords,
		RequireSecondFactor: cfg.Passwords.requiredRoles(),
	}, store, km, iss, hasher, log)

	jwks := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := protojson.Marshal(km.JWKS())
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=60")
		_, _ = w.Write(b)
	})
	// The gateway polls this every second or so: what was revoked since
	// the version it holds, usually nothing (one store read and an empty
	// scan).
	revocations := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var since uint64
		if q := r.URL.Query().Get("since"); q != "" {
			var err error
			if since, err = strconv.ParseUint(q, 10, 32); err != nil {
				http.Error(w, "since must be a version number", http.StatusBadRequest)
				return
			}
		}
		list, err := svc.RevocationList(r.Context(), uint32(since))
		if err != nil {
			log.WarnContext(r.Context(), "revocation list", "err", err)
			http.Error(w, "revocation list unavailable", http.StatusServiceUnavailable)
			return
		}
		b, err := protojson.Marshal(list)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	})
	return server.Run(ctx, cfg.Server, server.Service{
		Name: "fris.auth.v1.AuthService",
		Log:  log,
		Register: func(s *grpc.Server) {
			authv1.RegisterAuthServiceServer(s, service.Public{Service: svc})
			s.RegisterService(audit.AdminService(&authv1.AuthAdmin_ServiceDesc, auditLog), service.Admin{Service: svc})
			backup.Register(s, "auth", db, auditLog, log)
			audit.Register(s, "auth", deps.Events, cfg.Settings(settingNames...), log)
			throttles.Register(s, "auth", limits, auditLog, log)
		},
		Ready:   svc.Ready,
		Metrics: reg,
		Ops:     map[string]http.Handler{"GET /jwks": jwks, "GET /revocations": revocations},
		// The Explorer's users view (docs/security.md): finding, creating,
		// disabling users, their scopes, a reset link, their recent
		// sign-ins, their credentials (listed, a key or passkey removed) and
		// ending their sessions, required actions and a temporary password
		// auth generates (never one the caller chooses). A user
		// administrator reaches these, and the service keeps them off
		// privileged users (admin_users.go).
		Operator: slices.Concat(userMethods, []string{
			// Its clients and signing keys views (the console sends no
			// secret of its own; RevokeClient stays with bin/auth, a
			// rotation's revoke_tokens covers a leaked secret).
			authv1.AuthAdmin_ListAllClients_FullMethodName, authv1.AuthAdmin_CreateClient_FullMethodName,
			authv1.AuthAdmin_UpdateClient_FullMethodName, authv1.AuthAdmin_RotateClientSecret_FullMethodName,
			authv1.AuthAdmin_SetClientDisabled_FullMethodName,
			authv1.AuthAdmin_ListKeys_FullMethodName, authv1.AuthAdmin_RotateKeys_FullMethodName,
		}, audit.OperatorMethods, throttles.OperatorMethods), // and the audit, settings and throttles views (pkg/audit, pkg/throttles)
		Roles: map[string][]string{identity.ScopeUserAdmin: userMethods},
	})
}

// userMethods are the admin methods of the Explorer's users view.
var userMethods = []string{
	authv1.AuthAdmin_ListUsers_FullMethodName, authv1.AuthAdmin_CreateUser_FullMethodName,
	authv1.AuthAdmin_SetUserDisabled_FullMethodName, authv1.AuthAdmin_SetUserScopes_FullMethodName,
	authv1.AuthAdmin_RevokeUser_FullMethodName, authv1.AuthAdmin_SendPasswordReset_FullMethodName,
	authv1.AuthAdmin_ListUserSignIns_FullMethodName,
	authv1.AuthAdmin_SetRequiredActions_FullMethodName, authv1.AuthAdmin_SetTemporaryPassword_FullMethodName,
	authv1.AuthAdmin_ListUserCredentials_FullMethodName, authv1.AuthAdmin_RemoveUserCredential_FullMethodName,
}

// accountMailer is the SMTP server of -smtp-addr, nil without one: the
// service then writes the links to the log.
func accountMailer(c Account, log *slog.Logger) service.Mailer {
	if c.SMTPAddr == "" {
		log.Warn("no -smtp-addr: password-reset and email verification links are written to this log for the operator")
		return nil
	}
	return mailer.SMTP{Addr: c.SMTPAddr, From: c.SMTPFrom, User: c.SMTPUser, Password: c.SMTPPassword}
}

// publishPending logs the revocations a replica wrote but could not log
// (the log is in another partition, and the replica failed or died between
// the two writes): at start, then every interval.
func publishPending(ctx context.Context, store *storage.KV, log *slog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := store.PublishPending(ctx)
		if n > 0 {
			log.InfoContext(ctx, "revocations logged late", "count", n)
		}
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "log pending revocations", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

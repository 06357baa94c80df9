package service

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"fris.dev/pkg/inputlimit"
	"fris.dev/pkg/rpcerr"
	authv1 "fris.dev/proto/auth/v1"
	"fris.dev/services/auth/internal/storage"
)

// Passkeys (WebAuthn), a second way to sign in: passkey_account.go holds
// the account page's calls (add, list, remove), passkey_login.go the
// sign-in. This file holds the relying party and what both share.

// Limits of passkeys (docs/security.md, Passkeys).
const (
	// MaxPasskeys a user may have.
	MaxPasskeys = 10
	// MaxPasskeyName is the longest name, in characters.
	MaxPasskeyName = 64
	// MaxCredentialJSON bounds the browser's answer to a ceremony: an
	// attestation with its certificate chain fits many times over.
	MaxCredentialJSON = 32 << 10
	// passkeyCeremonyTTL is how long a begun ceremony may be answered.
	passkeyCeremonyTTL = 5 * time.Minute
)

// Kinds of ceremonies (storage.Ceremony.Kind).
const (
	ceremonyRegister = "register"
	ceremonyLogin    = "login"
)

// PasskeyConfig is the relying party: RPID is the domain passkeys are
// bound to (the public URL's host name), Origins the pages that may use
// them (the public URL's origin). An empty RPID turns passkeys off.
type PasskeyConfig struct {
	RPID    string
	Origins []string
}

// PasskeyDefaults derives the relying party from the deployment's public
// base URL (-issuer): its host name, and its origin.
func PasskeyDefaults(issuer string) PasskeyConfig {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return PasskeyConfig{}
	}
	return PasskeyConfig{RPID: u.Hostname(), Origins: []string{u.Scheme + "://" + u.Host}}
}

// newRelyingParty builds the WebAuthn relying party; nil when passkeys are
// off. Every passkey must verify its user (a PIN, a fingerprint): it is
// the whole sign-in, not a second factor (docs/decisions.md).
func newRelyingParty(c PasskeyConfig) (*webauthn.WebAuthn, error) {
	if c.RPID == "" {
		return nil, nil
	}
	timeout := webauthn.TimeoutConfig{Enforce: true, Timeout: passkeyCeremonyTTL, TimeoutUVD: passkeyCeremonyTTL}
	return webauthn.New(&webauthn.Config{
		RPID: c.RPID, RPDisplayName: "FRIS", RPOrigins: c.Origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
}

var errPasskeysOff = rpcerr.New(rpcerr.ErrUnimplemented, "passkeys are not enabled on this server")

// passkeyUser is a user as the WebAuthn library sees them.
type passkeyUser struct {
	u     storage.User
	creds []webauthn.Credential
}

func (p passkeyUser) WebAuthnID() []byte   { return userHandle(p.u.ID) }
func (p passkeyUser) WebAuthnName() string { return p.u.Email }
func (p passkeyUser) WebAuthnDisplayName() string {
	if p.u.RealName != "" {
		return p.u.RealName
	}
	return p.u.Email
}
func (p passkeyUser) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// userHandle is the WebAuthn user handle of a user: the id, which names
// no person (the email and name are only shown by the authenticator).
func userHandle(id int32) []byte { return []byte("fris-user:" + strconv.Itoa(int(id))) }

// handleUser reads a user handle back; false when it is not one of ours.
func handleUser(h []byte) (int32, bool) {
	s, ok := strings.CutPrefix(string(h), "fris-user:")
	if !ok || len(s) > 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	return int32(n), true
}

// credentials decodes a user's stored passkeys for the library; a record
// that does not decode is skipped (it cannot sign anyone in).
func credentials(ps []storage.Passkey) []webauthn.Credential {
	out := make([]webauthn.Credential, 0, len(ps))
	for _, p := range ps {
		var c webauthn.Credential
		if json.Unmarshal(p.Credential, &c) == nil && len(c.ID) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func credentialID(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }

// checkPasskeyName: a name the account page can show, bounded.
func checkPasskeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", invalid("name the passkey")
	}
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxPasskeyName {
		return "", invalid("a passkey's name has at most %d characters", MaxPasskeyName)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "", invalid("a passkey's name cannot hold control characters")
		}
	}
	return name, nil
}

// ceremonyFields bounds a ceremony's answer before anything reads it.
func ceremonyFields(ceremony, credential string) error {
	return inputlimit.Check(inputlimit.F("ceremony", ceremony, inputlimit.Param), inputlimit.F("credential", credential, MaxCredentialJSON))
}

// parseAttestation and parseAssertion read the browser's answers (the
// library parses; this bounds them first).
func parseAttestation(credential string) (*protocol.ParsedCredentialCreationData, error) {
	if len(credential) > MaxCredentialJSON {
		return nil, invalid("the passkey answer is too large")
	}
	pcc, err := protocol.ParseCredentialCreationResponseBytes([]byte(credential))
	if err != nil {
		return nil, invalid("the passkey answer is not valid")
	}
	return pcc, nil
}

func parseAssertion(credential string) (*protocol.ParsedCredentialAssertionData, error) {
	if len(credential) > MaxCredentialJSON {
		return nil, invalid("the passkey answer is too large")
	}
	par, err := protocol.ParseCredentialRequestResponseBytes([]byte(credential))
	if err != nil {
		return nil, invalid("the passkey answer is not valid")
	}
	return par, nil
}

func apiPasskey(p storage.Passkey) *authv1.Passkey {
	return &authv1.Passkey{Id: p.ID, Name: p.Name, Created: uint32(p.Created), LastUsed: uint32(p.LastUsed)}
}

// CheckPasskeys reports whether the library accepts the relying party (for
// the flags' checks).
func CheckPasskeys(c PasskeyConfig) error {
	_, err := newRelyingParty(c)
	return err
}

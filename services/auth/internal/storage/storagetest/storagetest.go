// Package storagetest is the auth store's conformance suite, run against
// every backend.
package storagetest

import (
	"bytes"
	"testing"

	"fris.dev/pkg/kv"
	"fris.dev/services/auth/internal/envelope"
	"fris.dev/services/auth/internal/storage"
)

// Run runs the suite. openKV returns a fresh, empty backend; wrap builds
// the auth store on one, its signing keys sealed by sealer (the suite
// reads the backend's raw values to check what is stored). Each case runs
// as a subtest of its name.
func Run(t *testing.T, openKV func(t *testing.T) kv.Store, wrap func(t *testing.T, db kv.Store, sealer storage.Sealer) storage.Store) {
	b := backend{openKV: openKV, wrap: wrap}
	for _, c := range []struct {
		name string
		// parallel cases wait for expiry; they run beside each other.
		parallel bool
		run      func(t *testing.T, b backend)
	}{
		{"Clients", false, onStore(testClients)},
		{"UsersAndKeys", false, onStore(testUsersAndKeys)},
		{"UserKeysRemoved", false, onStore(testUserKeysRemoved)},
		{"ConcurrentUserIDsAreUnique", false, onStore(testConcurrentUserIDsAreUnique)},
		{"GrantsAreSingleUse", true, onStore(testGrantsAreSingleUse)},
		{"AccountTokensAreSingleUse", false, onStore(testAccountTokensAreSingleUse)},
		{"AccountTokensExpire", true, onStore(testAccountTokensExpire)},
		{"AccountTokensHashedAtRest", false, testAccountTokensHashedAtRest},
		{"Sessions", false, onStore(testSessions)},
		{"Passkeys", false, onStore(testPasskeys)},
		{"PasskeyCeremoniesAreSingleUse", false, onStore(testCeremoniesAreSingleUse)},
		{"PasskeyCeremoniesExpire", true, onStore(testCeremoniesExpire)},
		{"SigningKeys", false, onStore(testSigningKeys)},
		{"SigningKeysEncryptedAtRest", false, testSigningKeysEncryptedAtRest},
		{"PlaintextKeysMigrate", false, testPlaintextKeysMigrate},
		{"RefreshKeys", false, testRefreshKeys},
		{"CurveKeys", false, testCurveKeys},
		{"RefreshSpendAndReuse", false, onStore(testRefreshSpendAndReuse)},
		{"RefreshMarkersExpire", true, onStore(testRefreshMarkersExpire)},
		{"RevocationLog", false, onStore(testRevocationLog)},
		{"ConcurrentRefreshOnlyOneWins", false, onStore(testConcurrentRefreshOnlyOneWins)},
		{"PendingRevocationsArePublished", false, testPendingRevocationsArePublished},
		{"FailedRegistrationFreesItsKey", false, onStore(testFailedRegistrationFreesItsKey)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.parallel {
				t.Parallel()
			}
			c.run(t, b)
		})
	}
}

// backend is what a case runs on: fresh backends, and the auth store
// built on one.
type backend struct {
	openKV func(t *testing.T) kv.Store
	wrap   func(t *testing.T, db kv.Store, sealer storage.Sealer) storage.Store
}

// on builds the auth store on db, sealing with the first of secrets and
// opening with any of them.
func (b backend) on(t *testing.T, db kv.Store, secrets ...[]byte) storage.Store {
	return b.wrap(t, db, box(t, secrets...))
}

// onStore adapts a case that needs only a fresh auth store (sealing with
// oldSecret).
func onStore(run func(t *testing.T, s storage.Store)) func(t *testing.T, b backend) {
	return func(t *testing.T, b backend) { run(t, b.on(t, b.openKV(t), oldSecret())) }
}

func box(t *testing.T, secrets ...[]byte) *envelope.Box {
	b, err := envelope.New(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The secret the keys are sealed with, and the one an operator rotates to.
func oldSecret() []byte { return bytes.Repeat([]byte{1}, envelope.SecretSize) }
func newSecret() []byte { return bytes.Repeat([]byte{2}, envelope.SecretSize) }

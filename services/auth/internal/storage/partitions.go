package storage

import (
	"fris.dev/pkg/kv"

	"hash/fnv"
	"strconv"
	"strings"
)

// Partitions is the auth store's kv.Partitioner. Every transaction here
// needs one record and what must change atomically with it, so records are
// spread over buckets by the id they are found by:
//
//	grant/<code>                         grant/<fnv(code) % 16>
//	user/<id>, ukey/<id>, seq/*/<b>      p/<id % 32>, p/<b>
//	user-email/<email>                   p/<fnv(email) % 32>
//	client/<id>, ukey-hash/<sha512>      p/<fnv(id) % 32>
//	refresh/<jti>, token-revoked/<jti>   p/<fnv(jti) % 32>
//	chain-revoked/<chain>                p/<fnv(chain) % 32>
//	account-token/<sha256>               p/<fnv(sha256) % 32>
//	user-session/<id>/<chain>            p/<id % 32>
//	revpending/<kind>/<id>               the bucket of that record
//	signin/<id>                          p/<id % 32>
//	passkey/<id>/<credential>            p/<id % 32>
//	passkey-ceremony/<sha256>            p/<fnv(sha256) % 32>
//
// A new user's id is chosen in the bucket of its email (CreateUser), so a
// user, its email's index and its keys are written in one transaction.
// The signing and refresh keys, the revocation log and its counter, and the counters of
// older versions stay in the base partition: the log is one sequence that
// resource servers read in order, written only when something is revoked.
// Grants keep the 16 buckets of the first partitioned layout, so their keys
// need not move.
var Partitions kv.Partitioner = partitions{}

const (
	grantBuckets = 16
	// buckets is the number of partitions users, clients and token
	// markers are spread over: enough that a cluster's masters get
	// similar shares.
	buckets = 32
)

// bucketed lists the key kinds spread over the buckets, and how each finds
// its bucket in the rest of the key.
var bucketed = []struct {
	prefix string
	bucket func(rest string) int
}{
	{pUser, numeric},
	{pUserKey, numeric},
	{pUserEmail, hashed},
	{pClient, hashed},
	{pKeyHash, hashed},
	{pRefresh, hashed},
	{pJTI, hashed},
	{pChain, hashed},
	{pAcctToken, hashed},
	{pSession, sessionBucket},
	{seqUser + "/", literal},
	{seqKey + "/", literal},
	{pPending + pendingUser, numeric},
	{pPending + pendingClient, hashed},
	{pPending + pendingChain, hashed},
	{pPending + pendingToken, hashed},
	{pSignIn, numeric},
	{pPasskey, sessionBucket},
	{pCeremony, hashed},
}

type partitions struct{}

func (partitions) Key(key string) string {
	if code, ok := strings.CutPrefix(key, pGrant); ok {
		return grantPart(int(fnv32(code) % grantBuckets))
	}
	for _, k := range bucketed {
		if rest, ok := strings.CutPrefix(key, k.prefix); ok {
			return bucketPart(k.bucket(rest))
		}
	}
	return ""
}

func (partitions) Prefix(prefix string) []string {
	if strings.HasPrefix(prefix, pGrant) {
		return parts(grantBuckets, grantPart)
	}
	// A user's passkeys are one bucket's: AddPasskey counts them in its
	// transaction.
	if rest, ok := strings.CutPrefix(prefix, pPasskey); ok {
		if id, _, whole := strings.Cut(rest, "/"); whole {
			return []string{bucketPart(numeric(id))}
		}
	}
	for _, k := range bucketed {
		if strings.HasPrefix(prefix, k.prefix) {
			return parts(buckets, bucketPart)
		}
	}
	for _, kind := range append([]string{pGrant}, kindPrefixes()...) {
		if strings.HasPrefix(kind, prefix) {
			return nil // may match keys of a spread kind, and of others
		}
	}
	return []string{""}
}

func kindPrefixes() []string {
	out := make([]string, len(bucketed))
	for i, k := range bucketed {
		out[i] = k.prefix
	}
	return out
}

func grantPart(b int) string  { return pGrant + strconv.Itoa(b) }
func bucketPart(b int) string { return "p/" + strconv.Itoa(b) }

func parts(n int, name func(int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = name(i)
	}
	return out
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// hashed buckets a key by a hash of its id.
func hashed(id string) int { return int(fnv32(id) % buckets) }

// numeric buckets a user's or key's id by its value, so an id names its
// bucket; a malformed one falls back to its hash.
func numeric(id string) int {
	n, err := strconv.ParseUint(id, 10, 31)
	if err != nil {
		return hashed(id)
	}
	return int(n % buckets)
}

// literal reads a counter's bucket from its name.
func literal(b string) int {
	n, err := strconv.ParseUint(b, 10, 31)
	if err != nil || n >= buckets {
		return hashed(b)
	}
	return int(n)
}

// sessionBucket buckets a user's session by the user's id (the key's
// first segment), so a user's sessions share the user's bucket.
func sessionBucket(rest string) int {
	id, _, _ := strings.Cut(rest, "/")
	return numeric(id)
}

package storage

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"fris.dev/pkg/kv"
)

// Partitions is the auth store's kv.Partitioner: the single-use grants
// (grant/<code>, written and taken alone, the most written records) are
// spread over grantBuckets partitions by a hash of the code; everything
// else stays in the base partition, where a refresh token's spend, the
// revocation of its chain and the revocation log, and a user with the
// indexes of its email and keys, are written together.
var Partitions kv.Partitioner = partitions{}

const grantBuckets = 16

type partitions struct{}

func (partitions) Key(key string) string {
	code, ok := strings.CutPrefix(key, pGrant)
	if !ok {
		return ""
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(code))
	return pGrant + strconv.Itoa(int(h.Sum32()%grantBuckets))
}

func (partitions) Prefix(prefix string) []string {
	if !strings.Contains(prefix, "/") {
		return nil
	}
	if !strings.HasPrefix(prefix, pGrant) {
		return []string{""}
	}
	out := make([]string, grantBuckets)
	for i := range out {
		out[i] = pGrant + strconv.Itoa(i)
	}
	return out
}

// Grant kinds.
const (
	GrantAuthorization = "authorization" // code from the browser login
	GrantSignRequest   = "sign"          // code to be signed with a user key
)

// Grant is what a single-use code stands for.
type Grant struct {
	Kind          string `json:"kind"`
	ClientID      string `json:"client_id,omitempty"`
	UserID        int32  `json:"user_id"`
	KeyID         int32  `json:"key_id,omitempty"`
	RedirectURI   string `json:"redirect_uri,omitempty"`
	Challenge     string `json:"challenge,omitempty"`
	ChallengeMeth string `json:"challenge_method,omitempty"`
	Scope         string `json:"scope,omitempty"`
	Nonce         string `json:"nonce,omitempty"`
	Expires       int64  `json:"expires"`
}

func (s *KV) PutGrant(ctx context.Context, code string, g Grant) error {
	ttl := time.Until(time.Unix(g.Expires, 0))
	if ttl <= 0 {
		return fmt.Errorf("grant already expired")
	}
	return s.codes.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, pGrant+code, g, ttl) })
}

func (s *KV) TakeGrant(ctx context.Context, code string) (Grant, error) {
	if code == "" || len(code) > 256 {
		return Grant{}, ErrNotFound
	}
	var g Grant
	err := s.codes.Update(ctx, func(tx kv.Tx) error {
		var err error
		if g, err = kv.GetJSON[Grant](ctx, tx, pGrant+code); err != nil {
			return err
		}
		return tx.Delete(pGrant + code)
	})
	if err == nil && s.now().Unix() >= g.Expires {
		return Grant{}, ErrNotFound
	}
	return g, err
}

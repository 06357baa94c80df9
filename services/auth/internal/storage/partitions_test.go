package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
)

func TestPartitionRules(t *testing.T) {
	p := Partitions
	for _, c := range []struct{ key, want string }{
		{"user/0000000037", "p/5"},
		{"ukey/0000000069", "p/5"},
		{"seq/user/5", "p/5"},
		{"seq/ukey/31", "p/31"},
		{"revpending/user/0000000037", "p/5"},
		{"user-email/a@x.org", bucketPart(hashed("a@x.org"))},
		{"client/c1", bucketPart(hashed("c1"))},
		{"revpending/client/c1", bucketPart(hashed("c1"))},
		{"chain-revoked/ch", bucketPart(hashed("ch"))},
		{"revpending/chain/ch", bucketPart(hashed("ch"))},
		{"token-revoked/j", bucketPart(hashed("j"))},
		{"refresh/j", bucketPart(hashed("j"))},
		{"revpending/token/j", bucketPart(hashed("j"))},
		{"grant/abc", grantPart(int(fnv32("abc") % grantBuckets))},
		{"signing-key/k1", ""},
		{"revlog/0000000001", ""},
		{"seq/revlog", ""},
		{"seq/user", ""},
		{"seq/ukey", ""},
	} {
		if got := p.Key(c.key); got != c.want {
			t.Errorf("Key(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	for _, c := range []struct {
		prefix string
		want   int // partitions; -1: all (nil)
	}{
		{"user/", buckets}, {"client/", buckets}, {"revpending/chain/", buckets},
		{"grant/", grantBuckets}, {"signing-key/", 1}, {"revlog/", 1},
		{"", -1}, {"user", -1}, {"seq/", -1}, {"revpending/", -1}, {"gr", -1},
	} {
		got := p.Prefix(c.prefix)
		if (c.want == -1) != (got == nil) || (c.want >= 0 && len(got) != c.want) {
			t.Errorf("Prefix(%q) = %v, want %d partitions", c.prefix, got, c.want)
		}
		// Every key the prefix may cover is in one of the partitions named.
		for _, k := range []string{"user/0000000037", "client/c1", "revpending/chain/ch", "grant/abc", "signing-key/k", "revlog/0000000001"} {
			if got != nil && strings.HasPrefix(k, c.prefix) && !slices.Contains(got, p.Key(k)) {
				t.Errorf("Prefix(%q) = %v misses %q of %q", c.prefix, got, p.Key(k), k)
			}
		}
	}
}

// boltStore is a fresh partitioned bbolt store for one test.
func boltStore(t *testing.T) *kv.Bolt {
	t.Helper()
	db, err := kv.OpenBolt(filepath.Join(t.TempDir(), "auth.db"), kv.BoltOptions{Partitions: Partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestUsersLiveInTheirEmailsBucket: a user, its email's index and its key
// are in one partition, and users spread over all of them.
func TestUsersLiveInTheirEmailsBucket(t *testing.T) {
	ctx := context.Background()
	db := boltStore(t)
	s := New(db, nil)
	used := map[string]bool{}
	for i := range 200 {
		email := fmt.Sprintf("U%d@Example.org", i)
		u, k, err := s.CreateUser(ctx, User{Email: email}, &UserKey{SHA512: fmt.Sprintf("%x", i)})
		if err != nil {
			t.Fatal(err)
		}
		part := Partitions.Key(pUser + id32(u.ID))
		if e, kk := Partitions.Key(pUserEmail+NormalizeEmail(email)), Partitions.Key(pUserKey+id32(k.ID)); e != part || kk != part {
			t.Fatalf("user %d in %q, its email in %q, its key in %q", u.ID, part, e, kk)
		}
		used[part] = true
	}
	if len(used) < buckets*3/4 {
		t.Fatalf("200 users in %d of %d partitions", len(used), buckets)
	}
}

// TestAbandonedKeyClaim: a registration that crashed after claiming its
// key's hash leaves a claim without a key; once it is older than
// claimStale another registration takes it over, never before.
func TestAbandonedKeyClaim(t *testing.T) {
	ctx := context.Background()
	db := boltStore(t)
	s := New(db, nil)
	now := time.Now()
	s.now = func() time.Time { return now }
	claimed := func(at time.Time) {
		if err := db.Update(ctx, func(tx kv.Tx) error {
			return kv.PutJSON(tx, pKeyHash+"abc", keyClaim{Key: 4242, At: at.UnixMilli()}, 0)
		}); err != nil {
			t.Fatal(err)
		}
	}
	claimed(now.Add(-claimStale + time.Second))
	if _, _, err := s.CreateUser(ctx, User{Email: "a@x.org"}, &UserKey{SHA512: "abc"}); err == nil {
		t.Fatal("a fresh claim was taken over")
	}
	claimed(now.Add(-claimStale - time.Second))
	u, k, err := s.CreateUser(ctx, User{Email: "a@x.org"}, &UserKey{SHA512: "abc"})
	if err != nil {
		t.Fatalf("an abandoned claim: %v", err)
	}
	if got, err := s.GetUserKeyByHash(ctx, "abc"); err != nil || got.ID != k.ID || got.UserID != u.ID {
		t.Fatalf("GetUserKeyByHash = %+v, %v", got, err)
	}
	// A finished registration's claim is never taken over, however old.
	now = now.Add(time.Hour)
	if _, _, err := s.CreateUser(ctx, User{Email: "b@x.org"}, &UserKey{SHA512: "abc"}); err == nil {
		t.Fatal("a finished registration's key was taken over")
	}
	// A registration slower than claimLive gives up, and frees its claim.
	s.now = func() time.Time { t := now; now = now.Add(claimLive + time.Second); return t }
	if _, _, err := s.CreateUser(ctx, User{Email: "c@x.org"}, &UserKey{SHA512: "def"}); err == nil {
		t.Fatal("a registration past claimLive went through")
	}
	if _, err := db.Get(ctx, pKeyHash+"def"); err == nil {
		t.Fatal("the slow registration left its claim")
	}
}

// legacyParts is the layout before users, clients and token markers were
// spread: only the grants had partitions of their own.
type legacyParts struct{}

func (legacyParts) Key(key string) string {
	if strings.HasPrefix(key, pGrant) {
		return Partitions.Key(key)
	}
	return ""
}

func (legacyParts) Prefix(prefix string) []string {
	if strings.HasPrefix(prefix, pGrant) {
		return Partitions.Prefix(prefix)
	}
	if strings.HasPrefix(pGrant, prefix) {
		return nil
	}
	return []string{""}
}

// TestUpgradeFromOnePartition writes what the previous version stored
// (sequential ids under single counters, bare key ids in the hash index,
// revocation markers without pending records), opens it as kv.Open does,
// and uses it.
func TestUpgradeFromOnePartition(t *testing.T) {
	ctx := context.Background()
	backends := map[string]func(t *testing.T, parts kv.Partitioner) kv.Store{}
	dir := t.TempDir()
	backends["Bolt"] = func(t *testing.T, parts kv.Partitioner) kv.Store {
		db, err := kv.OpenBolt(filepath.Join(dir, "auth.db"), kv.BoltOptions{Partitions: parts})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	for name, client := range map[string]func(testing.TB) redis.UniversalClient{"Redis": testredis.Client, "Cluster": testredis.ClusterClient} {
		prefix := map[*testing.T]string{}
		backends[name] = func(t *testing.T, parts kv.Partitioner) kv.Store {
			if prefix[t] == "" {
				prefix[t] = testredis.Prefix(t)
			}
			r := kv.NewRedis(client(t), kv.RedisOptions{Prefix: prefix[t], Partitions: parts})
			if _, ok := parts.(partitions); ok {
				if _, err := r.MoveToPartitions(ctx); err != nil {
					t.Fatal(err)
				}
			}
			return r
		}
	}
	for _, name := range []string{"Bolt", "Redis", "Cluster"} {
		t.Run(name, func(t *testing.T) {
			old := backends[name](t, legacyParts{})
			exp := time.Now().Add(time.Hour)
			if err := old.Update(ctx, func(tx kv.Tx) error {
				for k, v := range map[string]string{
					seqUser: "2", seqKey: "1",
					pUser + id32(1):          `{"id":1,"email":"Ada@x.org","created":1}`,
					pUser + id32(2):          `{"id":2,"email":"bob@x.org","created":1}`,
					pUserEmail + "ada@x.org": id32(1),
					pUserEmail + "bob@x.org": id32(2),
					pUserKey + id32(1):       `{"id":1,"user_id":2,"der":"AQI=","sha512":"beef","created":1}`,
					pKeyHash + "beef":        id32(1),
					pClient + "c1":           `{"id":"c1","name":"C","type":"MDR","secret_hash":"h","created":1}`,
					pChain + "oldchain":      `{}`,
					pRefresh + "spent":       `{"jti":"spent","chain":"live","user_id":1,"client_id":"c1","used":true,"expires":1}`,
				} {
					if err := tx.Put(k, []byte(v), 0); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := old.Close(); err != nil && name == "Bolt" {
				t.Fatal(err)
			}
			db := backends[name](t, Partitions)
			defer db.Close()
			s := New(db, nil)
			if u, err := s.GetUserByEmail(ctx, "ADA@x.org"); err != nil || u.ID != 1 {
				t.Fatalf("old user by email = %+v, %v", u, err)
			}
			if k, err := s.GetUserKeyByHash(ctx, "BEEF"); err != nil || k.UserID != 2 {
				t.Fatalf("old key by hash = %+v, %v", k, err)
			}
			if us, err := s.ListUsers(ctx); err != nil || len(us) != 2 {
				t.Fatalf("ListUsers = %+v, %v", us, err)
			}
			if cs, err := s.ListClients(ctx); err != nil || len(cs) != 1 {
				t.Fatalf("ListClients = %+v, %v", cs, err)
			}
			if ok, err := s.Revoked(ctx, "oldchain", ""); err != nil || !ok {
				t.Fatalf("old chain revocation = %t, %v", ok, err)
			}
			if err := s.SpendRefresh(ctx, Refresh{JTI: "spent", Chain: "live", Expires: exp.Unix()}, exp); err != ErrReused {
				t.Fatalf("a token spent before the upgrade = %v, want ErrReused", err)
			}
			if _, _, err := s.CreateUser(ctx, User{Email: "ada@X.org"}, nil); err == nil {
				t.Fatal("an old user's email was taken again")
			}
			if _, _, err := s.CreateUser(ctx, User{Email: "eve@x.org"}, &UserKey{SHA512: "beef"}); err == nil {
				t.Fatal("an old user's key was registered again")
			}
			u, k, err := s.CreateUser(ctx, User{Email: "new@x.org"}, &UserKey{SHA512: "cafe"})
			if err != nil || u.ID <= 2 || k.ID <= 1 {
				t.Fatalf("new user = %+v %+v %v, want ids above the old counters", u, k, err)
			}
		})
	}
}

// TestClusterSpreadsAuthData: on a Redis Cluster, users, clients and spent
// refresh tokens land on every master, none holding more than two thirds (the old layout kept all on one).
func TestClusterSpreadsAuthData(t *testing.T) {
	ctx := context.Background()
	c := testredis.ClusterClient(t)
	prefix := testredis.Prefix(t)
	db := kv.NewRedis(c, kv.RedisOptions{Prefix: prefix, Partitions: Partitions})
	defer db.Close()
	s := New(db, nil)
	exp := time.Now().Add(time.Hour)
	for i := range 100 {
		if _, _, err := s.CreateUser(ctx, User{Email: fmt.Sprintf("s%d@x.org", i)}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.SpendRefresh(ctx, Refresh{JTI: fmt.Sprintf("j%d", i), Chain: fmt.Sprintf("c%d", i), Expires: exp.Unix()}, exp); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if err := s.CreateClient(ctx, Client{ID: fmt.Sprintf("client%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("not a cluster client: %T", c)
	}
	var counts []int
	var mu = make(chan struct{}, 1)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n := 0
		iter := m.Scan(ctx, 0, "{"+prefix+"*:d:*", 500).Iterator()
		for iter.Next(ctx) {
			n++
		}
		mu <- struct{}{}
		counts = append(counts, n)
		<-mu
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total < 300 {
		t.Fatalf("%d keys found, want at least 300 (%v)", total, counts)
	}
	for _, n := range counts {
		if n == 0 || n > total*2/3 {
			t.Fatalf("keys per master %v: not spread", counts)
		}
	}
	t.Logf("keys per master: %v", counts)
}

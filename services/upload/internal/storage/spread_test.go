package storage_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"fris.dev/pkg/kv"
	"fris.dev/pkg/testredis"
	"fris.dev/services/upload/internal/storage"
)

// On a Redis Cluster of three masters the documents of 20 sites spread
// evenly: each master holds within ±25 % of the mean number of keys.
func TestClusterSpreadsSites(t *testing.T) {
	ctx := context.Background()
	c := testredis.ClusterClient(t)
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		t.Fatal("REDIS_CLUSTER_URL did not give a cluster client")
	}
	prefix := testredis.Prefix(t)
	db := kv.NewRedis(c, kv.RedisOptions{Prefix: prefix, Partitions: storage.Partitions, BatchDelay: 2 * time.Millisecond})
	t.Cleanup(func() { _ = db.Close() })
	s := storage.New(db)

	const sites, patients = 20, 30
	var wg sync.WaitGroup
	errs := make(chan error, sites)
	for i := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			te := storage.Teiler{SiteID: fmt.Sprintf("site%02d", i+1), TeilerID: "teiler1"}
			for p := range patients {
				id := fmt.Sprintf("patient-%04d", p)
				if _, err := s.PutPatient(ctx, storage.Summary{Teiler: te, PatientID: id}, []byte(id)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The values of this store on each master (index sets aside).
	var mu sync.Mutex
	perMaster := map[string]int{}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n := 0
		iter := m.Scan(ctx, 0, "{"+prefix+"*}:d:*", 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		mu.Lock()
		perMaster[m.Options().Addr] = n
		mu.Unlock()
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(perMaster) != 3 {
		t.Fatalf("%d masters, want 3", len(perMaster))
	}
	total := 0
	var counts []int
	for _, n := range perMaster {
		total += n
		counts = append(counts, n)
	}
	sort.Ints(counts)
	if want := sites * patients * 2; total != want {
		t.Fatalf("%d document and summary keys in all, want %d", total, want)
	}
	mean := float64(total) / 3
	t.Logf("keys per master %v, mean %.0f", counts, mean)
	for addr, n := range perMaster {
		if f := float64(n); f < 0.75*mean || f > 1.25*mean {
			t.Errorf("master %s holds %d keys, outside ±25%% of the mean %.0f", addr, n, mean)
		}
	}
	// And a listing of one teiler still sees all of its patients in order.
	got, err := s.Patients(ctx, storage.Teiler{SiteID: "site07", TeilerID: "teiler1"}, "", "", 0)
	if err != nil || len(got) != patients || got[0].PatientID != "patient-0000" {
		t.Fatalf("Patients = %d, %v", len(got), err)
	}
}

// Every prefix of a key names the key's partition among its own (or
// leaves the partitions open): a scan never misses a key, and a
// transaction that scans a prefix of one partition sees all its keys.
func FuzzPartitions(f *testing.F) {
	for _, k := range []string{"doc/charite/teiler1/P1", "sum/a%2Fb/t/x/y", "stats/s/t/", "cred/u", "doc/s/", "x"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		part := storage.Partitions.Key(key)
		for i := 0; i <= len(key); i++ {
			parts := storage.Partitions.Prefix(key[:i])
			if parts != nil && !slices.Contains(parts, part) {
				t.Fatalf("Prefix(%q) = %q lacks %q, the partition of %q", key[:i], parts, part, key)
			}
		}
	})
}

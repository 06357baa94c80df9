package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ownCluster starts a throwaway Redis Cluster for one test (this test kills
// a master, which must not disturb the cluster other tests share) and
// returns its URL. Skipped without redis-server, failed under CI=true.
func ownCluster(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; CI must run the failover test", bin)
			}
			t.Skipf("%s is missing: the replica and failover test needs its own Redis Cluster", bin)
		}
	}
	ports := freePairs(t, 6)
	dir := t.TempDir() + "/cluster"
	script := filepath.Join(repoRoot, "deploy/local/redis-cluster.sh")
	args := []string{"start", dir}
	for _, p := range ports {
		args = append(args, fmt.Sprint(p))
	}
	out, err := exec.Command(script, args...).Output()
	if err != nil {
		t.Fatalf("starting a Redis Cluster on %v: %v", ports, err)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	return strings.TrimSpace(string(out))
}

// freePairs finds n ports p whose cluster bus port p+10000 is free too.
func freePairs(t *testing.T, n int) []int {
	t.Helper()
	free := func(p int) bool {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	var ports []int
	for p := 17000 + rand.IntN(900); len(ports) < n && p < 18000; p++ {
		if free(p) && free(p+10000) {
			ports = append(ports, p)
		}
	}
	if len(ports) < n {
		t.Fatal("no free ports for a Redis Cluster in 17000-17999")
	}
	return ports
}

func clusterClient(url string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(strings.TrimPrefix(url, "redis://"), ",")})
}

// killMaster shuts one master of the cluster down (SHUTDOWN NOSAVE: the
// process ends at once, without a snapshot, after its replica caught up)
// and returns its address. A hard crash could lose the replication lag's
// acknowledged writes, which no client-side test can rule out (see
// docs/decisions.md, "Durability on Redis").
func killMaster(t *testing.T, url string) string {
	t.Helper()
	c := clusterClient(url)
	defer c.Close()
	ctx := context.Background()
	nodes, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) > 8 && strings.Contains(f[2], "master") && !strings.Contains(f[2], "fail") {
			addr := strings.SplitN(f[1], "@", 2)[0]
			n := redis.NewClient(&redis.Options{Addr: addr})
			_ = n.Do(ctx, "SHUTDOWN", "NOSAVE").Err()
			n.Close()
			return addr
		}
	}
	t.Fatalf("no master with slots in:\n%s", nodes)
	return ""
}

// waitClusterOK waits until a surviving node says cluster_state:ok and no
// longer counts dead among masters with slots.
func waitClusterOK(t *testing.T, url, dead string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	ctx := context.Background()
	for _, a := range strings.Split(strings.TrimPrefix(url, "redis://"), ",") {
		if a == dead {
			continue
		}
		n := redis.NewClient(&redis.Options{Addr: a})
		defer n.Close()
		for time.Now().Before(deadline) {
			info, err := n.ClusterInfo(ctx).Result()
			nodes, err2 := n.ClusterNodes(ctx).Result()
			if err == nil && err2 == nil && strings.Contains(info, "cluster_state:ok") && promoted(nodes, dead) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the cluster did not promote a replica of %s within %v", dead, within)
	}
}

// promoted tells whether the dead master is marked failed (its replica
// then holds its slots).
func promoted(nodes, dead string) bool {
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(f[1], dead+"@") {
			return strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?")
		}
	}
	return false
}

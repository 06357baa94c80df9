package k8scheck

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The services' Deployments: every variant of deploy/k8s must hold them.
var services = []string{
	"Deployment fris/auth", "Deployment fris/mdr", "Deployment fris/upload",
	"Deployment fris/broker", "Deployment fris/gateway",
}

// TestDeployManifests renders deploy/k8s as `kubectl apply -k` would, alone
// and in the variants its comments describe, and fails on every problem
// Check finds, naming the object and the field.
func TestDeployManifests(t *testing.T) {
	root := workspaceRoot(t)
	tests := []struct {
		name, dir string
		anyFile   bool
		// Workloads the render must hold (so that a render of nothing, or
		// of the wrong directory, cannot pass) and objects it must not.
		workloads []string
		absent    []string
	}{
		{
			name:      "base",
			dir:       "deploy/k8s",
			workloads: append([]string{"StatefulSet fris/redis"}, services...),
		},
		{
			// The Redis Cluster switch drops the single Redis and points
			// every service at the cluster.
			name:      "redis-cluster component",
			dir:       "tools/k8scheck/testdata/redis-cluster",
			workloads: services,
			absent: []string{"StatefulSet fris/redis", "Service fris/redis", "Service fris/redis-headless",
				"ConfigMap fris/redis-conf"},
		},
		{
			// A Job: its container runs to completion, so it needs no
			// probes; every other rule holds for it as for the servers.
			name:      "explorer-seed job",
			dir:       "tools/k8scheck/testdata/explorer-seed",
			anyFile:   true,
			workloads: append([]string{"Job fris/explorer-seed", "StatefulSet fris/redis"}, services...),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Render(filepath.Join(root, tc.dir), tc.anyFile)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(objs)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Problems {
				t.Errorf("%s: %s", tc.dir, p)
			}
			for _, w := range tc.workloads {
				if !slices.Contains(res.Workloads, w) {
					t.Errorf("%s: %s is not among the rendered workloads %v", tc.dir, w, res.Workloads)
				}
			}
			for _, o := range objs {
				if slices.Contains(tc.absent, o.String()) {
					t.Errorf("%s: %s is still rendered", tc.dir, o)
				}
			}
			t.Logf("%s: %d objects, workloads %v", tc.dir, len(objs), res.Workloads)
		})
	}
}

// TestRedisClusterURLs: with the component on, no service keeps the single
// Redis's URL (a store split between two Redis deployments would lose data
// silently).
func TestRedisClusterURLs(t *testing.T) {
	objs, err := Render(filepath.Join(workspaceRoot(t), "tools/k8scheck/testdata/redis-cluster"), false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	var env *corev1.ConfigMap
	for _, o := range objs {
		if o.String() == "ConfigMap fris/fris-env" {
			v, err := d.Decode(o)
			if err != nil {
				t.Fatal(err)
			}
			env = v.(*corev1.ConfigMap)
		}
	}
	if env == nil {
		t.Fatal("ConfigMap fris/fris-env is not rendered")
	}
	urls := 0
	for k, v := range env.Data {
		if !strings.HasSuffix(k, "_REDIS_URL") {
			continue
		}
		urls++
		if !strings.Contains(v, "redis-cluster-0.redis-cluster-headless:6379,") {
			t.Errorf("ConfigMap fris/fris-env: data.%s = %q, not the cluster's nodes", k, v)
		}
	}
	if urls != 4 {
		t.Errorf("ConfigMap fris/fris-env: %d *_REDIS_URL keys, want 4 (mdr, auth, upload, broker)", urls)
	}
}

// workspaceRoot is the nearest directory above the test's that holds go.work.
func workspaceRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test's directory")
		}
		dir = parent
	}
}

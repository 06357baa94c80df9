package kv

import bolt "go.etcd.io/bbolt"

// Pending is the number of writes in s's batch waiting to commit (for tests
// that need a busy store).
func Pending(s Store) int {
	var g *groupCommit
	switch s := s.(type) {
	case *Bolt:
		g = s.group
	case *Redis:
		g = s.group
	}
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil {
		return 0
	}
	return len(g.pending.calls)
}

// WithFault makes every commit of a store opened with o fail with fault's
// error while it returns one (a full disk, without filling one).
func WithFault(o BoltOptions, fault func() error) BoltOptions {
	o.fault = func(*bolt.Tx) error { return fault() }
	return o
}

// WithLargeFault passes fault the size of the large values a commit
// writes (Ping's probe, or a value under the key "large") and fails the
// commit with its error; other commits go through: a disk with free pages
// for small writes but not for large ones.
func WithLargeFault(o BoltOptions, fault func(size int) error) BoltOptions {
	o.fault = func(tx *bolt.Tx) error {
		if bk := tx.Bucket(bucketProbe); bk != nil {
			if v := bk.Get([]byte("probe")); v != nil {
				return fault(len(v))
			}
		}
		if v := tx.Bucket(bucketData).Get([]byte("large")); v != nil {
			return fault(len(v) - 8) // less the expiry prefix
		}
		return nil
	}
	return o
}

package kv

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
	o.fault = fault
	return o
}

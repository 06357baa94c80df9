// Package storage keeps the registry: one record per namespace holding its
// metadata and elements, and a generation counter bumped by every change so
// replicas know when to rebuild their read index.
package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/kv"
	mdrv1 "fris.dev/proto/mdr/v1"
)

// Sentinels, shared with every FRIS store so one function maps them.
var (
	ErrNotFound = kv.ErrNotFound
	ErrExists   = kv.ErrExists
	ErrConflict = kv.ErrConflict
)

// Store is what the registry service needs from storage.
type Store interface {
	// Load returns every namespace with its elements, and the generation
	// they belong to.
	Load(ctx context.Context) (gen int64, defs []*mdrv1.NamespaceDef, err error)
	// Generation is cheap: the service polls it to notice imports made
	// through other replicas.
	Generation(ctx context.Context) (int64, error)
	// LastChange is when the generation last moved (unix nanoseconds), 0
	// when it never did since the registry began recording it.
	LastChange(ctx context.Context) (int64, error)
	// Import merges reg into the registry atomically. check sees the whole
	// registry as it would be afterwards; an error from it changes nothing.
	Import(ctx context.Context, reg *mdrv1.Registry, check func([]*mdrv1.NamespaceDef) error) (gen int64, err error)
	// DeleteNamespace removes a namespace and its elements; check sees the
	// registry as it would be afterwards, as with Import.
	DeleteNamespace(ctx context.Context, name string, check func([]*mdrv1.NamespaceDef) error) (gen int64, err error)
	Ping(ctx context.Context) error
}

const (
	nsPrefix = "ns/"
	genKey   = "meta/generation"
	// changedKey holds when genKey last moved, for operators.
	changedKey = "meta/changed"
)

// KV is the Store on a kv backend (embedded or Redis).
type KV struct{ db kv.Store }

// New returns the registry store on db.
func New(db kv.Store) *KV { return &KV{db: db} }

func (s *KV) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

func (s *KV) Generation(ctx context.Context) (int64, error) {
	return readGen(ctx, s.db)
}

func (s *KV) LastChange(ctx context.Context) (int64, error) {
	return readInt(ctx, s.db, changedKey)
}

func readGen(ctx context.Context, r kv.Reader) (int64, error) {
	return readInt(ctx, r, genKey)
}

func readInt(ctx context.Context, r kv.Reader, key string) (int64, error) {
	v, err := r.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(v), 10, 64)
}

func (s *KV) Load(ctx context.Context) (int64, []*mdrv1.NamespaceDef, error) {
	// Read inside a transaction so the generation matches the namespaces.
	var (
		gen  int64
		defs []*mdrv1.NamespaceDef
	)
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		var err error
		if gen, err = readGen(ctx, tx); err != nil {
			return err
		}
		defs, err = loadAll(ctx, tx)
		return err
	})
	return gen, defs, err
}

func loadAll(ctx context.Context, r kv.Reader) ([]*mdrv1.NamespaceDef, error) {
	es, err := r.Scan(ctx, nsPrefix, "", 0)
	if err != nil {
		return nil, err
	}
	defs := make([]*mdrv1.NamespaceDef, 0, len(es))
	for _, e := range es {
		d := &mdrv1.NamespaceDef{}
		if err := proto.Unmarshal(e.Value, d); err != nil {
			return nil, fmt.Errorf("namespace record %s: %w", e.Key, err)
		}
		defs = append(defs, d)
	}
	return defs, nil
}

func (s *KV) Import(ctx context.Context, reg *mdrv1.Registry, check func([]*mdrv1.NamespaceDef) error) (int64, error) {
	var gen int64
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		defs, err := loadAll(ctx, tx)
		if err != nil {
			return err
		}
		byName := make(map[string]int, len(defs))
		for i, d := range defs {
			byName[d.GetName()] = i
		}
		var changed []*mdrv1.NamespaceDef
		for _, in := range reg.GetNamespaces() {
			i, ok := byName[in.GetName()]
			var merged *mdrv1.NamespaceDef
			if ok {
				merged = Merge(defs[i], in)
				defs[i] = merged
			} else {
				merged = Merge(nil, in)
				byName[in.GetName()] = len(defs)
				defs = append(defs, merged)
			}
			changed = append(changed, merged)
		}
		if check != nil {
			if err := check(defs); err != nil {
				return err
			}
		}
		for _, d := range changed {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
			if err != nil {
				return err
			}
			if err := tx.Put(nsPrefix+d.GetName(), b, 0); err != nil {
				return err
			}
		}
		gen, err = bumpGen(ctx, tx)
		return err
	})
	return gen, err
}

func bumpGen(ctx context.Context, tx kv.Tx) (int64, error) {
	g, err := readGen(ctx, tx)
	if err != nil {
		return 0, err
	}
	g++
	if err := tx.Put(changedKey, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0); err != nil {
		return 0, err
	}
	return g, tx.Put(genKey, []byte(strconv.FormatInt(g, 10)), 0)
}

func (s *KV) DeleteNamespace(ctx context.Context, name string, check func([]*mdrv1.NamespaceDef) error) (int64, error) {
	var gen int64
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, nsPrefix+name); err != nil {
			return fmt.Errorf("namespace %q: %w", name, err)
		}
		if err := tx.Delete(nsPrefix + name); err != nil {
			return err
		}
		if check != nil {
			rest, err := loadAll(ctx, tx)
			if err != nil {
				return err
			}
			if err := check(rest); err != nil {
				return err
			}
		}
		var err error
		gen, err = bumpGen(ctx, tx)
		return err
	})
	return gen, err
}

// Merge applies an imported namespace to the stored one: metadata and root
// members are replaced, elements are upserted by URN (a replaced element
// keeps its place, new ones are appended in import order).
func Merge(old, in *mdrv1.NamespaceDef) *mdrv1.NamespaceDef {
	out := proto.Clone(in).(*mdrv1.NamespaceDef)
	if old == nil {
		return out
	}
	out.Elements = make([]*mdrv1.Element, 0, len(old.GetElements())+len(in.GetElements()))
	pos := map[string]int{}
	for _, e := range old.GetElements() {
		pos[e.GetUrn()] = len(out.Elements)
		out.Elements = append(out.Elements, e)
	}
	for _, e := range in.GetElements() {
		if i, ok := pos[e.GetUrn()]; ok {
			out.Elements[i] = e
			continue
		}
		pos[e.GetUrn()] = len(out.Elements)
		out.Elements = append(out.Elements, e)
	}
	return out
}

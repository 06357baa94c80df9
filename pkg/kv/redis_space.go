package kv

import (
	"context"
	"strings"
)

// space is the names of one partition's keys.
type space struct {
	data, index, expires string
	// route is a key of the partition's slot that no one writes (see
	// Redis.cluster).
	route string
}

func (r *Redis) space(part string) space {
	t := strings.TrimSuffix(r.prefix, "d:")
	if part != "" {
		t = "{" + r.tag + ":" + tagEscaper.Replace(part) + "}:"
	}
	return space{data: t + "d:", index: t + "i", expires: t + "x", route: t + "route"}
}

// tagEscaper keeps a partition's name inside its hash tag, and the names
// of two partitions apart.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

func (r *Redis) keyPart(key string) string {
	if r.parts == nil {
		return ""
	}
	return r.parts.Key(key)
}

// prefixParts lists the partitions a scan of prefix reads; nil: all.
func (r *Redis) prefixParts(prefix string) []string {
	if r.parts == nil {
		return []string{""}
	}
	return r.parts.Prefix(prefix)
}

// partitions lists the base partition and every other one written so far.
func (r *Redis) partitions(ctx context.Context) ([]string, error) {
	ps, err := r.c.SMembers(ctx, r.partsKey).Result()
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		r.known.Store(p, true)
	}
	return append([]string{""}, ps...), nil
}

// register adds part to the set of partitions before its first write, so
// a scan that spans partitions finds it. Adding twice is harmless; a crash
// after it leaves an empty partition listed, which scans skip quickly.
func (r *Redis) register(ctx context.Context, part string) error {
	if part == "" {
		return nil
	}
	if _, ok := r.known.Load(part); ok {
		return nil
	}
	if err := r.c.SAdd(ctx, r.partsKey, part).Err(); err != nil {
		return err
	}
	r.known.Store(part, true)
	return nil
}

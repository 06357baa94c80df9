// Package storage keeps the central upload's data on a kv.Store: the sites'
// Basic credentials (hashed), the patient documents byte for byte with a
// small summary each, and every teiler's last upload timestamp.
//
// Keys: cred/<username>; doc/<site>/<teiler>/<patient> (the document) and
// sum/<site>/<teiler>/<patient> (its summary), always written and deleted
// together in one transaction; stats/<site>/<teiler>. Path components are
// percent-escaped so a '/' in an id cannot reach into another teiler's keys;
// escaping byte by byte keeps "escaped prefix is a prefix of escaped id",
// which the prefix delete relies on.
//
// Partitions (Partitions, kv.Partitioner): a transaction here never needs
// more than one patient (its document and summary), so a teiler's patients
// are spread over a few partitions by a hash of the id, which spreads even
// one large site over a Redis Cluster's shards while a listing of a teiler
// reads only its own partitions. Credentials live in the base partition,
// each teiler's timestamp in a partition of its own.
package storage

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"

	"fris.dev/pkg/kv"
)

// Sentinel errors, shared with every FRIS store.
var (
	ErrNotFound = kv.ErrNotFound
	ErrExists   = kv.ErrExists
)

// Teiler is one site's sharing component, the owner of uploaded patients.
type Teiler struct {
	SiteID   string `json:"site"`
	TeilerID string `json:"teiler"`
}

func (t Teiler) String() string { return t.SiteID + "/" + t.TeilerID }

func (t Teiler) key() string { return esc(t.SiteID) + "/" + esc(t.TeilerID) + "/" }

// Credential is one Basic username of one teiler.
type Credential struct {
	Username string `json:"username"`
	Teiler   Teiler `json:"teiler"`
	Hash     string `json:"hash"`
	Disabled bool   `json:"disabled,omitempty"`
	// Created is unix seconds.
	Created int64 `json:"created"`
}

// Summary describes a stored document without its bytes.
type Summary struct {
	Teiler    Teiler `json:"teiler"`
	PatientID string `json:"id"`
	// Stored is unix nanoseconds.
	Stored     int64 `json:"stored"`
	Size       int   `json:"size"`
	Cases      int   `json:"cases"`
	Samples    int   `json:"samples"`
	Attributes int   `json:"attributes"`
	Containers int   `json:"containers,omitempty"`
	Refs       int   `json:"refs,omitempty"`
}

// Store is the upload service's data.
type Store interface {
	Ping(ctx context.Context) error

	CreateCredential(ctx context.Context, c Credential) error
	Credential(ctx context.Context, username string) (Credential, error)
	UpdateCredential(ctx context.Context, username string, fn func(*Credential) error) (Credential, error)
	Credentials(ctx context.Context) ([]Credential, error)

	// PutPatient stores doc and its summary atomically, replacing an
	// earlier version; replaced tells whether there was one.
	PutPatient(ctx context.Context, s Summary, doc []byte) (replaced bool, err error)
	Patient(ctx context.Context, t Teiler, id string) (Summary, []byte, error)
	DeletePatient(ctx context.Context, t Teiler, id string) error
	// DeletePatientsByPrefix removes the teiler's patients whose id starts
	// with prefix, in transactions of a bounded size.
	DeletePatientsByPrefix(ctx context.Context, t Teiler, prefix string) (int, error)
	// Patients lists summaries in id order: ids starting with prefix and
	// sorting after `after`; limit <= 0 means all.
	Patients(ctx context.Context, t Teiler, prefix, after string, limit int) ([]Summary, error)
	CountPatients(ctx context.Context, t Teiler) (int, error)
	// PatientStats counts the teiler's patients and finds when the newest
	// was stored (unix nanoseconds, 0 when none).
	PatientStats(ctx context.Context, t Teiler) (count int, lastStored int64, err error)

	// LastUpload is the teiler's stored timestamp (unix nanoseconds), or
	// ErrNotFound when it never stored one.
	LastUpload(ctx context.Context, t Teiler) (int64, error)
	SetLastUpload(ctx context.Context, t Teiler, unixNano int64) error
}

// New returns the Store on db.
func New(db kv.Store) Store { return &store{db: db} }

type store struct{ db kv.Store }

// esc escapes one key component; only '%' and '/' need it, and keeping
// everything else makes keys readable in redis-cli.
func esc(s string) string {
	if !strings.ContainsAny(s, "%/") {
		return s
	}
	return strings.NewReplacer("%", "%25", "/", "%2F").Replace(s)
}

const deleteBatch = 500

// FitsKey reports whether a patient of the teiler can be stored under id:
// escaping makes each % and / of the ids three bytes of the store's key,
// which the store bounds (kv.MaxKeyLen).
func FitsKey(t Teiler, id string) bool {
	return len(docKey(t, id)) <= kv.MaxKeyLen && len(sumKey(t, id)) <= kv.MaxKeyLen
}

func credKey(u string) string             { return "cred/" + u }
func docKey(t Teiler, id string) string   { return "doc/" + t.key() + esc(id) }
func sumKey(t Teiler, id string) string   { return "sum/" + t.key() + esc(id) }
func statsKey(t Teiler) string            { return "stats/" + t.key() }
func sumPrefix(t Teiler, p string) string { return "sum/" + t.key() + esc(p) }

// Partitions is the upload store's kv.Partitioner: doc/ and sum/ keys of
// site s, teiler t and patient id are in partition s/t/<bucket of id>,
// stats/s/t/ in s/t, everything else in the base partition.
var Partitions kv.Partitioner = partitions{}

// buckets is the number of partitions of one teiler's patients: enough to
// spread a large site over a cluster's shards, few enough that a listing
// of one teiler (which reads each) stays cheap.
const buckets = 8

type partitions struct{}

// teilerOf splits rest (the key after its kind) into the teiler's part,
// "site/teiler", and what follows; ok is false when rest does not hold both
// components yet.
func teilerOf(rest string) (teiler, tail string, ok bool) {
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", "", false
	}
	j := strings.IndexByte(rest[i+1:], '/')
	if j < 0 {
		return "", "", false
	}
	return rest[:i+1+j], rest[i+2+j:], true
}

func bucket(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return strconv.Itoa(int(h.Sum32() % buckets))
}

func (partitions) Key(key string) string {
	kind, rest, _ := strings.Cut(key, "/")
	teiler, id, ok := teilerOf(rest)
	switch {
	case !ok:
		return ""
	case kind == "doc" || kind == "sum":
		return teiler + "/" + bucket(id)
	case kind == "stats":
		return teiler
	}
	return ""
}

func (partitions) Prefix(prefix string) []string {
	kind, rest, ok := strings.Cut(prefix, "/")
	if !ok {
		return nil
	}
	if kind != "doc" && kind != "sum" && kind != "stats" {
		return []string{""}
	}
	teiler, _, ok := teilerOf(rest)
	switch {
	case !ok:
		return nil
	case kind == "stats":
		return []string{teiler}
	}
	out := make([]string, buckets)
	for i := range out {
		out[i] = teiler + "/" + strconv.Itoa(i)
	}
	return out
}

func (s *store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

func (s *store) CreateCredential(ctx context.Context, c Credential) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, credKey(c.Username)); err == nil {
			return ErrExists
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return kv.PutJSON(tx, credKey(c.Username), c, 0)
	})
}

func (s *store) Credential(ctx context.Context, username string) (Credential, error) {
	return kv.GetJSON[Credential](ctx, s.db, credKey(username))
}

func (s *store) UpdateCredential(ctx context.Context, username string, fn func(*Credential) error) (Credential, error) {
	var out Credential
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		c, err := kv.GetJSON[Credential](ctx, tx, credKey(username))
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
		out = c
		return kv.PutJSON(tx, credKey(username), c, 0)
	})
	return out, err
}

func (s *store) Credentials(ctx context.Context) ([]Credential, error) {
	return kv.ScanJSON[Credential](ctx, s.db, "cred/", "", 0)
}

func (s *store) PutPatient(ctx context.Context, sum Summary, doc []byte) (bool, error) {
	// Not kv.PutJSON: the summary's bytes go into two records (its own and
	// the document's, see packDoc), encoded once.
	b, err := json.Marshal(sum)
	if err != nil {
		return false, err
	}
	var replaced bool
	err = s.db.Update(ctx, func(tx kv.Tx) error {
		_, err := tx.Get(ctx, sumKey(sum.Teiler, sum.PatientID))
		switch {
		case err == nil:
			replaced = true
		case errors.Is(err, kv.ErrNotFound):
			replaced = false
		default:
			return err
		}
		if err := tx.Put(docKey(sum.Teiler, sum.PatientID), packDoc(b, doc), 0); err != nil {
			return err
		}
		return tx.Put(sumKey(sum.Teiler, sum.PatientID), b, 0)
	})
	return replaced, err
}

func (s *store) Patient(ctx context.Context, t Teiler, id string) (Summary, []byte, error) {
	var sum Summary
	raw, err := s.db.Get(ctx, docKey(t, id))
	if err != nil {
		return sum, nil, err
	}
	meta, doc, err := unpackDoc(raw)
	if err != nil {
		return sum, nil, err
	}
	return sum, doc, json.Unmarshal(meta, &sum)
}

// packDoc keeps the summary with the document so one read returns a
// matching pair even while the patient is being replaced.
func packDoc(meta, doc []byte) []byte {
	out := make([]byte, 4, 4+len(meta)+len(doc))
	binary.BigEndian.PutUint32(out, uint32(len(meta)))
	return append(append(out, meta...), doc...)
}

func unpackDoc(raw []byte) (meta, doc []byte, err error) {
	if len(raw) < 4 || int(binary.BigEndian.Uint32(raw)) > len(raw)-4 {
		return nil, nil, errors.New("storage: corrupt document record")
	}
	n := 4 + int(binary.BigEndian.Uint32(raw))
	return raw[4:n], raw[n:], nil
}

func (s *store) DeletePatient(ctx context.Context, t Teiler, id string) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.Get(ctx, sumKey(t, id)); err != nil {
			return err
		}
		if err := tx.Delete(docKey(t, id)); err != nil {
			return err
		}
		return tx.Delete(sumKey(t, id))
	})
}

// DeletePatientsByPrefix deletes each patient in a transaction of its own
// (its document and summary together): a teiler's patients lie in several
// partitions. The deletes of a page run concurrently, so that group commit
// gathers them into a few commits.
func (s *store) DeletePatientsByPrefix(ctx context.Context, t Teiler, prefix string) (int, error) {
	total := 0
	for {
		es, err := s.db.Scan(ctx, sumPrefix(t, prefix), "", deleteBatch)
		if err != nil {
			return total, err
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			deleted int
			errs    []error
		)
		sem := make(chan struct{}, 64)
		for _, e := range es {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				id := strings.TrimPrefix(e.Key, "sum/")
				gone := false
				err := s.db.Update(ctx, func(tx kv.Tx) error {
					gone = false
					if _, err := tx.Get(ctx, e.Key); errors.Is(err, kv.ErrNotFound) {
						return nil // deleted meanwhile
					} else if err != nil {
						return err
					}
					if err := tx.Delete(e.Key); err != nil {
						return err
					}
					gone = true
					return tx.Delete("doc/" + id)
				})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if gone {
					deleted++
				}
			}()
		}
		wg.Wait()
		total += deleted
		if err := errors.Join(errs...); err != nil {
			return total, err
		}
		if len(es) < deleteBatch {
			return total, nil
		}
	}
}

func (s *store) Patients(ctx context.Context, t Teiler, prefix, after string, limit int) ([]Summary, error) {
	out, err := kv.ScanJSON[Summary](ctx, s.db, sumPrefix(t, prefix), "", 0)
	if err != nil {
		return nil, err
	}
	// Escaping can reorder ids ('%' sorts before letters), so order, page
	// and limit by the ids themselves.
	sort.Slice(out, func(i, j int) bool { return out[i].PatientID < out[j].PatientID })
	if after != "" {
		i := sort.Search(len(out), func(i int) bool { return out[i].PatientID > after })
		out = out[i:]
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *store) CountPatients(ctx context.Context, t Teiler) (int, error) {
	es, err := s.db.Scan(ctx, sumPrefix(t, ""), "", 0)
	return len(es), err
}

func (s *store) PatientStats(ctx context.Context, t Teiler) (int, int64, error) {
	es, err := s.db.Scan(ctx, sumPrefix(t, ""), "", 0)
	if err != nil {
		return 0, 0, err
	}
	var last int64
	for _, e := range es {
		// Only the one field: the summaries are small, but there may be
		// many.
		var sum struct {
			Stored int64 `json:"stored"`
		}
		if err := json.Unmarshal(e.Value, &sum); err != nil {
			return 0, 0, err
		}
		last = max(last, sum.Stored)
	}
	return len(es), last, nil
}

func (s *store) LastUpload(ctx context.Context, t Teiler) (int64, error) {
	b, err := s.db.Get(ctx, statsKey(t))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}

func (s *store) SetLastUpload(ctx context.Context, t Teiler, unixNano int64) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		return tx.Put(statsKey(t), []byte(strconv.FormatInt(unixNano, 10)), 0)
	})
}

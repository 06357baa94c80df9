package service

import (
	"context"
	"crypto/rand"
	"errors"
	"regexp"
	"sort"
	"time"

	"fris.dev/pkg/rpcerr"
	"fris.dev/services/upload/internal/storage"
)

// usernames are what a Basic header can carry and a log line shows plainly.
var validUsername = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,128}$`)

// minPassword is the shortest password an operator may choose.
const minPassword = 12

// NewPassword returns a random password (26 base32 characters, 130 bits)
// for operators who do not choose one.
func NewPassword() string { return rand.Text() }

func checkPassword(p string) error {
	if len(p) < minPassword {
		return rpcerr.New(rpcerr.ErrInvalid, "the password must have at least %d characters", minPassword)
	}
	if len(p) > 256 {
		return rpcerr.New(rpcerr.ErrInvalid, "the password must have at most 256 characters")
	}
	return nil
}

// CreateCredential adds a username for one teiler. An empty password is
// generated; the returned password is the only copy (empty when an
// existing credential was kept by ifMissing, which the bool tells).
func (s *Service) CreateCredential(ctx context.Context, username string, t storage.Teiler, pass string, ifMissing bool) (string, bool, error) {
	if !validUsername.MatchString(username) {
		return "", false, rpcerr.New(rpcerr.ErrInvalid, "username %q: want 1 to 128 of A-Z a-z 0-9 . _ @ -", clip(username))
	}
	if err := checkTeiler(t); err != nil {
		return "", false, err
	}
	if ifMissing {
		if c, err := s.store.Credential(ctx, username); err == nil {
			if c.Teiler != t {
				return "", false, rpcerr.New(storage.ErrExists, "username %q belongs to %s", username, c.Teiler)
			}
			return "", true, nil
		}
	}
	if pass == "" {
		pass = NewPassword()
	}
	if err := checkPassword(pass); err != nil {
		return "", false, err
	}
	if s.cfg.Sites != nil {
		if err := s.cfg.Sites.Check(ctx, t.SiteID); err != nil {
			return "", false, err
		}
	}
	hash, err := s.hasher.Hash(ctx, pass)
	if err != nil {
		return "", false, err
	}
	c := storage.Credential{Username: username, Teiler: t, Hash: hash, Created: s.now().Unix()}
	if err := s.store.CreateCredential(ctx, c); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return "", false, rpcerr.New(storage.ErrExists, "username %q exists", username)
		}
		return "", false, err
	}
	s.log.InfoContext(ctx, "credential created", "username", username, "site", t.SiteID, "teiler", t.TeilerID)
	return pass, false, nil
}

// SetPassword replaces a credential's password (generated when empty).
func (s *Service) SetPassword(ctx context.Context, username, pass string) (string, error) {
	if pass == "" {
		pass = NewPassword()
	}
	if err := checkPassword(pass); err != nil {
		return "", err
	}
	hash, err := s.hasher.Hash(ctx, pass)
	if err != nil {
		return "", err
	}
	if _, err := s.store.UpdateCredential(ctx, username, func(c *storage.Credential) error {
		c.Hash = hash
		return nil
	}); err != nil {
		return "", notFoundUser(err, username)
	}
	s.log.InfoContext(ctx, "credential password set", "username", username)
	return pass, nil
}

// SetDisabled turns a credential off (or on again).
func (s *Service) SetDisabled(ctx context.Context, username string, disabled bool) error {
	_, err := s.store.UpdateCredential(ctx, username, func(c *storage.Credential) error {
		c.Disabled = disabled
		return nil
	})
	if err == nil {
		s.log.InfoContext(ctx, "credential changed", "username", username, "disabled", disabled)
	}
	return notFoundUser(err, username)
}

func notFoundUser(err error, username string) error {
	if errors.Is(err, storage.ErrNotFound) {
		return rpcerr.New(storage.ErrNotFound, "no credential %q", clip(username))
	}
	return err
}

// Credentials lists every credential (hashes included; the API drops them).
func (s *Service) Credentials(ctx context.Context) ([]storage.Credential, error) {
	return s.store.Credentials(ctx)
}

// Patients lists summaries of one teiler.
func (s *Service) Patients(ctx context.Context, t storage.Teiler, prefix, after string, limit int) ([]storage.Summary, error) {
	if err := checkTeiler(t); err != nil {
		return nil, err
	}
	return s.store.Patients(ctx, t, prefix, after, limit)
}

// TeilerStatus is one teiler's upload status.
type TeilerStatus struct {
	Teiler      storage.Teiler
	Patients    int
	LastUpload  time.Time // zero: never
	LastStored  time.Time // zero: no patient
	Credentials int
	Disabled    int
}

// Teilers is the upload status of every teiler that has a credential,
// sorted by site and teiler; namesOnly skips the patients and times.
func (s *Service) Teilers(ctx context.Context, namesOnly bool) ([]TeilerStatus, error) {
	cs, err := s.store.Credentials(ctx)
	if err != nil {
		return nil, err
	}
	byTeiler := map[storage.Teiler]*TeilerStatus{}
	var out []*TeilerStatus
	for _, c := range cs {
		st := byTeiler[c.Teiler]
		if st == nil {
			st = &TeilerStatus{Teiler: c.Teiler}
			byTeiler[c.Teiler] = st
			out = append(out, st)
		}
		st.Credentials++
		if c.Disabled {
			st.Disabled++
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Teiler, out[j].Teiler
		return a.SiteID < b.SiteID || a.SiteID == b.SiteID && a.TeilerID < b.TeilerID
	})
	res := make([]TeilerStatus, 0, len(out))
	for _, st := range out {
		if namesOnly {
			res = append(res, *st)
			continue
		}
		n, last, err := s.store.PatientStats(ctx, st.Teiler)
		if err != nil {
			return nil, err
		}
		st.Patients = n
		if last > 0 {
			st.LastStored = time.Unix(0, last).UTC()
		}
		at, err := s.store.LastUpload(ctx, st.Teiler)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			st.LastUpload = time.Unix(0, at).UTC()
		}
		res = append(res, *st)
	}
	return res, nil
}

// Count counts one teiler's patients.
func (s *Service) Count(ctx context.Context, t storage.Teiler) (int, error) {
	if err := checkTeiler(t); err != nil {
		return 0, err
	}
	return s.store.CountPatients(ctx, t)
}

// Patient returns one stored document with its summary.
func (s *Service) Patient(ctx context.Context, t storage.Teiler, id string) (storage.Summary, []byte, error) {
	if err := checkTeiler(t); err != nil {
		return storage.Summary{}, nil, err
	}
	sum, doc, err := s.store.Patient(ctx, t, id)
	if errors.Is(err, storage.ErrNotFound) {
		return sum, nil, rpcerr.New(storage.ErrNotFound, "no patient %q at %s", clip(id), t)
	}
	return sum, doc, err
}

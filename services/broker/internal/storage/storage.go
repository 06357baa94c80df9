// Package storage keeps the broker's data: the site registry, banks (by
// email, and by the hash of their token), pending activation codes,
// inquiries, their expose PDFs and the banks' replies.
package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"fris.dev/pkg/kv"
	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/monitoring"
)

// Sentinels, shared with every FRIS store so one function maps them.
var (
	ErrNotFound = kv.ErrNotFound
	ErrExists   = kv.ErrExists
	ErrConflict = kv.ErrConflict
)

// Bank states.
const (
	BankPending = "pending"
	BankActive  = "active"
)

// Bank is a site's connector. Email is stored lower-cased: the key.
type Bank struct {
	Email        string `json:"email"`
	TokenHash    string `json:"token_hash"`
	Status       string `json:"status"`
	SiteID       string `json:"site_id,omitempty"`
	RegisteredAt int64  `json:"registered_at"`
	ApprovedAt   int64  `json:"approved_at,omitempty"`
	// ReportedSite is the site name the bank's connector reported for
	// itself: a hint for operators, never a link.
	ReportedSite string `json:"reported_site,omitempty"`
}

// Report is the latest monitoring report of a bank.
type Report struct {
	BankEmail  string            `json:"bank_email"`
	SiteID     string            `json:"site_id,omitempty"`
	ReceivedAt int64             `json:"received_at"`
	Items      []monitoring.Item `json:"items"`
}

// Activation is an activation code sent to a bank's email, waiting for the
// PUT that carries it.
type Activation struct {
	Email    string `json:"email"`
	CodeHash string `json:"code_hash"`
	Attempts int    `json:"attempts"`
	Created  int64  `json:"created"`
}

// Expose is an inquiry's PDF.
type Expose struct {
	ID        string `json:"id"`
	InquiryID string `json:"inquiry_id"`
	Filename  string `json:"filename"`
	Data      []byte `json:"data"`
}

// NewExpose is a PDF to attach to an inquiry; the store gives it an id.
type NewExpose struct {
	Filename string
	Data     []byte
}

// Reply is one bank's answer to one inquiry.
type Reply struct {
	InquiryID   string `json:"inquiry_id"`
	BankEmail   string `json:"bank_email"`
	SiteID      string `json:"site_id"`
	Body        string `json:"body"`
	ContentType string `json:"content_type,omitempty"`
	Count       *int32 `json:"count,omitempty"`
	ReceivedAt  int64  `json:"received_at"`
}

// Store is what the broker service needs from storage. Emails passed in
// are already lower-cased.
type Store interface {
	// CreateBank adds a bank (ErrExists when the email or token hash is
	// taken) and drops a pending activation of its email.
	CreateBank(ctx context.Context, b Bank) error
	Bank(ctx context.Context, email string) (Bank, error)
	BankByToken(ctx context.Context, tokenHash string) (Bank, error)
	// UpdateBank changes a bank atomically; fn must not change the email or
	// the token hash.
	UpdateBank(ctx context.Context, email string, fn func(*Bank) error) (Bank, error)
	DeleteBank(ctx context.Context, email string) error
	Banks(ctx context.Context) ([]Bank, error)

	// PutActivation replaces the activation of a.Email; it expires after ttl.
	PutActivation(ctx context.Context, a Activation, ttl time.Duration) error
	Activation(ctx context.Context, email string) (Activation, error)
	// UpdateActivation changes an activation keeping its expiry.
	UpdateActivation(ctx context.Context, a Activation, ttl time.Duration) error
	DeleteActivation(ctx context.Context, email string) error

	// CreateInquiry stores in under a new id (and its expose, when given)
	// and returns it as stored.
	CreateInquiry(ctx context.Context, in *brokerv1.Inquiry, expose *NewExpose) (*brokerv1.Inquiry, error)
	Inquiry(ctx context.Context, id string) (*brokerv1.Inquiry, error)
	// UpdateInquiry changes an inquiry atomically; fn may return a new
	// expose, which replaces the old one.
	UpdateInquiry(ctx context.Context, id string, fn func(*brokerv1.Inquiry) (*NewExpose, error)) (*brokerv1.Inquiry, error)
	// Inquiries returns every inquiry in id order.
	Inquiries(ctx context.Context) ([]*brokerv1.Inquiry, error)
	Expose(ctx context.Context, id string) (Expose, error)

	// PutReply stores r, replacing the bank's earlier reply to the inquiry.
	PutReply(ctx context.Context, r Reply) error
	Replies(ctx context.Context, inquiryID string) ([]Reply, error)

	// PutReport stores r as its bank's latest report (ErrNotFound when the
	// bank is gone); DeleteBank drops it with the bank.
	PutReport(ctx context.Context, r Report) error
	// Reports returns every bank's latest report, by email.
	Reports(ctx context.Context) ([]Report, error)

	// CreateSite adds a site to the registry (ErrExists when its id is
	// taken); LastReplyAt is ignored.
	CreateSite(ctx context.Context, site Site) error
	Site(ctx context.Context, id string) (Site, error)
	// UpdateSite changes a site atomically; fn must not change the id.
	UpdateSite(ctx context.Context, id string, fn func(*Site) error) (Site, error)
	// Sites returns every site, by id.
	Sites(ctx context.Context) ([]Site, error)
	// SiteReplied records that a bank of the site replied at (unix
	// nanoseconds), unless a later reply was recorded already.
	SiteReplied(ctx context.Context, id string, at int64) error
	// SitePolled records that a bank of the site asked for its inquiries
	// at (unix nanoseconds), unless a time within grain of it, or a later
	// one, is recorded; SitePolls reads them all, by site id.
	SitePolled(ctx context.Context, id string, at, grain int64) error
	SitePolls(ctx context.Context) (map[string]int64, error)
	// InquirySeen records that a bank of the site first fetched the
	// inquiry at; InquirySeenBy reads the inquiry's, by site id.
	InquirySeen(ctx context.Context, inquiry, site string, at int64) error
	InquirySeenBy(ctx context.Context, inquiry string) (map[string]int64, error)

	Ping(ctx context.Context) error
}

const (
	bankPrefix    = "bank/"
	tokenPrefix   = "token/"
	actPrefix     = "activation/"
	inqPrefix     = "inquiry/"
	exposePrefix  = "expose/"
	replyPrefix   = "reply/"
	reportPrefix  = "report/"
	inquirySeqKey = "seq/inquiry"
	exposeSeqKey  = "seq/expose"
)

// KV is the Store on a kv backend (embedded or Redis).
// Partitions is the broker store's kv.Partitioner: the replies to one
// inquiry (reply/<inquiry>/<bank>, the records that grow with banks times
// inquiries) are a partition of their own; banks, tokens, inquiries and
// exposes stay in the base partition, where the transactions that create
// them tie them to the id counters and the token index.
var Partitions kv.Partitioner = kv.Segments{replyPrefix: 1}

type KV struct{ db kv.Store }

// New returns the broker store on db.
func New(db kv.Store) *KV { return &KV{db: db} }

func (s *KV) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// pad keeps numeric ids in numeric order under byte-ordered scans.
func pad(id string) string {
	if len(id) >= 12 {
		return id
	}
	return fmt.Sprintf("%012s", id)
}

func absent(ctx context.Context, r kv.Reader, key string) error {
	_, err := r.Get(ctx, key)
	if err == nil {
		return ErrExists
	}
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	return err
}

func (s *KV) CreateBank(ctx context.Context, b Bank) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		if err := absent(ctx, tx, bankPrefix+b.Email); err != nil {
			return err
		}
		if err := absent(ctx, tx, tokenPrefix+b.TokenHash); err != nil {
			return err
		}
		if err := kv.PutJSON(tx, bankPrefix+b.Email, b, 0); err != nil {
			return err
		}
		if err := tx.Put(tokenPrefix+b.TokenHash, []byte(b.Email), 0); err != nil {
			return err
		}
		return tx.Delete(actPrefix + b.Email)
	})
}

func (s *KV) Bank(ctx context.Context, email string) (Bank, error) {
	return kv.GetJSON[Bank](ctx, s.db, bankPrefix+email)
}

func (s *KV) BankByToken(ctx context.Context, tokenHash string) (Bank, error) {
	email, err := s.db.Get(ctx, tokenPrefix+tokenHash)
	if err != nil {
		return Bank{}, err
	}
	b, err := s.Bank(ctx, string(email))
	if err == nil && b.TokenHash != tokenHash {
		// The bank was deleted and its email registered again meanwhile.
		return Bank{}, ErrNotFound
	}
	return b, err
}

func (s *KV) UpdateBank(ctx context.Context, email string, fn func(*Bank) error) (Bank, error) {
	var out Bank
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		b, err := kv.GetJSON[Bank](ctx, tx, bankPrefix+email)
		if err != nil {
			return err
		}
		if err := fn(&b); err != nil {
			return err
		}
		out = b
		return kv.PutJSON(tx, bankPrefix+email, b, 0)
	})
	return out, err
}

func (s *KV) DeleteBank(ctx context.Context, email string) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		b, err := kv.GetJSON[Bank](ctx, tx, bankPrefix+email)
		if err != nil {
			return err
		}
		if err := tx.Delete(tokenPrefix + b.TokenHash); err != nil {
			return err
		}
		if err := tx.Delete(reportPrefix + email); err != nil {
			return err
		}
		return tx.Delete(bankPrefix + email)
	})
}

func (s *KV) Banks(ctx context.Context) ([]Bank, error) {
	return kv.ScanJSON[Bank](ctx, s.db, bankPrefix, "", 0)
}

func (s *KV) PutActivation(ctx context.Context, a Activation, ttl time.Duration) error {
	return s.db.Update(ctx, func(tx kv.Tx) error { return kv.PutJSON(tx, actPrefix+a.Email, a, ttl) })
}

func (s *KV) Activation(ctx context.Context, email string) (Activation, error) {
	return kv.GetJSON[Activation](ctx, s.db, actPrefix+email)
}

func (s *KV) UpdateActivation(ctx context.Context, a Activation, ttl time.Duration) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		old, err := kv.GetJSON[Activation](ctx, tx, actPrefix+a.Email)
		if err != nil {
			return err
		}
		if old.CodeHash != a.CodeHash {
			// A new code was sent meanwhile; this update is about the old one.
			return ErrConflict
		}
		return kv.PutJSON(tx, actPrefix+a.Email, a, ttl)
	})
}

func (s *KV) DeleteActivation(ctx context.Context, email string) error {
	return s.db.Update(ctx, func(tx kv.Tx) error { return tx.Delete(actPrefix + email) })
}

// next increments a counter inside tx and returns the new value.
func next(ctx context.Context, tx kv.Tx, key string) (string, error) {
	n := int64(0)
	v, err := tx.Get(ctx, key)
	switch {
	case err == nil:
		if n, err = strconv.ParseInt(string(v), 10, 64); err != nil {
			return "", fmt.Errorf("counter %s: %w", key, err)
		}
	case !errors.Is(err, kv.ErrNotFound):
		return "", err
	}
	n++
	id := strconv.FormatInt(n, 10)
	return id, tx.Put(key, []byte(id), 0)
}

func putExpose(ctx context.Context, tx kv.Tx, inquiryID string, e *NewExpose) (*brokerv1.ExposeInfo, error) {
	id, err := next(ctx, tx, exposeSeqKey)
	if err != nil {
		return nil, err
	}
	if err := kv.PutJSON(tx, exposePrefix+pad(id), Expose{ID: id, InquiryID: inquiryID, Filename: e.Filename, Data: e.Data}, 0); err != nil {
		return nil, err
	}
	return &brokerv1.ExposeInfo{Id: id, Filename: e.Filename, SizeBytes: int32(len(e.Data))}, nil
}

func putInquiry(tx kv.Tx, in *brokerv1.Inquiry) error {
	b, err := proto.Marshal(in)
	if err != nil {
		return err
	}
	return tx.Put(inqPrefix+pad(in.GetId()), b, 0)
}

func readInquiry(ctx context.Context, r kv.Reader, id string) (*brokerv1.Inquiry, error) {
	b, err := r.Get(ctx, inqPrefix+pad(id))
	if err != nil {
		return nil, err
	}
	in := &brokerv1.Inquiry{}
	if err := proto.Unmarshal(b, in); err != nil {
		return nil, fmt.Errorf("inquiry %s: %w", id, err)
	}
	return in, nil
}

func (s *KV) CreateInquiry(ctx context.Context, in *brokerv1.Inquiry, expose *NewExpose) (*brokerv1.Inquiry, error) {
	var out *brokerv1.Inquiry
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		c := proto.Clone(in).(*brokerv1.Inquiry)
		id, err := next(ctx, tx, inquirySeqKey)
		if err != nil {
			return err
		}
		c.Id = id
		c.Expose = nil
		if expose != nil {
			if c.Expose, err = putExpose(ctx, tx, id, expose); err != nil {
				return err
			}
		}
		out = c
		return putInquiry(tx, c)
	})
	return out, err
}

func (s *KV) Inquiry(ctx context.Context, id string) (*brokerv1.Inquiry, error) {
	return readInquiry(ctx, s.db, id)
}

func (s *KV) UpdateInquiry(ctx context.Context, id string, fn func(*brokerv1.Inquiry) (*NewExpose, error)) (*brokerv1.Inquiry, error) {
	var out *brokerv1.Inquiry
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		in, err := readInquiry(ctx, tx, id)
		if err != nil {
			return err
		}
		old := in.GetExpose().GetId()
		e, err := fn(in)
		if err != nil {
			return err
		}
		in.Id = id
		if e != nil {
			if old != "" {
				if err := tx.Delete(exposePrefix + pad(old)); err != nil {
					return err
				}
			}
			if in.Expose, err = putExpose(ctx, tx, id, e); err != nil {
				return err
			}
		}
		out = in
		return putInquiry(tx, in)
	})
	return out, err
}

func (s *KV) Inquiries(ctx context.Context) ([]*brokerv1.Inquiry, error) {
	es, err := s.db.Scan(ctx, inqPrefix, "", 0)
	if err != nil {
		return nil, err
	}
	out := make([]*brokerv1.Inquiry, 0, len(es))
	for _, e := range es {
		in := &brokerv1.Inquiry{}
		if err := proto.Unmarshal(e.Value, in); err != nil {
			return nil, fmt.Errorf("record %s: %w", e.Key, err)
		}
		out = append(out, in)
	}
	return out, nil
}

func (s *KV) Expose(ctx context.Context, id string) (Expose, error) {
	return kv.GetJSON[Expose](ctx, s.db, exposePrefix+pad(id))
}

func (s *KV) PutReply(ctx context.Context, r Reply) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		return kv.PutJSON(tx, replyPrefix+pad(r.InquiryID)+"/"+r.BankEmail, r, 0)
	})
}

func (s *KV) Replies(ctx context.Context, inquiryID string) ([]Reply, error) {
	return kv.ScanJSON[Reply](ctx, s.db, replyPrefix+pad(inquiryID)+"/", "", 0)
}

func (s *KV) PutReport(ctx context.Context, r Report) error {
	return s.db.Update(ctx, func(tx kv.Tx) error {
		// In the same transaction as the bank's existence, so a report
		// racing a deletion cannot outlive its bank.
		if _, err := tx.Get(ctx, bankPrefix+r.BankEmail); err != nil {
			return err
		}
		return kv.PutJSON(tx, reportPrefix+r.BankEmail, r, 0)
	})
}

func (s *KV) Reports(ctx context.Context) ([]Report, error) {
	return kv.ScanJSON[Report](ctx, s.db, reportPrefix, "", 0)
}

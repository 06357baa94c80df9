package explorer

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// ErrNoSession is what a Store answers for an unknown or expired id.
var ErrNoSession = errors.New("no such session")

// Session is one browser's state, kept on the server: the cookie carries
// only its id. Tokens never leave the gateway.
type Session struct {
	ID string
	// CSRF is the token every state-changing form of this session carries.
	CSRF    string
	Created time.Time
	Expires time.Time
	// User and Token: only signed-in sessions are stored (a sign-in in
	// progress lives in its own cookie, flow.go).
	User  *User
	Token *oauth2.Token
}

// User is who signed in, as the identity provider's userinfo says.
type User struct {
	Subject string
	Name    string
	Email   string
}

// maxFlows bounds a browser's sign-ins in progress (tabs).
const maxFlows = 4

// clone is a deep copy, so a caller may change what a store returned.
func (s *Session) clone() *Session {
	c := *s
	if s.User != nil {
		u := *s.User
		c.User = &u
	}
	if s.Token != nil {
		t := *s.Token
		c.Token = &t
	}
	return &c
}

// Store keeps sessions. Get returns a copy: changes count only once Put.
// One gateway replica's memory is enough for one replica; several need
// sticky sessions or a shared Store (docs/decisions.md).
type Store interface {
	Get(ctx context.Context, id string) (*Session, error)
	Put(ctx context.Context, s *Session) error
	Delete(ctx context.Context, id string) error
}

// Memory is an in-memory Store with expiry and a size cap. When full, the
// least recently used session goes first, and one without a user before
// any with one. The Explorer stores only signed-in sessions (a sign-in in
// progress is a cookie, anonymous visits store nothing), so only users
// who signed in can fill it; the order is a second guard.
type Memory struct {
	mu   sync.Mutex
	cap  int
	now  func() time.Time
	byID map[string]*list.Element
	// lists hold the sessions by class: [0] not signed in, [1] signed in;
	// front is most recently used.
	lists [2]*list.List
}

// NewMemory keeps at most capacity sessions (at least 1).
func NewMemory(capacity int, now func() time.Time) *Memory {
	if capacity < 1 {
		capacity = 1
	}
	if now == nil {
		now = time.Now
	}
	return &Memory{cap: capacity, now: now, byID: map[string]*list.Element{}, lists: [2]*list.List{list.New(), list.New()}}
}

func class(s *Session) int {
	if s.User != nil {
		return 1
	}
	return 0
}

func (m *Memory) Get(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byID[id]
	if !ok {
		return nil, ErrNoSession
	}
	s := e.Value.(*Session)
	if !m.now().Before(s.Expires) {
		m.remove(e)
		return nil, ErrNoSession
	}
	m.lists[class(s)].MoveToFront(e)
	return s.clone(), nil
}

func (m *Memory) Put(_ context.Context, s *Session) error {
	if s.ID == "" {
		return errors.New("session without id")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[s.ID]; ok {
		m.remove(e) // it may change class
	}
	for len(m.byID) >= m.cap {
		l := m.lists[0]
		if l.Len() == 0 {
			l = m.lists[1]
		}
		m.remove(l.Back())
	}
	m.byID[s.ID] = m.lists[class(s)].PushFront(s.clone())
	m.sweep(0, 2)
	m.sweep(1, 2)
	return nil
}

func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[id]; ok {
		m.remove(e)
	}
	return nil
}

// Len is the number of sessions held, expired ones not yet swept included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// sweep drops up to n expired sessions of a class from the least recently
// used end, so expired sessions do not wait for the cap to go.
func (m *Memory) sweep(c, n int) {
	now := m.now()
	for e := m.lists[c].Back(); e != nil && n > 0; n-- {
		prev := e.Prev()
		if !now.Before(e.Value.(*Session).Expires) {
			m.remove(e)
		}
		e = prev
	}
}

func (m *Memory) remove(e *list.Element) {
	s := e.Value.(*Session)
	delete(m.byID, s.ID)
	m.lists[class(s)].Remove(e)
}

// randomID is 32 random bytes, base64url: session ids, CSRF tokens, states.
func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// wellFormedID is an id as randomID makes them (a cookie's value is the
// client's to choose).
func wellFormedID(s string) bool {
	if len(s) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

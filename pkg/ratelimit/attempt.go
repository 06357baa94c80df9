package ratelimit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"
)

// Attempt is one guarded credential check, from Begin to Succeeded, Failed
// or Cancel. A nil Attempt (of a nil Guard) limits nothing.
type Attempt struct {
	g       *Guard
	account string
	addr    string
	taken   []key
}

// Begin reserves one attempt on account (may be "": an unnamed credential,
// only the address is limited) from the caller's address, before anything
// costly is done. It takes one event from the pair (account, address),
// from the address, and, unless known is true or the address succeeded
// for account before, from account's ceiling; when any of them, or a
// back-off lock of the pair or the address, refuses, what was taken is
// given back and the error is of rpcerr.Throttled. Each take is atomic on
// its own key, so concurrent attempts never exceed a budget.
//
// known says the caller already recognised a holder (a known-device
// cookie): the ceiling, which strangers can exhaust, does not apply.
func (g *Guard) Begin(ctx context.Context, account string, known bool) (*Attempt, error) {
	if g == nil {
		return nil, nil
	}
	a := &Attempt{g: g, account: account, addr: clientAddr(ctx)}
	var ks []key
	if account != "" && !g.account.Off() {
		ks = append(ks, key{"pair", account + "\x00" + a.addr, g.account})
	}
	if a.addr != "" && !g.addr.Off() {
		ks = append(ks, key{"addr", a.addr, g.addr})
	}
	if account != "" && !g.ceiling.Off() && !known {
		seen, err := a.knownAddr(ctx)
		if err != nil {
			return nil, err
		}
		if !seen {
			ks = append(ks, key{"ceiling", account, g.ceiling})
		}
	}
	for _, k := range ks {
		wait, err := g.reserve(ctx, k)
		if err == nil && wait > 0 {
			err = g.refuse(ctx, k, account, a.addr, wait)
		}
		if err != nil {
			a.giveBack(ctx)
			return nil, err
		}
		a.taken = append(a.taken, k)
	}
	return a, nil
}

// reserve takes one event of k unless its back-off lock holds; >0 is the
// wait when it does not fit (nothing is taken then).
func (g *Guard) reserve(ctx context.Context, k key) (time.Duration, error) {
	if k.p.Backoff > 0 {
		// The lock's own limit does not matter to a peek: it holds until
		// the time it was set for.
		d, err := g.l.b.peek(ctx, g.name(k, "b"), lock(k.p.Backoff))
		if err != nil || d > 0 {
			return d, err
		}
	}
	return g.l.b.take(ctx, g.name(k, "f"), k.p.Limit)
}

// knownAddr reports whether the attempt's address succeeded for its
// account within KnownFor.
func (a *Attempt) knownAddr(ctx context.Context) (bool, error) {
	if a.addr == "" {
		return false, nil
	}
	return a.g.l.b.marked(ctx, a.g.name(key{kind: "known", id: a.account + "\x00" + a.addr}, "k"))
}

// giveBack returns every reservation. It runs after the request's own
// context may have ended (a caller that gave up): the budget's state must
// still be put right.
func (a *Attempt) giveBack(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for _, k := range a.taken {
		if err := a.g.l.b.refund(ctx, a.g.name(k, "f"), k.p.Limit); err != nil {
			a.g.l.warn(ctx, "returning a reserved attempt", "flow", a.g.flow, "err", err)
		}
	}
	a.taken = nil
}

// Succeeded gives every reservation back (only failures stay counted, and
// a busy address, many users behind one proxy, is not refused for signing
// in correctly) and remembers the address as known for the account, so
// its holder skips the ceiling for KnownFor.
func (a *Attempt) Succeeded(ctx context.Context) {
	if a == nil {
		return
	}
	a.giveBack(ctx)
	if a.account != "" && a.addr != "" && !a.g.ceiling.Off() {
		ctx = context.WithoutCancel(ctx)
		if err := a.g.l.b.mark(ctx, a.g.name(key{kind: "known", id: a.account + "\x00" + a.addr}, "k"), KnownFor); err != nil {
			a.g.l.warn(ctx, "remembering a known address", "flow", a.g.flow, "err", err)
		}
	}
}

// Failed keeps the reservations spent and counts the failure towards the
// pair's and the address's back-off. It never fails the request: an error
// is logged (the attempt failed anyway).
func (a *Attempt) Failed(ctx context.Context) {
	if a == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, k := range a.taken {
		if err := a.g.failure(ctx, k, a.account, a.addr); err != nil {
			a.g.l.warn(ctx, "recording a failed attempt", "flow", a.g.flow, "err", err)
		}
	}
	a.taken = nil
}

// Cancel gives the reservations back without a verdict: the check never
// ran (the caller gave up waiting for a hashing slot).
func (a *Attempt) Cancel(ctx context.Context) {
	if a != nil {
		a.giveBack(ctx)
	}
}

// Done ends the attempt by the check's outcome: nil Succeeded, a context's
// end Cancel, anything else Failed.
func (a *Attempt) Done(ctx context.Context, err error) {
	switch {
	case err == nil:
		a.Succeeded(ctx)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		a.Cancel(ctx)
	default:
		a.Failed(ctx)
	}
}

// failure counts a failure on k (within the policy's window, or the time
// its budget takes to refill), sets the back-off lock the count calls for,
// and records k as throttled when it now refuses.
func (g *Guard) failure(ctx context.Context, k key, account, addr string) error {
	window := k.p.Window
	if window <= 0 {
		window = time.Duration(k.p.Limit.Burst) * k.p.Limit.interval()
	}
	n, err := g.l.b.count(ctx, g.name(k, "n"), window)
	if err != nil {
		return err
	}
	if d := k.p.backoff(n); d > 0 {
		if _, err := g.l.b.take(ctx, g.name(k, "b"), lock(d)); err != nil {
			return err
		}
	}
	return g.afterFailure(ctx, k, n, account, addr)
}

// Gate is Begin for a check that pkg/password runs (password.Gate): it
// reserves the attempt and returns what ends it by the check's outcome.
func (g *Guard) Gate(account string, known bool) func(context.Context) (func(error), error) {
	return func(ctx context.Context) (func(error), error) {
		a, err := g.Begin(ctx, account, known)
		if err != nil {
			return nil, err
		}
		return func(err error) { a.Done(ctx, err) }, nil
	}
}

// A known-device token is what a browser that signed in keeps (a cookie)
// and shows on its next sign-in, so it skips the account ceiling. Only the
// token's hash is stored, bound to the account, for KnownFor.

// RememberDevice returns a device token for account: token again when it
// is known for account already (its time is renewed), else a new one of
// 256 random bits.
func (g *Guard) RememberDevice(ctx context.Context, account, token string) (string, error) {
	if g == nil {
		return "", nil
	}
	if ok, err := g.KnownDevice(ctx, account, token); err != nil || !ok {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		token = base64.RawURLEncoding.EncodeToString(b)
	}
	if err := g.l.b.mark(context.WithoutCancel(ctx), g.deviceKey(account, token), KnownFor); err != nil {
		return "", err
	}
	return token, nil
}

// KnownDevice reports whether token is a device token RememberDevice gave
// for account within KnownFor.
func (g *Guard) KnownDevice(ctx context.Context, account, token string) (bool, error) {
	if g == nil || token == "" || len(token) > 64 {
		return false, nil
	}
	return g.l.b.marked(ctx, g.deviceKey(account, token))
}

// deviceKey names the whole SHA-256 of the pair: it stands for a secret.
func (g *Guard) deviceKey(account, token string) string {
	sum := sha256.Sum256([]byte(account + "\x00" + token))
	return g.flow + ":dv:" + hex.EncodeToString(sum[:]) + ":k"
}

// Package pwpolicy is what a new password must meet, wherever one is set:
// a reset, a change on the account page, an operator's create-user and
// set-password. Passwords set before stay valid; the policy is checked
// only when a password is set.
//
// The rules, in the order they are checked (the first one broken is the
// answer): at least MinLength characters (Unicode code points, not bytes:
// "Schlüssel" is 9); not one of the 100,000 most common passwords, compared
// without case (NOTICE.md names the list); not the account's email address
// nor its local part (before the last @), compared without case: both are
// the first guesses of anyone who knows the address.
package pwpolicy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultMinLength is the least length of a new password unless the
// operator says otherwise (auth's -password-min-length).
const DefaultMinLength = 12

// MaxMinLength bounds -password-min-length: a password is at most 1024
// bytes (pkg/inputlimit), and a rule nobody can meet locks every reset.
const MaxMinLength = 256

// commonGz is SecLists' 10-million-password-list-top-100000.txt, one
// password a line, most common first (NOTICE.md).
//
//go:embed common-passwords.txt.gz
var commonGz []byte

// Rule names the rule a refused password broke.
type Rule string

const (
	// TooShort: fewer characters than the policy's least length.
	TooShort Rule = "too_short"
	// Common: among the most common passwords.
	Common Rule = "common"
	// IsEmail: the account's email address or its local part.
	IsEmail Rule = "email"
)

// Refusal is a password the policy refuses: which rule it broke, and the
// least length for TooShort. Its message is the service's answer in
// English; the gateway shows its own words, in the page's language, by the
// rule (pkg/errinfo's password reasons).
type Refusal struct {
	Rule      Rule
	MinLength int
}

func (r *Refusal) Error() string {
	switch r.Rule {
	case TooShort:
		return fmt.Sprintf("a password needs at least %d characters", r.MinLength)
	case Common:
		return "this password is one of the most common ones, which are guessed first; choose another"
	default:
		return "a password must not be the account's email address or its part before the @"
	}
}

// Policy is the policy in force: built once at start (New), read by every
// check, never changed.
type Policy struct {
	minLength int
	// common holds a 64-bit FNV-1a hash of each common password, lower
	// case, sorted: 8 bytes an entry, about 0.8 MB for the list, where a
	// map of strings would take several times that. A false match (two
	// different passwords with one hash) is a chance of about 1 in 10^14
	// per check and costs only a refusal.
	common []uint64
}

// New is the policy of least length minLength (in characters) which also
// refuses the common passwords when refuseCommon. The list is read here,
// once: a few milliseconds.
func New(minLength int, refuseCommon bool) (*Policy, error) {
	if minLength < 1 || minLength > MaxMinLength {
		return nil, fmt.Errorf("password policy: the least length must be 1 to %d, not %d", MaxMinLength, minLength)
	}
	p := &Policy{minLength: minLength}
	if refuseCommon {
		list, err := readList(commonGz)
		if err != nil {
			return nil, fmt.Errorf("password policy: the common password list: %w", err)
		}
		p.common = list
	}
	return p, nil
}

// readList reads a gzip'd list of passwords, one a line, into the sorted
// hashes of their lower case forms.
func readList(gz []byte) ([]uint64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := make([]uint64, 0, 100_000)
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			out = append(out, hash(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Clip(slices.Compact(out)), nil
}

func hash(pw string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.ToLower(pw)))
	return h.Sum64()
}

// MinLength is the least length of a new password, in characters.
func (p *Policy) MinLength() int { return p.minLength }

// RefusesCommon tells whether the common passwords are refused.
func (p *Policy) RefusesCommon() bool { return p.common != nil }

// CommonCount is how many distinct (lower case) common passwords are
// refused; 0 when the list is off.
func (p *Policy) CommonCount() int { return len(p.common) }

// Check returns nil when pw may be the new password of the account with
// the given email address, else a *Refusal. email may be empty (not known
// yet): then only the other rules apply.
func (p *Policy) Check(pw, email string) error {
	if utf8.RuneCountInString(pw) < p.minLength {
		return &Refusal{Rule: TooShort, MinLength: p.minLength}
	}
	if p.isCommon(pw) {
		return &Refusal{Rule: Common}
	}
	if isEmail(pw, email) {
		return &Refusal{Rule: IsEmail}
	}
	return nil
}

func (p *Policy) isCommon(pw string) bool {
	if p.common == nil {
		return false
	}
	_, found := slices.BinarySearch(p.common, hash(pw))
	return found
}

// isEmail: pw is the address or its local part, without case and the
// spaces around the address.
func isEmail(pw, email string) bool {
	email = strings.TrimSpace(email)
	if email == "" {
		return false
	}
	if strings.EqualFold(pw, email) {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	return at > 0 && strings.EqualFold(pw, email[:at])
}

package registry

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Kinds of registry items, as they appear in URNs and member types.
const (
	KindDataElement = "dataelement"
	KindGroup       = "dataelementgroup"
	KindRecord      = "record"
)

// MemberType is the spec's `type` of a member of the given kind.
func MemberType(kind string) string {
	switch kind {
	case KindDataElement:
		return "DATAELEMENT"
	case KindGroup:
		return "DATAELEMENTGROUP"
	case KindRecord:
		return "RECORD"
	}
	return strings.ToUpper(kind)
}

// URN is `urn:<namespace>:<kind>:<identifier>:<version>`; Version 0 means
// "latest".
type URN struct {
	Namespace  string
	Kind       string
	Identifier int
	Version    int
}

// ErrBadURN marks a URN that is not of the documented shape.
var ErrBadURN = errors.New("malformed URN")

// ParseURN parses a URN, percent-decoding it first when needed, and accepts
// `latest` as the version.
func ParseURN(s string) (URN, error) {
	if strings.Contains(s, "%") {
		d, err := url.PathUnescape(s)
		if err != nil {
			return URN{}, fmt.Errorf("%w: bad percent-encoding", ErrBadURN)
		}
		s = d
	}
	parts := strings.Split(s, ":")
	if len(parts) != 5 || parts[0] != "urn" {
		return URN{}, fmt.Errorf("%w: want urn:<namespace>:<kind>:<number>:<number>", ErrBadURN)
	}
	u := URN{Namespace: parts[1], Kind: parts[2]}
	if !validNamespace(u.Namespace) {
		return URN{}, fmt.Errorf("%w: bad namespace %q", ErrBadURN, u.Namespace)
	}
	switch u.Kind {
	case KindDataElement, KindGroup, KindRecord:
	default:
		return URN{}, fmt.Errorf("%w: unknown kind %q", ErrBadURN, u.Kind)
	}
	id, err := positive(parts[3])
	if err != nil {
		return URN{}, fmt.Errorf("%w: identifier %q is not a positive number", ErrBadURN, parts[3])
	}
	u.Identifier = id
	if parts[4] != "latest" {
		v, err := positive(parts[4])
		if err != nil {
			return URN{}, fmt.Errorf("%w: version %q is not a positive number or latest", ErrBadURN, parts[4])
		}
		u.Version = v
	}
	return u, nil
}

func positive(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not a number")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, errors.New("not positive")
	}
	return n, nil
}

// validNamespace keeps namespace names to what fits in a URN and a path.
func validNamespace(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// ValidNamespace reports whether s can name a namespace.
func ValidNamespace(s string) bool { return validNamespace(s) }

// String renders the URN; a latest URN renders with `latest`.
func (u URN) String() string {
	v := "latest"
	if u.Version > 0 {
		v = strconv.Itoa(u.Version)
	}
	return fmt.Sprintf("urn:%s:%s:%d:%s", u.Namespace, u.Kind, u.Identifier, v)
}

// family is the URN without its version: all versions of one item share it.
func (u URN) family() string {
	return fmt.Sprintf("%s:%s:%d", u.Namespace, u.Kind, u.Identifier)
}

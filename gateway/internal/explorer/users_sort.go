package explorer

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"

	authv1 "fris.dev/proto/auth/v1"
)

// The users table's order and links: sorting by column, paging.

// sortCol is a column header of the users table.
type sortCol struct {
	Key, Label, Href string
	// Sort is the header's aria-sort: "ascending" or "descending" on the
	// column sorted by, empty elsewhere.
	Sort string
}

// userSorts are the columns the table sorts by (the sort parameter's
// whitelist), each a comparison of two records; ties go by email, A to Z
// either way.
var userSorts = map[string]func(a, b *authv1.UserRecord) int{
	"email": func(a, b *authv1.UserRecord) int { return strings.Compare(a.GetEmail(), b.GetEmail()) },
	"name": func(a, b *authv1.UserRecord) int {
		return strings.Compare(strings.ToLower(a.GetRealName()), strings.ToLower(b.GetRealName()))
	},
	"roles": func(a, b *authv1.UserRecord) int {
		return strings.Compare(strings.Join(a.GetScopes(), " "), strings.Join(b.GetScopes(), " "))
	},
	"verified":   func(a, b *authv1.UserRecord) int { return cmpBool(a.GetEmailVerified(), b.GetEmailVerified()) },
	"factor":     func(a, b *authv1.UserRecord) int { return cmpBool(a.GetHasPasskey(), b.GetHasPasskey()) },
	"lastsignin": func(a, b *authv1.UserRecord) int { return cmp.Compare(a.GetLastSignIn(), b.GetLastSignIn()) },
	// Active first, then the disabled.
	"state": func(a, b *authv1.UserRecord) int { return cmpBool(a.GetDisabled(), b.GetDisabled()) },
}

// userCols are the table's columns in order.
var userCols = []string{"email", "name", "roles", "verified", "factor", "lastsignin", "state"}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// usersLink is the list's address with q, sort, dir and page (page 1 and
// the default order left out).
func usersLink(query, sortBy, dir string, page int) string {
	p := url.Values{}
	if query != "" {
		p.Set("q", query)
	}
	if sortBy != "email" || dir != "asc" {
		p.Set("sort", sortBy)
		p.Set("dir", dir)
	}
	if page > 1 {
		p.Set("page", strconv.Itoa(page))
	}
	if len(p) == 0 {
		return UsersPath
	}
	return UsersPath + "?" + p.Encode()
}

package tokens

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Refresh tokens issued close together must give store keys that sort
// together and in issue order (TimeOrderedID), and no two may share a jti.
func TestTimeOrderedIDSortsByIssueTime(t *testing.T) {
	start := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	var ids []string
	seen := map[string]bool{}
	for n := range 300 {
		// Three ids per millisecond, in three orders of magnitude of gaps.
		at := start.Add(time.Duration(n/3) * time.Millisecond * time.Duration(1+n%7*1000))
		id := TimeOrderedID(at)
		if seen[id] {
			t.Fatalf("jti %q issued twice", id)
		}
		seen[id] = true
		if want := fmt.Sprintf("%012x", at.UnixMilli()); !strings.HasPrefix(id, want) {
			t.Fatalf("jti %q does not start with its time %s", id, want)
		}
		if len(id) != 12+22 || strings.ContainsAny(id, "+/=") {
			t.Fatalf("jti %q: want 12 hex digits and 22 base64url characters", id)
		}
		ids = append(ids, id)
	}
	byTime := slices.Clone(ids)
	slices.SortStableFunc(byTime, func(a, b string) int { return strings.Compare(a[:12], b[:12]) })
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for k := range sorted {
		if sorted[k][:12] != byTime[k][:12] {
			t.Fatalf("sorted keys are not in issue-time order at %d: %q after %q", k, sorted[k], sorted[max(k-1, 0)])
		}
	}
}

// The refresh token a plan signs carries a time-ordered jti of the plan's
// time; the access and id tokens keep plain random ones.
func TestPlanRefreshJTIIsTimeOrdered(t *testing.T) {
	i, _ := newIssuer(t)
	at := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	i.now = func() time.Time { return at }
	p := i.Plan(Subject{UserID: 7, ClientID: "c", Scopes: []string{"openid"}})
	if want := fmt.Sprintf("%012x", at.UnixMilli()); !strings.HasPrefix(p.RefreshJTI, want) {
		t.Fatalf("refresh jti %q does not start with the issue time %s", p.RefreshJTI, want)
	}
	if strings.HasPrefix(p.access.ID, p.RefreshJTI[:12]) || p.access.ID == p.id.ID {
		t.Fatalf("access jti %q, id jti %q: want random ones of their own", p.access.ID, p.id.ID)
	}
}

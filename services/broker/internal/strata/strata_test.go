package strata

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	brokerv1 "fris.dev/proto/broker/v1"
	"fris.dev/services/broker/internal/suppress"
)

func doc(site string, donor int32, strata map[string]int32, order ...string) *brokerv1.Reply {
	st := &brokerv1.Stratification{Title: "Geschlecht"}
	for _, l := range order {
		st.Strata = append(st.Strata, &brokerv1.Stratum{Label: l, Count: strata[l]})
	}
	return &brokerv1.Reply{SiteId: site, Count: proto.Int32(donor),
		Donor:  &brokerv1.ReplyEntity{Count: donor, Stratifications: []*brokerv1.Stratification{st}},
		Sample: &brokerv1.ReplyEntity{Count: 40, Stratifications: []*brokerv1.Stratification{{Title: "Probentyp", Strata: []*brokerv1.Stratum{{Label: "Blut", Count: 40}}}}}}
}

func rows(sc []*brokerv1.StratumCount) string {
	var out []string
	for _, r := range sc {
		out = append(out, fmt.Sprintf("%s/%s/%s=%d-%d", r.GetEntity(), r.GetStratification(), r.GetStratum(), r.GetCount(), r.GetSuppressed()))
	}
	return strings.Join(out, " ")
}

// TestSum: strata are summed per site (over its banks' replies) and over
// the sites, donors before samples; after the small-count rule a hidden
// stratum adds 0 and is counted in suppressed (replies per site, sites in
// the total), so the sums never give it away; a stratification with a
// hidden stratum is hidden whole (berlin's m 9 beside w 3, dresden's m 6); operators' sums are exact;
// plain counts, unreadable and suppressed replies add no strata.
func TestSum(t *testing.T) {
	res := func() *brokerv1.ListRepliesResponse {
		return &brokerv1.ListRepliesResponse{
			Replies: []*brokerv1.Reply{
				doc("berlin", 12, map[string]int32{"m": 9, "w": 3}, "m", "w"),
				doc("berlin", 7, map[string]int32{"w": 7}, "w"),
				doc("dresden", 8, map[string]int32{"m": 6, "w": 2, "d": 0}, "m", "w", "d"),
				{SiteId: "köln", Count: proto.Int32(4), Body: "4"},
				{SiteId: "hamburg", Unreadable: true},
			},
			Sites: []*brokerv1.SiteCount{{SiteId: "berlin"}, {SiteId: "dresden"}, {SiteId: "hamburg"}, {SiteId: "köln"}},
		}
	}
	exact := Sum(res())
	if got, want := rows(exact.GetStrata()), "donor/Geschlecht/m=15-0 donor/Geschlecht/w=12-0 donor/Geschlecht/d=0-0 sample/Probentyp/Blut=120-0"; got != want {
		t.Errorf("total:\n%s\nwant:\n%s", got, want)
	}
	if got, want := rows(exact.GetSites()[0].GetStrata()), "donor/Geschlecht/m=9-0 donor/Geschlecht/w=10-0 sample/Probentyp/Blut=80-0"; got != want {
		t.Errorf("berlin:\n%s\nwant:\n%s", got, want)
	}
	if s := exact.GetSites()[2].GetStrata(); len(s) != 0 {
		t.Errorf("hamburg (unreadable): %v", s)
	}
	if s := exact.GetSites()[3].GetStrata(); len(s) != 0 {
		t.Errorf("köln (a plain count): %v", s)
	}

	hid := Sum(suppress.Hide(res(), 5))
	if got, want := rows(hid.GetStrata()), "donor/Geschlecht/m=0-2 donor/Geschlecht/w=7-2 donor/Geschlecht/d=0-1 sample/Probentyp/Blut=120-0"; got != want {
		t.Errorf("researchers' total:\n%s\nwant:\n%s", got, want)
	}
	if got, want := rows(hid.GetSites()[0].GetStrata()), "donor/Geschlecht/m=0-1 donor/Geschlecht/w=7-1 sample/Probentyp/Blut=80-0"; got != want {
		t.Errorf("researchers' berlin:\n%s\nwant:\n%s", got, want)
	}
	marked := Sum(suppress.Mark(res(), 5))
	if got, want := rows(marked.GetStrata()), "donor/Geschlecht/m=15-2 donor/Geschlecht/w=12-2 donor/Geschlecht/d=0-1 sample/Probentyp/Blut=120-0"; got != want {
		t.Errorf("operators' total:\n%s\nwant:\n%s", got, want)
	}
}

// TestSumHidesWhatHideHid: whatever the hidden strata's counts below k,
// the researcher's strata sums stay byte for byte the same.
func TestSumHidesWhatHideHid(t *testing.T) {
	var first []byte
	for _, w := range []int32{0, 1, 2, 3, 4} {
		res := &brokerv1.ListRepliesResponse{
			Replies: []*brokerv1.Reply{doc("berlin", 12, map[string]int32{"m": 9, "w": w}, "m", "w"), doc("dresden", 7, map[string]int32{"m": 7, "w": 4 - w}, "m", "w")},
			Sites:   []*brokerv1.SiteCount{{SiteId: "berlin"}, {SiteId: "dresden"}},
		}
		out := Sum(suppress.Hide(res, 5))
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&brokerv1.ListRepliesResponse{Strata: out.GetStrata(), Sites: out.GetSites()})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("with w = %d the strata differ: %v", w, out.GetStrata())
		}
	}
}

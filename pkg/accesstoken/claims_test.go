package accesstoken

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestClientID(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Claims
		want string
	}{
		{"aud", Claims{Issuer: testIssuer, Audience: Audience{"mdr-ui"}}, "mdr-ui"},
		{"first aud", Claims{Issuer: testIssuer, Audience: Audience{"mdr-ui", "x"}}, "mdr-ui"},
		// A token issued to no client (a signed code without client_id)
		// names the issuer as its audience.
		{"aud is the issuer", Claims{Issuer: testIssuer, Audience: Audience{testIssuer}}, ""},
		{"no aud", Claims{Issuer: testIssuer}, ""},
		{"azp wins over aud", Claims{Issuer: testIssuer, Audience: Audience{"mdr-ui"}, AuthorizedParty: "other"}, "other"},
		{"azp with aud the issuer", Claims{Issuer: testIssuer, Audience: Audience{testIssuer}, AuthorizedParty: "other"}, "other"},
		// client_id is the client's own record of itself, not the rule.
		{"client_id alone", Claims{Issuer: testIssuer, Client: "c"}, ""},
	} {
		if got := tc.c.ClientID(); got != tc.want {
			t.Errorf("%s: ClientID = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	got, err := Parse([]byte(`{"iss":"i","sub":"7","aud":"c","exp":1.9e9,"nbf":1800000000,"iat":1800000000.5,
		"jti":"j","type":"ACCESS_TOKEN","nonce":"n","scope":"openid  mdr:a","client_id":"c","azp":"p","sid":"s","email":"ignored"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Claims{Issuer: "i", Subject: "7", Audience: Audience{"c"}, ExpiresAt: 1.9e9, NotBefore: 1.8e9, IssuedAt: 1.8e9,
		ID: "j", Type: Type, Nonce: "n", Scope: Scope{"openid", "mdr:a"}, Client: "c", AuthorizedParty: "p", Session: "s"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{
		``, `[]`, `"x"`, `{`, `{"sub":7}`, `{"aud":7}`, `{"aud":[7]}`, `{"exp":"1"}`, `{"exp":-1}`, `{"iat":1e300}`,
		`{"scope":7}`, `{"scope":[7]}`, `{"azp":[]}`, `{"sid":1}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}

// A type that is not a string is no type, refused by Check as the wrong
// type rather than by Parse: what the gateway always answered for it.
func TestTypeNotAString(t *testing.T) {
	for _, raw := range []string{`["ACCESS_TOKEN"]`, `1`, `{"a":"ACCESS_TOKEN"}`, `null`, `true`} {
		c, err := Parse([]byte(`{"type":` + raw + `}`))
		if err != nil || c.Type != "" {
			t.Errorf("type %s: %q, %v", raw, c.Type, err)
		}
	}
}

func TestScope(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       Scope
	}{
		{"string", `"openid mdr:a"`, Scope{"openid", "mdr:a"}},
		{"extra spaces", `"  openid   mdr:a "`, Scope{"openid", "mdr:a"}},
		{"empty string", `""`, Scope{}},
		// What earlier tokens, and some other issuers, carry.
		{"array", `["openid","mdr:a"]`, Scope{"openid", "mdr:a"}},
		{"array of space-separated strings", `["openid mdr:a", "mdr:b"]`, Scope{"openid", "mdr:a", "mdr:b"}},
		{"empty array", `[]`, nil},
	} {
		var got Scope
		if err := json.Unmarshal([]byte(tc.json), &got); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, %v; want %#v", tc.name, got, err, tc.want)
		}
	}
	// Written as one string: the Samply auth client fails on an array.
	b, err := json.Marshal(Claims{Scope: Scope{"openid", "mdr:a"}})
	if err != nil || !strings.Contains(string(b), `"scope":"openid mdr:a"`) {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	if b, _ := json.Marshal(Claims{}); strings.Contains(string(b), "scope") {
		t.Fatalf("no scope written as %s", b)
	}
}

// The numeric dates are written as integers, and the claims the auth
// service leaves out are absent, not empty.
func TestMarshal(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b, err := json.Marshal(valid(now))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"iss":"http://fris.test","sub":"7","aud":["c"],"exp":1800003600,"nbf":1799999970,"iat":1800000000,"jti":"j","type":"ACCESS_TOKEN"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	back, err := Parse(b)
	if err != nil || !reflect.DeepEqual(*back, valid(now)) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if !back.Expiration().Equal(now.Add(time.Hour)) || !back.NotBeforeTime().Equal(now.Add(-30*time.Second)) || !back.IssuedAtTime().Equal(now) {
		t.Fatalf("times: %v %v %v", back.Expiration(), back.NotBeforeTime(), back.IssuedAtTime())
	}
}

// FuzzParse: claims come from the payload of whatever token verified, and
// the auth service reads its own tokens back from clients. Parse must never
// panic, and what it accepts must survive a round trip unchanged.
func FuzzParse(f *testing.F) {
	b, _ := json.Marshal(valid(time.Unix(1_800_000_000, 0)))
	for _, s := range []string{
		string(b), `{}`, `null`, `{"scope":["a b","c"],"aud":"x","type":[1]}`, `{"exp":1e18}`, `{"exp":NaN}`,
		`{"ISS":"a","iss":"b"}`, `{"scope":"\u00ff\ud800"}`, `{"nbf":-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := Parse(payload)
		if err != nil {
			return
		}
		_ = c.Check(time.Now(), Rules{Issuer: testIssuer})
		_ = c.ClientID()
		once, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("accepted %q but cannot write it back: %v", payload, err)
		}
		again, err := Parse(once)
		if err != nil {
			t.Fatalf("cannot read back %s: %v", once, err)
		}
		twice, _ := json.Marshal(again)
		if string(once) != string(twice) {
			t.Fatalf("round trip changed the claims:\n%s\n%s", once, twice)
		}
	})
}

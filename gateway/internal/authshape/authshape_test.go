package authshape

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	authv1 "fris.dev/proto/auth/v1"
)

// The readers below are the answers' field lists, written out from their
// sources and decoded strictly (unknown names are errors, as Jackson with
// its defaults treats them).

// auth-dto 5.x, by the names Jersey's Jackson provider reads (the
// @XmlElement names where a getter has one, else the bean name).
type (
	samplySignRequestDto struct {
		Code      string `json:"code"`
		Exp       int64  `json:"exp"`
		Algorithm string `json:"algorithm"`
	}
	samplyRegistrationDto struct {
		UserID int `json:"user_id"`
		KeyID  int `json:"key_id"`
	}
	samplyAccessTokenDto struct {
		AccessToken      string `json:"access_token"`
		IDToken          string `json:"id_token"`
		RefreshToken     string `json:"refresh_token"`
		TokenType        string `json:"token_type"`
		ExpiresIn        int    `json:"expires_in"`
		RefreshExpiresIn int    `json:"refresh_expires_in"`
	}
	samplyTokenInfoDto struct {
		ExpirationDate int64    `json:"expirationDate"`
		Subject        string   `json:"subject"`
		Scope          []string `json:"scope"`
		Jti            string   `json:"jti"`
		NotBefore      int64    `json:"notBefore"`
		IssuedAt       int64    `json:"issuedAt"`
		Issuer         string   `json:"issuer"`
	}
	samplyLocationDto struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Contact     string `json:"contact"`
	}
	samplyUserDto struct {
		Name               string              `json:"name"`
		FirstName          string              `json:"firstName"`
		LastName           string              `json:"lastName"`
		Email              string              `json:"email"`
		ID                 string              `json:"id"`
		EmailVerified      *bool               `json:"email_verified"`
		ExternalLabel      string              `json:"external_label"`
		ContactInformation string              `json:"contact_information"`
		Locations          []samplyLocationDto `json:"locations"`
		Roles              []json.RawMessage   `json:"roles"`
	}
	samplyUserListDto struct {
		Users []samplyUserDto `json:"users"`
	}
	samplyClientDescriptionDto struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		ClientID    string `json:"clientId"`
		RedirectURL string `json:"redirectUrl"`
		Type        string `json:"type"`
	}
	samplyClientListDto struct {
		Clients []samplyClientDescriptionDto `json:"clients"`
	}
)

// The spec's tables (group A).
type (
	specSignRequest struct {
		Code           string `json:"code"`
		ExpirationDate int64  `json:"expirationDate"`
		Algoritm       string `json:"algoritm"`
	}
	specRegistration struct {
		UserID int `json:"userId"`
		KeyID  int `json:"keyId"`
	}
	specToken struct {
		AccessToken  string `json:"access_token"`
		IDToken      string `json:"id_token"`
		RefreshToken string `json:"refresh_token"`
	}
	specTokenInfo struct {
		ExpirationDate int64    `json:"expirationDate"`
		Subject        string   `json:"subject"`
		Scope          []string `json:"scope"`
		Nonce          string   `json:"nonce"`
		NotBeofre      int64    `json:"notBeofre"`
		Issuer         string   `json:"issuer"`
	}
	specLocality struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	specUserInfo struct {
		RealName           string        `json:"real_name"`
		ContactInformation string        `json:"contact_information"`
		Locality           *specLocality `json:"locality"`
		Email              string        `json:"email"`
		EmailVerified      bool          `json:"email_verified"`
	}
	specClient struct {
		ClientID    string `json:"clientId"`
		Name        string `json:"name"`
		Description string `json:"description"`
		RedirectURL string `json:"redirectUrl"`
		Type        string `json:"type"`
	}
)

// The service's answers, with every name set.
var (
	signRequest = &authv1.SignRequestResponse{Code: "c0de", ExpirationDate: 1700000300, Algoritm: "SHA512withRSA", Algorithm: "SHA512withRSA", Exp: 1700000300}
	register    = &authv1.RegisterResponse{UserId: 7, KeyId: 9, UserId_: 7, KeyId_: 9}
	tokenAnswer = &authv1.TokenResponse{AccessToken: "at", IdToken: proto.String("it"), RefreshToken: proto.String("rt"), TokenType: "Bearer", ExpiresIn: 3600}
	tokenInfo   = &authv1.TokenInfo{ExpirationDate: 1700003600, Subject: "7", Scope: []string{"openid", "mdr:x"}, Nonce: "n0", NotBeofre: 1699999970,
		Issuer: "https://fris.example", Jti: "j1", NotBefore: 1699999970, IssuedAt: 1700000000}
	ada = &authv1.UserInfo{RealName: "Ada Lovelace", ContactInformation: "room 1", Email: "ada@example.org", EmailVerified: true, Sub: "7", Id: "7", Name: "Ada Lovelace",
		Locality: &authv1.Locality{Id: "MAINZ", Name: "Mainz", Description: "site"}}
	client = &authv1.Client{ClientId: "c1", Name: "Client", Description: "d", RedirectUrl: "https://c.example/cb", Type: "MDR"}
)

// gatewayJSON is the gateway's JSON marshaler (app.newGatewayMux): proto
// names, unset fields written.
func gatewayJSON() runtime.Marshaler {
	return &runtime.JSONPb{MarshalOptions: protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}}
}

func strict(t *testing.T, b []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s does not decode strictly into %T: %v", b, into, err)
	}
}

func TestStrictReaders(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		shape  Shape
		answer any
		into   any // a pointer to a zero reader
		want   any
	}{
		{Samply, signRequest, &samplySignRequestDto{}, &samplySignRequestDto{Code: "c0de", Exp: 1700000300, Algorithm: "SHA512withRSA"}},
		{Samply, register, &samplyRegistrationDto{}, &samplyRegistrationDto{UserID: 7, KeyID: 9}},
		{Samply, tokenAnswer, &samplyAccessTokenDto{}, &samplyAccessTokenDto{AccessToken: "at", IDToken: "it", RefreshToken: "rt", TokenType: "Bearer", ExpiresIn: 3600}},
		{Samply, tokenInfo, &samplyTokenInfoDto{}, &samplyTokenInfoDto{ExpirationDate: 1700003600, Subject: "7", Scope: []string{"openid", "mdr:x"},
			Jti: "j1", NotBefore: 1699999970, IssuedAt: 1700000000, Issuer: "https://fris.example"}},
		{Samply, ada, &samplyUserDto{}, &samplyUserDto{Name: "Ada Lovelace", Email: "ada@example.org", ID: "7", EmailVerified: &yes, ContactInformation: "room 1",
			Locations: []samplyLocationDto{{ID: "MAINZ", Name: "Mainz", Description: "site"}}}},
		{Samply, []*authv1.UserInfo{ada}, &samplyUserListDto{}, &samplyUserListDto{Users: []samplyUserDto{{Name: "Ada Lovelace", Email: "ada@example.org", ID: "7",
			EmailVerified: &yes, ContactInformation: "room 1", Locations: []samplyLocationDto{{ID: "MAINZ", Name: "Mainz", Description: "site"}}}}}},
		{Samply, []*authv1.Client{client}, &samplyClientListDto{}, &samplyClientListDto{Clients: []samplyClientDescriptionDto{{Name: "Client", Description: "d",
			ClientID: "c1", RedirectURL: "https://c.example/cb", Type: "MDR"}}}},

		{Spec, signRequest, &specSignRequest{}, &specSignRequest{Code: "c0de", ExpirationDate: 1700000300, Algoritm: "SHA512withRSA"}},
		{Spec, register, &specRegistration{}, &specRegistration{UserID: 7, KeyID: 9}},
		{Spec, tokenAnswer, &specToken{}, &specToken{AccessToken: "at", IDToken: "it", RefreshToken: "rt"}},
		{Spec, tokenInfo, &specTokenInfo{}, &specTokenInfo{ExpirationDate: 1700003600, Subject: "7", Scope: []string{"openid", "mdr:x"}, Nonce: "n0",
			NotBeofre: 1699999970, Issuer: "https://fris.example"}},
		{Spec, ada, &specUserInfo{}, &specUserInfo{RealName: "Ada Lovelace", ContactInformation: "room 1", Email: "ada@example.org", EmailVerified: true,
			Locality: &specLocality{ID: "MAINZ", Name: "Mainz", Description: "site"}}},
		{Spec, []*authv1.UserInfo{ada}, &[]specUserInfo{}, &[]specUserInfo{{RealName: "Ada Lovelace", ContactInformation: "room 1", Email: "ada@example.org",
			EmailVerified: true, Locality: &specLocality{ID: "MAINZ", Name: "Mainz", Description: "site"}}}},
		{Spec, []*authv1.Client{client}, &[]specClient{}, &[]specClient{{ClientID: "c1", Name: "Client", Description: "d", RedirectURL: "https://c.example/cb", Type: "MDR"}}},
	} {
		b, err := Marshaler{Marshaler: gatewayJSON(), Shape: tc.shape}.Marshal(tc.answer)
		if err != nil {
			t.Fatal(err)
		}
		strict(t, b, tc.into)
		if !reflect.DeepEqual(tc.into, tc.want) {
			t.Errorf("%s %T: %s reads as %+v, want %+v", tc.shape, tc.answer, b, tc.into, tc.want)
		}
	}
}

// both, the default, sends every name: the spec's, auth-dto's and
// OpenID's together, as the service wrote them.
func TestBothKeepsEveryName(t *testing.T) {
	for _, tc := range []struct {
		answer any
		names  string
	}{
		{signRequest, "code expirationDate algoritm algorithm exp"},
		{register, "userId keyId user_id key_id"},
		{tokenAnswer, "access_token id_token refresh_token token_type expires_in"},
		{tokenInfo, "expirationDate subject scope nonce notBeofre issuer jti notBefore issuedAt"},
		{ada, "real_name contact_information locality email email_verified sub name id"},
	} {
		for _, sh := range []Shape{Both, ""} {
			b, err := Marshaler{Marshaler: gatewayJSON(), Shape: sh}.Marshal(tc.answer)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(strings.Fields(tc.names)) {
				t.Errorf("%T: %s, want exactly %s", tc.answer, b, tc.names)
			}
			for _, n := range strings.Fields(tc.names) {
				if _, ok := got[n]; !ok {
					t.Errorf("%T: %s lacks %s", tc.answer, b, n)
				}
			}
		}
	}
	// The lists stay bare arrays.
	b, _ := Marshaler{Marshaler: gatewayJSON(), Shape: Both}.Marshal([]*authv1.Client{client})
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		t.Fatalf("clients = %s", b)
	}
}

// A user without a locality has no locations list in the samply shape
// (UserDto's is then null), and answers outside group A pass unchanged.
func TestSamplyEdges(t *testing.T) {
	m := Marshaler{Marshaler: gatewayJSON(), Shape: Samply}
	b, err := m.Marshal(&authv1.UserInfo{Id: "8", Sub: "8", Email: "b@example.org", Locality: &authv1.Locality{}})
	if err != nil {
		t.Fatal(err)
	}
	var u samplyUserDto
	strict(t, b, &u)
	if u.Locations != nil || u.ID != "8" {
		t.Fatalf("%s", b)
	}
	jwks := &authv1.JWKS{Keys: []*authv1.JWK{{Kty: "RSA", Kid: "k"}}}
	want, _ := gatewayJSON().Marshal(jwks)
	if got, _ := m.Marshal(jwks); !bytes.Equal(got, want) {
		t.Fatalf("jwks %s, want %s", got, want)
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"spec", "samply", "both"} {
		if sh, err := Parse(s); err != nil || string(sh) != s {
			t.Fatalf("Parse(%q) = %q, %v", s, sh, err)
		}
	}
	for _, s := range []string{"", "Spec", "all", "samply "} {
		if _, err := Parse(s); err == nil {
			t.Fatalf("Parse(%q) accepted", s)
		}
	}
}

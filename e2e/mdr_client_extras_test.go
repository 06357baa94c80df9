package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwt"
)

// The calls common-mdrclient 3.1.0 makes beyond the spec's paths, sent as
// its MdrClient sends them (Jersey: `Accept: application/json`, the
// language as `Accept-Language`, `Authorization: Bearer <token>` with the
// literal `null` when there is none on the calls that always send it) and
// read into the client's classes. The client parses with Gson, which skips
// unknown fields but fails on a value of the wrong JSON type and reads an
// unknown enum name as null: the structs below keep the client's field
// types, and the tests check the fields the client reads.

// mdrcDesignation is de.samply.common.mdrclient.domain.Designation.
type mdrcDesignation struct {
	Language    string `json:"language"`
	Designation string `json:"designation"`
	Definition  string `json:"definition"`
}

// mdrcIdentification is Identification; status is EnumIdentificationStatus.
type mdrcIdentification struct {
	URN    string `json:"urn"`
	Status string `json:"status"`
}

// mdrcResult is Result: order is a Java int.
type mdrcResult struct {
	ID             string              `json:"id"`
	Type           string              `json:"type"`
	Order          int                 `json:"order"`
	Identification *mdrcIdentification `json:"identification"`
	Designations   []mdrcDesignation   `json:"designations"`
}

// mdrcResultList is ResultList: totalcount is an Integer.
type mdrcResultList struct {
	Results    []mdrcResult `json:"results"`
	Totalcount *int         `json:"totalcount"`
}

// mdrcSlot is Slot, with Gson's @SerializedName names.
type mdrcSlot struct {
	SlotName  string `json:"slot_name"`
	SlotValue string `json:"slot_value"`
}

// mdrcCode is Code: subCodes is a List<Object>, isValid a Boolean.
type mdrcCode struct {
	Identification *mdrcIdentification `json:"identification"`
	Designations   []mdrcDesignation   `json:"designations"`
	SubCodes       []any               `json:"subCodes"`
	Code           string              `json:"code"`
	IsValid        *bool               `json:"isValid"`
}

// mdrcRoot is Root: subCodes is a List<String>.
type mdrcRoot struct {
	Identification *mdrcIdentification `json:"identification"`
	Designations   []mdrcDesignation   `json:"designations"`
	SubCodes       []string            `json:"subCodes"`
}

// mdrcCatalogue is Catalogue.
type mdrcCatalogue struct {
	Codes []mdrcCode `json:"codes"`
	Root  *mdrcRoot  `json:"root"`
}

// clientGet sends a GET as MdrClient does; lang "" sends no
// Accept-Language, bearer "" no Authorization.
func clientGet(t *testing.T, s *Stack, path, lang, bearer string, wantStatus int) (*http.Response, []byte) {
	t.Helper()
	h := []string{"Accept", "application/json"}
	if lang != "" {
		h = append(h, "Accept-Language", lang)
	}
	if bearer != "" {
		h = append(h, "Authorization", "Bearer "+bearer)
	}
	return s.Get(t, path, wantStatus, h...)
}

// gsonLike decodes into the client's classes: a value of another JSON type
// than the field's fails, as it does in Gson.
func gsonLike(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		t.Fatalf("the client could not read %s: %v", b, err)
	}
}

func wantStatusEnum(t *testing.T, id *mdrcIdentification, want string) {
	t.Helper()
	if id == nil {
		t.Fatal("no identification")
	}
	if !slices.Contains([]string{"DRAFT", "RELEASED", "OUTDATED"}, id.Status) {
		t.Fatalf("status %q is none of EnumIdentificationStatus", id.Status)
	}
	if want != "" && id.Status != want {
		t.Fatalf("status = %q, want %q", id.Status, want)
	}
}

func resultIDs(rl mdrcResultList) []string {
	out := []string{}
	for _, r := range rl.Results {
		out = append(out, r.ID)
	}
	return out
}

func wantResultShape(t *testing.T, r mdrcResult) {
	t.Helper()
	if r.ID == "" || r.Type == "" || len(r.Designations) == 0 || r.Designations[0].Language == "" {
		t.Fatalf("result lacks what the client reads: %+v", r)
	}
	wantStatusEnum(t, r.Identification, "")
	if r.Identification.URN != r.ID {
		t.Fatalf("identification urn %q != id %q", r.Identification.URN, r.ID)
	}
}

const (
	diagnosisDE  = "urn:clinic:dataelement:1:1"
	diagnosisCat = "urn:clinic:catalog:1:1"
	diagDateDE   = "urn:clinic:dataelement:2:1"
	tumourGroup  = "urn:clinic:dataelementgroup:1:1"
	hiddenDE     = "urn:hidden:dataelement:1:1"
)

func TestCompatMDRClient(t *testing.T) {
	t.Parallel()
	keys := newTokJWKS(t)
	k := keys.publish(t, "k1")
	s := NewStack(t, Options{GatewayArgs: []string{"-auth-addr", "", "-jwks-url", keys.URL + "/jwks", "-issuer", tokIssuer}})
	s.MDRCLI(t, 0, "import", filepath.Join("testdata", "mdrclient.json"))
	token := tokSign(t, k, func(tok jwt.Token) { _ = tok.Set("scope", []string{"openid", "mdr:hidden"}) })

	t.Run("GetDataElementGroupSlots", func(t *testing.T) {
		// getJsonDataElementGroupSlots always asks in English.
		_, b := clientGet(t, s, mdr+"/dataelementgroups/"+tumourGroup+"/slots", "en", "", 200)
		var slots []mdrcSlot
		gsonLike(t, b, &slots)
		want := []mdrcSlot{{"fhir", "Condition"}, {"order", "1"}}
		if !slices.Equal(slots, want) {
			t.Fatalf("slots = %+v, want %+v", slots, want)
		}
		_, b = clientGet(t, s, mdr+"/dataelementgroups/urn:mdr16:dataelementgroup:1:1/slots", "en", "", 200)
		if string(bytes.TrimSpace(b)) != "[]" {
			t.Fatalf("a group without slots = %s, want []", b)
		}
		clientGet(t, s, mdr+"/dataelementgroups/urn:clinic:dataelementgroup:9:1/slots", "en", "", 404)
		clientGet(t, s, mdr+"/dataelementgroups/"+diagnosisDE+"/slots", "en", "", 404)
		clientGet(t, s, mdr+"/dataelementgroups/urn:clinic:dataelementgroup:x:1/slots", "en", "", 400)
	})

	t.Run("GetUserRootElements", func(t *testing.T) {
		_, b := clientGet(t, s, mdr+"/members", "de", "", 200)
		var rl mdrcResultList
		gsonLike(t, b, &rl)
		want := []string{tumourGroup,
			"urn:mdr16:dataelementgroup:1:1", "urn:mdr16:dataelementgroup:2:1", "urn:mdr16:dataelementgroup:3:1",
			"urn:mdr16:dataelementgroup:4:1", "urn:mdr16:dataelementgroup:5:1", "urn:mdr16:dataelementgroup:6:1"}
		if got := resultIDs(rl); !slices.Equal(got, want) {
			t.Fatalf("anonymous root elements = %v, want %v", got, want)
		}
		if rl.Totalcount == nil || *rl.Totalcount != len(want) {
			t.Fatalf("totalcount = %v", rl.Totalcount)
		}
		for _, r := range rl.Results {
			wantResultShape(t, r)
		}
		if r := rl.Results[0]; r.Type != "DATAELEMENTGROUP" || r.Designations[0].Designation != "Tumor" {
			t.Fatalf("first root = %+v", r)
		}
		// Same path, other language: English first, from the service.
		res, b := clientGet(t, s, mdr+"/members", "en", "", 200)
		gsonLike(t, b, &rl)
		if rl.Results[0].Designations[0].Language != "en" || res.Header.Get("X-Cache") == "hit" {
			t.Fatalf("English answer = %+v (X-Cache %q)", rl.Results[0], res.Header.Get("X-Cache"))
		}
		// The same anonymous request again comes from the response cache.
		res, _ = clientGet(t, s, mdr+"/members", "en", "", 200)
		wantHeader(t, res, "X-Cache", "hit")
		// The connector's own token, granting the private namespace.
		_, b = clientGet(t, s, mdr+"/members", "de", token, 200)
		rl = mdrcResultList{}
		gsonLike(t, b, &rl)
		if got := resultIDs(rl); !slices.Contains(got, hiddenDE) || len(got) != len(want)+1 {
			t.Fatalf("granted root elements = %v", got)
		}
		clientGet(t, s, mdr+"/members?offset=-1", "de", "", 400)
	})

	t.Run("SearchLocal", func(t *testing.T) {
		// Jersey renders the Java list given to queryParam("type", ...) as
		// one value: `[dataelement, dataelementgroup]`, encoded.
		jersey := mdr + "/search/local?query=Diagnose&status=released&type=%5Bdataelement,+dataelementgroup%5D"
		_, b := clientGet(t, s, jersey, "de", "null", 200)
		var rl mdrcResultList
		gsonLike(t, b, &rl)
		got := resultIDs(rl)
		for _, id := range []string{diagnosisDE, tumourGroup, "urn:mdr16:dataelement:27:1"} {
			if !slices.Contains(got, id) {
				t.Fatalf("search results %v lack %s", got, id)
			}
		}
		if slices.Contains(got, diagDateDE) {
			t.Fatalf("a draft element was found with status=released: %v", got)
		}
		for _, r := range rl.Results {
			wantResultShape(t, r)
			wantStatusEnum(t, r.Identification, "RELEASED")
			if r.Type != "DATAELEMENT" && r.Type != "DATAELEMENTGROUP" {
				t.Fatalf("type %q found, not asked for", r.Type)
			}
		}
		if *rl.Totalcount != len(rl.Results) {
			t.Fatalf("totalcount %d for %d results", *rl.Totalcount, len(rl.Results))
		}
		// The list as repeated parameters finds the same.
		_, b = clientGet(t, s, mdr+"/search/local?query=Diagnose&status=released&type=dataelement&type=dataelementgroup", "de", "null", 200)
		var again mdrcResultList
		gsonLike(t, b, &again)
		if !slices.Equal(resultIDs(again), got) {
			t.Fatalf("repeated type parameters = %v, bracketed list = %v", resultIDs(again), got)
		}
		// Without the status filter the draft is found too.
		_, b = clientGet(t, s, mdr+"/search/local?query=Diagnosedatum", "de", "null", 200)
		again = mdrcResultList{}
		gsonLike(t, b, &again)
		if !slices.Contains(resultIDs(again), diagDateDE) {
			t.Fatalf("all statuses = %v", resultIDs(again))
		}
		// Private namespaces only with a token that grants them.
		private := mdr + "/search/local?query=diagnos&status=released&type=%5Bdataelement,+dataelementgroup%5D"
		_, b = clientGet(t, s, private, "de", "null", 200)
		again = mdrcResultList{}
		gsonLike(t, b, &again)
		if slices.Contains(resultIDs(again), hiddenDE) {
			t.Fatalf("anonymous search found the private element")
		}
		_, b = clientGet(t, s, private, "de", token, 200)
		again = mdrcResultList{}
		gsonLike(t, b, &again)
		if !slices.Contains(resultIDs(again), hiddenDE) {
			t.Fatalf("granted search = %v", resultIDs(again))
		}
		clientGet(t, s, mdr+"/search/local?status=released", "de", "null", 400)
		clientGet(t, s, mdr+"/search/local?query=x&type=catalog", "de", "null", 400)
		clientGet(t, s, mdr+"/search/local?query=x&status=published", "de", "null", 400)
	})

	t.Run("GetUserNamespaceRepresentations", func(t *testing.T) {
		// No Accept-Language: the client sends none on this call.
		_, b := clientGet(t, s, mdr+"/representations?urn="+diagnosisDE, "", "null", 200)
		var rl mdrcResultList
		gsonLike(t, b, &rl)
		if got := resultIDs(rl); !slices.Equal(got, []string{diagnosisDE}) || *rl.Totalcount != 1 {
			t.Fatalf("representations = %s", b)
		}
		wantResultShape(t, rl.Results[0])
		clientGet(t, s, mdr+"/representations?urn="+hiddenDE, "", "null", 404)
		_, b = clientGet(t, s, mdr+"/representations?urn="+hiddenDE, "", token, 200)
		rl = mdrcResultList{}
		gsonLike(t, b, &rl)
		if got := resultIDs(rl); !slices.Equal(got, []string{hiddenDE}) {
			t.Fatalf("granted representations = %v", got)
		}
		clientGet(t, s, mdr+"/representations?urn=urn:clinic:dataelement:9:1", "", "null", 404)
		clientGet(t, s, mdr+"/representations", "", "null", 400)
		clientGet(t, s, mdr+"/representations?urn=not-a-urn", "", "null", 400)
	})

	t.Run("GetDataElementCatalogueAndGetCatalogue", func(t *testing.T) {
		_, viaElement := clientGet(t, s, mdr+"/dataelements/"+diagnosisDE+"/catalog", "en", "", 200)
		_, viaCatalogue := clientGet(t, s, mdr+"/catalogs/"+diagnosisCat+"/codes", "en", "", 200)
		if !bytes.Equal(viaElement, viaCatalogue) {
			t.Fatalf("the element's catalogue %s differs from the catalogue %s", viaElement, viaCatalogue)
		}
		var c mdrcCatalogue
		gsonLike(t, viaElement, &c)
		if c.Root == nil || c.Root.Identification == nil || c.Root.Identification.URN != diagnosisCat {
			t.Fatalf("root = %+v", c.Root)
		}
		wantStatusEnum(t, c.Root.Identification, "RELEASED")
		if len(c.Root.Designations) == 0 || c.Root.Designations[0].Designation != "Diagnosis" {
			t.Fatalf("root designations = %+v", c.Root.Designations)
		}
		if len(c.Codes) != 2 || len(c.Root.SubCodes) != 2 {
			t.Fatalf("codes = %+v, root subCodes = %v", c.Codes, c.Root.SubCodes)
		}
		for i, want := range []struct{ code, en string }{{"C00", "Lip"}, {"C01", "Base of tongue"}} {
			code := c.Codes[i]
			if code.Code != want.code || code.IsValid == nil || !*code.IsValid || code.SubCodes == nil {
				t.Fatalf("code %d = %+v", i, code)
			}
			if len(code.Designations) == 0 || code.Designations[0].Language != "en" || code.Designations[0].Designation != want.en {
				t.Fatalf("code %d designations = %+v", i, code.Designations)
			}
			wantStatusEnum(t, code.Identification, "RELEASED")
			if code.Identification.URN != c.Root.SubCodes[i] {
				t.Fatalf("code %d urn %q, root lists %q", i, code.Identification.URN, c.Root.SubCodes[i])
			}
		}
		// German first when asked.
		_, b := clientGet(t, s, mdr+"/catalogs/"+diagnosisCat+"/codes", "de", "", 200)
		gsonLike(t, b, &c)
		if c.Codes[0].Designations[0].Designation != "Lippe" {
			t.Fatalf("German catalogue = %+v", c.Codes[0])
		}
		// An enumerated element and a described one have no catalogue.
		clientGet(t, s, mdr+"/dataelements/urn:mdr16:dataelement:23:1/catalog", "en", "", 404)
		clientGet(t, s, mdr+"/dataelements/"+diagDateDE+"/catalog", "en", "", 404)
		clientGet(t, s, mdr+"/catalogs/urn:clinic:catalog:2:1/codes", "en", "", 404)
		clientGet(t, s, mdr+"/catalogs/urn:clinic:catalog:9:1/codes", "en", "", 404)
		clientGet(t, s, mdr+"/dataelements/urn:clinic:dataelement:9:1/catalog", "en", "", 404)
		clientGet(t, s, mdr+"/catalogs/"+diagnosisDE+"/codes", "en", "", 400)
		clientGet(t, s, mdr+"/dataelements/urn:clinic:dataelement:x:1/catalog", "en", "", 400)
	})
}

// TestCompatMDRClientPrefix: the client's extra paths follow -mdr-prefix
// like the rest of group B, and are not served under the default one then.
func TestCompatMDRClientPrefix(t *testing.T) {
	t.Parallel()
	const prefix = "/registry/v3/api/mdr"
	s := NewStack(t, Options{GatewayArgs: []string{"-mdr-prefix", prefix}})
	_, b := clientGet(t, s, prefix+"/members", "de", "", 200)
	var rl mdrcResultList
	gsonLike(t, b, &rl)
	if rl.Totalcount == nil || *rl.Totalcount != 6 {
		t.Fatalf("root elements under %s = %s", prefix, b)
	}
	_, b = clientGet(t, s, prefix+"/search/local?query=spender&status=released&type=%5Bdataelement,+dataelementgroup%5D", "de", "null", 200)
	rl = mdrcResultList{}
	gsonLike(t, b, &rl)
	if len(rl.Results) == 0 {
		t.Fatalf("search under %s found nothing: %s", prefix, b)
	}
	clientGet(t, s, prefix+"/representations?urn=urn:mdr16:dataelement:23:1", "", "null", 200)
	clientGet(t, s, prefix+"/dataelementgroups/urn:mdr16:dataelementgroup:5:1/slots", "en", "", 200)
	clientGet(t, s, prefix+"/dataelements/urn:mdr16:dataelement:23:1/catalog", "en", "", 404)
	clientGet(t, s, prefix+"/catalogs/urn:mdr16:catalog:23:1/codes", "en", "", 404)
	clientGet(t, s, mdr+"/members", "de", "", 404)
}

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fris.dev/pkg/kv"
)

// TestSiteRegistry: the site registry as operators, connectors' operators and
// researchers meet it. A bank linked to a site the registry does not hold,
// a credential for one and an inquiry targeting one are refused with the
// site named; researchers see every site with its names, whether an active
// bank reads it and when it last replied.
func TestSiteRegistry(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{BrokerArgs: []string{"-name", brokerName, "-registration", "approval"}})
	seedAuth(t, s)
	access, _ := researcherToken(t, s, demoEmail, demoPass)
	a := registerBank(t, s, "bank@charite.example")
	typo := registerBank(t, s, "bank@dresden.example")
	s.BrokerCLI(t, 0, "approve-bank", "-site", "charite", a.email)

	t.Run("Operators", func(t *testing.T) {
		out := s.BrokerCLI(t, 0, "sites")
		for _, want := range []string{"charite", "Charité – Universitätsmedizin Berlin", "University Hospital Dresden", "muenchen"} {
			wantContains(t, out, want)
		}
		waitAudit(t, s.Broker, "broker.admin.CreateSite", map[string]any{"outcome": "success", "actor": "admin-api", "id": "dresden"})
		s.BrokerCLI(t, 1, "create-site", "-id", "dresden", "-name-de", "again")
		s.BrokerCLI(t, 0, "create-site", "-id", "dresden", "-name-de", "again", "-if-missing")
		s.BrokerCLI(t, 0, "update-site", "-id", "muenchen", "-contact", "biobank@med.uni-muenchen.example")
		out = s.BrokerCLI(t, 0, "sites")
		wantContains(t, out, "biobank@med.uni-muenchen.example")
		wantContains(t, out, "Universitätsklinikum Dresden") // if-missing kept it
		waitAudit(t, s.Broker, "broker.admin.UpdateSite", map[string]any{"outcome": "success", "id": "muenchen"})
	})

	t.Run("BankForUnknownSiteRefused", func(t *testing.T) {
		for _, cmd := range []string{"approve-bank", "link-bank"} {
			out := s.BrokerCLI(t, 1, cmd, "-site", "dresdn", typo.email)
			wantContains(t, out, `unknown site "dresdn"`)
		}
		wantText(t, s, http.MethodGet, sb+"/banks/"+typo.email+"/status", nil, 202, typo.auth()...)
		// The name a connector reports for its site is a display string,
		// not a link: any name is recorded.
		wantText(t, s, http.MethodPut, sb+"/banks/"+a.email+"/site/Charit%C3%A9%20Berlin", nil, 200, a.auth()...)
	})

	t.Run("CredentialForUnknownSiteRefused", func(t *testing.T) {
		out := s.UploadCLI(t, 1, "create-credential", "-site", "dresdn", "-teiler", "teiler1", "-password", "a long password", "typo-user")
		wantContains(t, out, `unknown site "dresdn"`)
		s.UploadCLI(t, 0, "create-credential", "-site", "muenchen", "-teiler", "teiler1", "-password", "a long password", "muc-user")
		if out := s.UploadCLI(t, 0, "credentials"); strings.Contains(out, "typo-user") || !strings.Contains(out, "muc-user") {
			t.Fatalf("credentials:\n%s", out)
		}
	})

	t.Run("InquiryForUnknownSiteRefused", func(t *testing.T) {
		v := researcherDo(t, s, http.MethodPost, "/inquiries", access, inquiryJSON("Typo", []string{"charite", "nosuch"}, ""), 400)
		if d, _ := v["error_description"].(string); !strings.Contains(d, `unknown site "nosuch"`) {
			t.Fatalf("reason = %v", v)
		}
		in := researcherDo(t, s, http.MethodPost, "/inquiries", access, inquiryJSON("Fine", []string{"charite"}, ""), 200)
		researcherDo(t, s, http.MethodPut, "/inquiries/"+in["id"].(string), access, inquiryJSON("Fine", []string{"nosuch"}, ""), 400)
	})

	t.Run("ResearchersSeeEverySite", func(t *testing.T) {
		in := researcherDo(t, s, http.MethodPost, "/inquiries", access, inquiryJSON("Who answers", []string{"charite", "dresden"}, ""), 200)
		id := in["id"].(string)
		researcherDo(t, s, http.MethodPost, "/inquiries/"+id+"/release", access, "", 200)
		wantText(t, s, http.MethodPut, sb+"/inquiries/"+id+"/replies/"+a.email, strings.NewReader("7"), 200, append(a.auth(), "Content-Type", "text/plain")...)
		v := researcherDo(t, s, http.MethodGet, "/sites", access, "", 200)
		sites, _ := v["sites"].([]any)
		if len(sites) != len(StackSites) {
			t.Fatalf("sites = %v", v)
		}
		for _, x := range sites {
			site := x.(map[string]any)
			id := site["id"].(string)
			active := id == "charite"
			if site["has_active_bank"] != active || (site["last_reply_at"] != nil) != active {
				t.Fatalf("site %s: %v", id, site)
			}
			if id == "dresden" && (site["name_de"] != "Universitätsklinikum Dresden" || site["name_en"] != "University Hospital Dresden") {
				t.Fatalf("dresden: %v", site)
			}
		}
		// Researchers only.
		res, _ := s.Do(t, http.MethodGet, sb+"/researcher/sites", nil)
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("without a token: %d", res.StatusCode)
		}
	})
}

// TestExplorerSites: the inquiry form offers the registry's sites by their
// names in the page's language, and a crafted form value naming a site
// the registry does not hold is refused with the form again.
func TestExplorerSites(t *testing.T) {
	t.Parallel()
	s, _, _ := inquiryStack(t)
	c := signInHTTP(t, s)
	for lang, want := range map[string][]string{
		"en": {"University Hospital Dresden", "Charité – Universitätsmedizin Berlin", "LMU University Hospital Munich <span class=\"hint\">(no active bank yet)</span>"},
		"de": {"Universitätsklinikum Dresden", "Klinikum der Universität München <span class=\"hint\">(noch keine aktive Biobank)</span>"},
	} {
		_, page := getPage(t, c, s.URL+"/explorer/inquiries/new?lang="+lang)
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Fatalf("%s form lacks %q", lang, w)
			}
		}
	}
	_, form := getPage(t, c, s.URL+"/explorer/inquiries/new")
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(form)
	if m == nil {
		t.Fatal("no CSRF token on the form")
	}
	fields := url.Values{"csrf_token": {m[1]}, "label": {"Crafted"}, "lastname": {"Lovelace"}, "site": {"charite", "nosuch"},
		"qb.group": {"g"}, "qb.cond": {"g.a"}, "qb.c.a.urn": {"urn:mdr16:dataelement:14:1"}, "qb.c.a.from": {"18"}}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			_ = w.WriteField(k, v)
		}
	}
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/explorer/inquiries?lang=en", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", s.URL)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, res)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "Not in the site registry: nosuch.") {
		t.Fatalf("crafted site: %d\n%s", res.StatusCode, page)
	}
	if out := s.BrokerCLI(t, 0, "inquiries"); strings.Contains(out, "Crafted") {
		t.Fatalf("the crafted form created an inquiry:\n%s", out)
	}
}

// TestSitesMigration: a deployment from before the site registry (a
// credential and a bank naming sites it does not hold) is restarted with
// one: the sites are created, named by their ids, and both keep working.
func TestSitesMigration(t *testing.T) {
	// Not parallel: it restarts broker and upload on the addresses they had, which a parallel test's listener could take while they are down.
	dir := t.TempDir()
	// Upload without -broker-addr checks no site, as the previous release.
	s := NewStack(t, Options{NoSites: true, UploadArgs: []string{"-data-dir", dir, "-broker-addr", ""}, BrokerArgs: []string{"-data-dir", dir}})
	s.UploadCLI(t, 0, "create-credential", "-site", "leipzig", "-teiler", "teiler1", "-password", "a long password", "leipzig-user")
	if out := s.BrokerCLI(t, 0, "sites"); strings.Contains(out, "leipzig") {
		t.Fatalf("sites before the migration:\n%s", out)
	}

	// The broker's bank, as the previous release stored it.
	if err := s.Broker.stop(t); err != nil {
		t.Fatal(err)
	}
	db, err := kv.OpenBolt(filepath.Join(dir, "broker.db"), kv.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := strings.Repeat("ab", 32)
	h := sha256.Sum256([]byte(token))
	hash := hex.EncodeToString(h[:])
	err = db.Update(context.Background(), func(tx kv.Tx) error {
		if err := kv.PutJSON(tx, "bank/old@halle.example", map[string]any{"email": "old@halle.example", "token_hash": hash,
			"status": "active", "site_id": "halle", "registered_at": 1, "approved_at": 2}, 0); err != nil {
			return err
		}
		return tx.Put("token/"+hash, []byte("old@halle.example"), 0)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Broker = start(t, "broker", "serve", "-grpc-addr", s.BrokerAddr, "-ops-addr", "127.0.0.1:0", "-log-level", "debug", "-data-dir", dir)
	if err := s.Upload.stop(t); err != nil {
		t.Fatal(err)
	}
	s.Upload = start(t, "upload", "serve", "-grpc-addr", s.UploadAddr, "-ops-addr", "127.0.0.1:0", "-log-level", "debug",
		"-argon2-memory-kib", "1024", "-mdr-addr", s.MDRAddr, "-data-dir", dir, "-broker-addr", s.BrokerAddr)

	// Upload adds its sites in the background, as soon as the broker answers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := s.BrokerCLI(t, 0, "sites")
		halle := regexp.MustCompile(`(?m)^halle\s+halle\s+halle\s+yes\s`).MatchString(out)
		leipzig := regexp.MustCompile(`(?m)^leipzig\s+leipzig\s+leipzig\s+no\s`).MatchString(out)
		if halle && leipzig {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sites after the migration:\n%s\nbroker log:\n%s\nupload log:\n%s", out, s.Broker.logs(), s.Upload.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The migrated bank is still active (once the gateway has reconnected
	// to the restarted broker), and a credential for its site is accepted.
	for {
		res, body := s.Do(t, http.MethodGet, sb+"/banks/old@halle.example/status", nil, "Authorization", "Samply "+token)
		if res.StatusCode == http.StatusOK {
			break
		}
		if res.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("the migrated bank's status: %d %s", res.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.UploadCLI(t, 0, "create-credential", "-site", "halle", "-teiler", "teiler1", "-password", "a long password", "halle-user")
}

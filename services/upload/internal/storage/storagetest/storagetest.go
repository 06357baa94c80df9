// Package storagetest is the upload store's conformance suite, run against
// every backend.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"fris.dev/services/upload/internal/storage"
)

// Run runs the suite; open returns a fresh, empty store for each case,
// which runs as a subtest of its name.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s storage.Store)
	}{
		{"Credentials", testCredentials},
		{"Patients", testPatients},
		{"IDsWithSlashesAndPercent", testIDsWithSlashesAndPercent},
		{"ListAndPrefixDelete", testListAndPrefixDelete},
		{"ConcurrentReplace", testConcurrentReplace},
		{"LastUpload", testLastUpload},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

// teilers are two sites' teilers with the same teiler id, so a case can
// tell their patients apart.
func teilers() (charite, dresden storage.Teiler) {
	return storage.Teiler{SiteID: "charite", TeilerID: "teiler1"}, storage.Teiler{SiteID: "dresden", TeilerID: "teiler1"}
}

func testCredentials(t *testing.T, s storage.Store) {
	ctx := context.Background()
	charite, dresden := teilers()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	a := storage.Credential{Username: "charite-up", Teiler: charite, Hash: "h1", Created: 7}
	if err := s.CreateCredential(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateCredential(ctx, storage.Credential{Username: "charite-up", Teiler: dresden, Hash: "h2"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("duplicate username: %v, want ErrExists", err)
	}
	if got, err := s.Credential(ctx, "charite-up"); err != nil || got != a {
		t.Fatalf("Credential = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.Credential(ctx, "nobody"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown username: %v", err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateCredential(ctx, "charite-up", func(c *storage.Credential) error { c.Hash = "x"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateCredential error = %v", err)
	}
	up, err := s.UpdateCredential(ctx, "charite-up", func(c *storage.Credential) error { c.Disabled = true; return nil })
	if err != nil || !up.Disabled || up.Hash != "h1" {
		t.Fatalf("UpdateCredential = %+v, %v", up, err)
	}
	if _, err := s.UpdateCredential(ctx, "nobody", func(*storage.Credential) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("UpdateCredential unknown = %v", err)
	}
	if err := s.CreateCredential(ctx, storage.Credential{Username: "dresden-up", Teiler: dresden, Hash: "h3"}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Credentials(ctx)
	if err != nil || len(all) != 2 || all[0].Username != "charite-up" || !all[0].Disabled || all[1].Teiler != dresden {
		t.Fatalf("Credentials = %+v, %v", all, err)
	}
}

func testPatients(t *testing.T, s storage.Store) {
	ctx := context.Background()
	charite, dresden := teilers()
	doc := []byte("<Patient id=\"p1\"/>\n")
	sum := storage.Summary{Teiler: charite, PatientID: "p1", Stored: 10, Size: len(doc), Cases: 2, Samples: 1, Attributes: 5, Containers: 3, Refs: 1}
	replaced, err := s.PutPatient(ctx, sum, doc)
	if err != nil || replaced {
		t.Fatalf("first PutPatient = %v, %v", replaced, err)
	}
	gotSum, gotDoc, err := s.Patient(ctx, charite, "p1")
	if err != nil || gotSum != sum || !bytes.Equal(gotDoc, doc) {
		t.Fatalf("Patient = %+v %q %v", gotSum, gotDoc, err)
	}
	// The same id at another site is another patient.
	if _, _, err := s.Patient(ctx, dresden, "p1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other site sees the patient: %v", err)
	}
	doc2 := []byte("<Patient id=\"p1\"><Case id=\"c\"/></Patient>")
	sum2 := sum
	sum2.Stored, sum2.Size = 11, len(doc2)
	if replaced, err := s.PutPatient(ctx, sum2, doc2); err != nil || !replaced {
		t.Fatalf("second PutPatient = %v, %v", replaced, err)
	}
	if gotSum, gotDoc, _ := s.Patient(ctx, charite, "p1"); gotSum != sum2 || !bytes.Equal(gotDoc, doc2) {
		t.Fatalf("replaced Patient = %+v %q", gotSum, gotDoc)
	}
	if n, err := s.CountPatients(ctx, charite); err != nil || n != 1 {
		t.Fatalf("CountPatients = %d, %v", n, err)
	}
	if n, last, err := s.PatientStats(ctx, charite); err != nil || n != 1 || last != 11 {
		t.Fatalf("PatientStats = %d, %d, %v; want 1, 11", n, last, err)
	}
	if n, last, err := s.PatientStats(ctx, dresden); err != nil || n != 0 || last != 0 {
		t.Fatalf("PatientStats of a teiler without patients = %d, %d, %v", n, last, err)
	}
	if err := s.DeletePatient(ctx, charite, "p1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePatient(ctx, charite, "p1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete = %v", err)
	}
	if _, _, err := s.Patient(ctx, charite, "p1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted patient: %v", err)
	}
}

func testIDsWithSlashesAndPercent(t *testing.T, s storage.Store) {
	ctx := context.Background()
	// An id must never reach into another teiler's keys or collide with
	// its escaped form.
	odd := storage.Teiler{SiteID: "a/b", TeilerID: "c"}
	plain := storage.Teiler{SiteID: "a", TeilerID: "b/c"}
	for _, p := range []struct {
		t  storage.Teiler
		id string
	}{{odd, "x/y"}, {plain, "x/y"}, {odd, "x%2Fy"}, {odd, "abc=="}} {
		if _, err := s.PutPatient(ctx, storage.Summary{Teiler: p.t, PatientID: p.id}, []byte(p.t.String()+"|"+p.id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, d, err := s.Patient(ctx, odd, "x/y"); err != nil || string(d) != "a/b/c|x/y" {
		t.Fatalf("odd x/y = %q %v", d, err)
	}
	if _, d, err := s.Patient(ctx, odd, "x%2Fy"); err != nil || string(d) != "a/b/c|x%2Fy" {
		t.Fatalf("odd x%%2Fy = %q %v", d, err)
	}
	if n, _ := s.CountPatients(ctx, odd); n != 3 {
		t.Fatalf("CountPatients(odd) = %d, want 3", n)
	}
	if n, _ := s.CountPatients(ctx, plain); n != 1 {
		t.Fatalf("CountPatients(plain) = %d, want 1", n)
	}
	list, err := s.Patients(ctx, odd, "", "", 0)
	if err != nil || len(list) != 3 || list[0].PatientID != "abc==" || list[1].PatientID != "x%2Fy" || list[2].PatientID != "x/y" {
		t.Fatalf("Patients = %+v, %v", list, err)
	}
}

func testListAndPrefixDelete(t *testing.T, s storage.Store) {
	ctx := context.Background()
	charite, dresden := teilers()
	for i := 0; i < 1203; i++ {
		id := fmt.Sprintf("TEST-%04d", i)
		if i%2 == 1 {
			id = fmt.Sprintf("REAL-%04d", i)
		}
		if _, err := s.PutPatient(ctx, storage.Summary{Teiler: charite, PatientID: id, Stored: int64(i)}, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutPatient(ctx, storage.Summary{Teiler: dresden, PatientID: "TEST-0000"}, []byte("d")); err != nil {
		t.Fatal(err)
	}
	page, err := s.Patients(ctx, charite, "REAL-", "", 10)
	if err != nil || len(page) != 10 || page[0].PatientID != "REAL-0001" || page[9].PatientID != "REAL-0019" {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	page, err = s.Patients(ctx, charite, "REAL-", "REAL-0019", 2)
	if err != nil || len(page) != 2 || page[0].PatientID != "REAL-0021" {
		t.Fatalf("second page = %+v, %v", page, err)
	}
	// More than one delete batch, only the prefix, only this teiler.
	n, err := s.DeletePatientsByPrefix(ctx, charite, "TEST-")
	if err != nil || n != 602 {
		t.Fatalf("DeletePatientsByPrefix = %d, %v; want 602", n, err)
	}
	if c, _ := s.CountPatients(ctx, charite); c != 601 {
		t.Fatalf("left %d, want 601", c)
	}
	if _, _, err := s.Patient(ctx, charite, "TEST-0002"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("document of a deleted patient: %v", err)
	}
	if _, d, err := s.Patient(ctx, dresden, "TEST-0000"); err != nil || string(d) != "d" {
		t.Fatalf("other site's patient: %q %v", d, err)
	}
	if n, err := s.DeletePatientsByPrefix(ctx, charite, "NONE"); err != nil || n != 0 {
		t.Fatalf("empty prefix delete = %d, %v", n, err)
	}
}

func testConcurrentReplace(t *testing.T, s storage.Store) {
	ctx := context.Background()
	charite, _ := teilers()
	// Readers racing writers always see a document with its own summary.
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				doc := bytes.Repeat([]byte{byte('a' + w)}, 100+w*10+i)
				if _, err := s.PutPatient(ctx, storage.Summary{Teiler: charite, PatientID: "p", Size: len(doc)}, doc); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	for i := 0; i < 50; i++ {
		sum, doc, err := s.Patient(ctx, charite, "p")
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil || sum.Size != len(doc) {
			t.Fatalf("summary size %d with a document of %d bytes (%v)", sum.Size, len(doc), err)
		}
	}
	wg.Wait()
	if n, _ := s.CountPatients(ctx, charite); n != 1 {
		t.Fatalf("CountPatients = %d, want 1", n)
	}
}

func testLastUpload(t *testing.T, s storage.Store) {
	ctx := context.Background()
	charite, dresden := teilers()
	if _, err := s.LastUpload(ctx, charite); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("never uploaded: %v", err)
	}
	if err := s.SetLastUpload(ctx, charite, 1_700_000_000_123_456_789); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LastUpload(ctx, charite); err != nil || got != 1_700_000_000_123_456_789 {
		t.Fatalf("LastUpload = %d, %v", got, err)
	}
	if _, err := s.LastUpload(ctx, dresden); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other teiler: %v", err)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// UploadReport is the upload suite: durable patient uploads through the
// gateway next to what the disk does alone.
type UploadReport struct {
	Store     string   `json:"store"`
	DocBytes  int      `json:"doc_bytes"`
	Sites     int      `json:"sites"`
	Clients   int      `json:"clients"`
	Scenario  Scenario `json:"scenario"`
	FsyncDir  string   `json:"fsync_dir"`
	FsyncSecs float64  `json:"fsync_seconds"`
	Device    string   `json:"device,omitempty"`
	DiskSyncs []Syncs  `json:"disk_syncs"` // before and after the uploads
	// PlainFsyncPerSec is the mean of the plain fdatasync rates around the
	// run (bbolt and Redis's AOF sync with fdatasync on Linux).
	PlainFsyncPerSec float64      `json:"plain_fsync_per_sec"`
	Result           *Measurement `json:"result"`
	// Flushes are the device's completed flush requests (every fsync or
	// fdatasync that reaches the disk is one) in the measured window, and
	// Commits the embedded store's commits there (0: not reported).
	Flushes             uint64  `json:"flushes"`
	Commits             uint64  `json:"commits"`
	UploadsPerFlush     float64 `json:"uploads_per_flush"`
	UploadsPerCommit    float64 `json:"uploads_per_commit"`
	UploadsPerPlainSync float64 `json:"uploads_per_plain_fsync"`
	MinPerFsync         float64 `json:"min_uploads_per_fsync"`
	MaxP99Ms            float64 `json:"max_p99_ms"`
	Met                 bool    `json:"met"`
}

// Syncs is one measurement of the disk's plain sync rate: one goroutine
// writing 512 bytes and syncing, over and over.
type Syncs struct {
	FsyncPerSec     float64 `json:"fsync_per_sec"`
	FdatasyncPerSec float64 `json:"fdatasync_per_sec"`
	// FlushesPerSync checks that the device counter sees each sync once.
	FlushesPerSync float64 `json:"flushes_per_sync,omitempty"`
}

// diskSyncRate measures fsync and fdatasync per second in dir for d each.
func diskSyncRate(ctx context.Context, dir, device string, d time.Duration) (Syncs, error) {
	f, err := os.CreateTemp(dir, "fris-bench-fsync-*")
	if err != nil {
		return Syncs{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := bytes.Repeat([]byte{'x'}, 512)
	rate := func(sync func() error) (float64, uint64, error) {
		f0, _ := deviceFlushes(device)
		n := 0
		start := time.Now()
		for time.Since(start) < d && ctx.Err() == nil {
			// Overwrite the same block: like a store's page rewrite, the file
			// does not grow, so no metadata has to be journaled.
			if _, err := f.WriteAt(block, 0); err != nil {
				return 0, 0, err
			}
			if err := sync(); err != nil {
				return 0, 0, err
			}
			n++
		}
		f1, _ := deviceFlushes(device)
		return float64(n) / time.Since(start).Seconds(), f1 - f0, nil
	}
	var s Syncs
	fs, flushes, err := rate(f.Sync)
	if err != nil {
		return s, err
	}
	fds, flushes2, err := rate(func() error { return fdatasync(f) })
	if err != nil {
		return s, err
	}
	s.FsyncPerSec, s.FdatasyncPerSec = fs, fds
	if total := (fs + fds) * d.Seconds(); device != "" && total > 0 {
		s.FlushesPerSync = float64(flushes+flushes2) / total
	}
	return s, nil
}

// deviceFlushes is the device's count of completed flush requests
// (/proc/diskstats: the 16th field after the name, Linux 5.5+).
func deviceFlushes(device string) (uint64, error) {
	if device == "" {
		return 0, errors.New("no device")
	}
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		fl := strings.Fields(line)
		if len(fl) >= 19 && fl[2] == device {
			return strconv.ParseUint(fl[18], 10, 64)
		}
	}
	return 0, fmt.Errorf("device %s has no flush counter", device)
}

// storeCommits reads the upload service's commit counter from its metrics
// (only the embedded store reports one).
func storeCommits(ctx context.Context, metricsURL string) (uint64, bool) {
	if metricsURL == "" {
		return 0, false
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "fris_upload_store_commits_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return uint64(f), err == nil
		}
	}
	return 0, false
}

// uploadDoc turns the template into documents of about size bytes with
// any id: padding attributes go at the end of the last case.
type uploadDoc struct {
	head, tail []byte // around the id attribute's value
}

func newUploadDoc(template []byte, size int) (*uploadDoc, error) {
	const idAttr = ` id="`
	root := bytes.Index(template, []byte(":Patient "))
	if root < 0 {
		return nil, errors.New("template: no ...:Patient root element")
	}
	k := bytes.Index(template[root:], []byte(idAttr))
	if k < 0 {
		return nil, errors.New("template: no id attribute on the Patient root")
	}
	i := root + k
	end := bytes.IndexByte(template[i+len(idAttr):], '"')
	if end < 0 {
		return nil, errors.New("template: unterminated id")
	}
	d := &uploadDoc{head: template[:i+len(idAttr)], tail: template[i+len(idAttr)+end:]}
	// Pad inside the last case's end with attributes until the size is met.
	// The template's prefixes are the marshaller's choice, so the padding
	// declares its namespaces itself.
	ends := regexp.MustCompile(`</(?:[A-Za-z_][\w.-]*:)?Case>`).FindAllIndex(d.tail, -1)
	if len(ends) == 0 {
		return nil, errors.New("template: no </Case> to pad before")
	}
	closeCase := ends[len(ends)-1][0]
	var pad bytes.Buffer
	for n := 0; len(d.head)+len(d.tail)+pad.Len()+12 < size; n++ {
		fmt.Fprintf(&pad, `        <Attribute xmlns="http://schema.samply.de/ccp/Attribute"><MdrKey xmlns="http://schema.samply.de/ccp/MdrKey">urn:mdr16:dataelement:25:1</MdrKey><Value xmlns="http://schema.samply.de/ccp/Value">EV-%04d</Value></Attribute>`+"\n", n)
	}
	d.tail = append(append(append([]byte{}, d.tail[:closeCase]...), pad.Bytes()...), d.tail[closeCase:]...)
	return d, nil
}

func (d *uploadDoc) with(id string) []byte {
	out := make([]byte, 0, len(d.head)+len(id)+len(d.tail))
	return append(append(append(out, d.head...), id...), d.tail...)
}

// uploadSite is where one site's uploads go and the credentials they carry.
type uploadSite struct {
	base, auth string
}

// uploadSites are the sites the uploads go to, round robin: the one named by
// -upload-site and -upload-user, or with -upload-sites n above 1 the sites
// <upload-site>-1..n, each with its user <upload-user>-i, so a partitioned
// store sees many sites as a network of sites would send them.
func uploadSites(cfg config) []uploadSite {
	one := func(site, user string) uploadSite {
		return uploadSite{
			base: cfg.gateway + "/dktk/sites/" + site + "_teiler/" + cfg.uploadTeiler + "/pats/",
			auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+cfg.uploadPassword)),
		}
	}
	if cfg.uploadSites <= 1 {
		return []uploadSite{one(cfg.uploadSite, cfg.uploadUser)}
	}
	out := make([]uploadSite, cfg.uploadSites)
	for i := range out {
		out[i] = one(fmt.Sprintf("%s-%d", cfg.uploadSite, i+1), fmt.Sprintf("%s-%d", cfg.uploadUser, i+1))
	}
	return out
}

// runUpload uploads new patients as fast as the clients go.
func runUpload(ctx context.Context, cfg config, cpu *cpuWatch, stderr io.Writer) (*UploadReport, error) {
	rep := &UploadReport{Store: cfg.uploadStore, Sites: cfg.uploadSites, Clients: cfg.uploadClients, FsyncDir: cfg.fsyncDir, FsyncSecs: cfg.fsyncDuration.Seconds(),
		MinPerFsync: cfg.uploadMinPerFsync, MaxP99Ms: ms(cfg.uploadMaxP99)}
	template, err := os.ReadFile(cfg.uploadTemplate)
	if err != nil {
		return nil, err
	}
	doc, err := newUploadDoc(template, cfg.uploadDocBytes)
	if err != nil {
		return nil, err
	}
	rep.DocBytes = len(doc.with("B0000000000-00000000"))
	rep.Device = blockDevice(cfg.fsyncDir)

	syncs := func() error {
		s, err := diskSyncRate(ctx, cfg.fsyncDir, rep.Device, cfg.fsyncDuration)
		if err != nil {
			return fmt.Errorf("upload: plain fsync rate in %s: %w", cfg.fsyncDir, err)
		}
		rep.DiskSyncs = append(rep.DiskSyncs, s)
		fmt.Fprintf(stderr, "fris-bench: upload: disk: %.0f fsync/s, %.0f fdatasync/s\n", s.FsyncPerSec, s.FdatasyncPerSec)
		return nil
	}
	if err := syncs(); err != nil {
		return nil, err
	}

	sites := uploadSites(cfg)
	base := sites[0].base
	run := strconv.FormatInt(time.Now().UnixNano()%1e10, 10)
	var next atomic.Uint64
	tr := func(t *vegeta.Target) error {
		n := next.Add(1)
		id := fmt.Sprintf("B%s-%08d", run, n)
		s := sites[n%uint64(len(sites))]
		t.Method, t.URL, t.Body = http.MethodPut, s.base+id, doc.with(id)
		t.Header = http.Header{"Authorization": {s.auth}, "Content-Type": {"application/xml"}}
		return nil
	}
	sc := Scenario{
		Name: fmt.Sprintf("closed-%d", cfg.uploadClients), Method: http.MethodPut, Connections: cfg.uploadClients,
		Warmup: cfg.warmup, Duration: cfg.uploadDuration, Timeout: 10 * time.Second,
	}
	rep.Scenario = sc
	// The counters are read when the first measured answer arrives and after
	// the attack; the few requests in flight at either edge are noise.
	measureFrom := time.Now().Add(sc.Warmup)
	var once sync.Once
	var flush0, commit0 uint64
	var haveCommits bool
	handle := func(r *vegeta.Result) outcome {
		if !r.Timestamp.Before(measureFrom) {
			once.Do(func() {
				flush0, _ = deviceFlushes(rep.Device)
				commit0, haveCommits = storeCommits(ctx, cfg.uploadMetrics)
			})
		}
		bad := ""
		switch {
		case r.Error != "" && r.Code == 0:
			bad = r.Error
		case r.Code != http.StatusCreated:
			bad = fmt.Sprintf("status %d: %s", r.Code, bytes.TrimSpace(r.Body))
		}
		return outcome{bad: bad, unit: bad == "", unitLatency: r.Latency}
	}
	fmt.Fprintf(stderr, "fris-bench: upload: %d clients uploading %d-byte patients to %d site(s) (%s store), %s warm-up + %s\n",
		cfg.uploadClients, rep.DocBytes, len(sites), cfg.uploadStore, sc.Warmup, sc.Duration)
	m := sc.Run(ctx, tr, handle, cpu)
	flush1, ferr := deviceFlushes(rep.Device)
	commit1, ok := storeCommits(ctx, cfg.uploadMetrics)
	m.Path, m.Target, m.URL = "/dktk/sites/{site}_teiler/{teiler}/pats/{id}", cfg.uploadStore, base
	rep.Result = m
	if err := syncs(); err != nil {
		return nil, err
	}
	for _, s := range rep.DiskSyncs {
		rep.PlainFsyncPerSec += s.FdatasyncPerSec / float64(len(rep.DiskSyncs))
	}
	good := float64(m.Units)
	if ferr == nil && flush1 > flush0 {
		rep.Flushes = flush1 - flush0
		rep.UploadsPerFlush = good / float64(rep.Flushes)
	}
	if ok && haveCommits && commit1 > commit0 {
		rep.Commits = commit1 - commit0
		rep.UploadsPerCommit = good / float64(rep.Commits)
	}
	if rep.PlainFsyncPerSec > 0 {
		rep.UploadsPerPlainSync = m.UnitsPerSec / rep.PlainFsyncPerSec
	}
	// Uploads per fsync the service made: the store's commits where it
	// counts them (one durable flush each), else the device's flushes.
	perFsync := rep.UploadsPerCommit
	if perFsync == 0 {
		perFsync = rep.UploadsPerFlush
	}
	rep.Met = m.Errors == 0 && m.WarmupErrors == 0 && m.Units > 0 && m.P99Ms < ms(cfg.uploadMaxP99) && perFsync >= cfg.uploadMinPerFsync
	return rep, nil
}

func writeUpload(w io.Writer, u *UploadReport, cpu *cpuWatch) {
	m := u.Result
	fmt.Fprintf(w, "#### Durable patient uploads (suite %s, %s store)\n\n", suiteUpload, u.Store)
	fmt.Fprintf(w, "`PUT /dktk/sites/{site}_teiler/{teiler}/pats/{new id}` with Basic credentials, a %s-byte patient document (the demo patient, padded), every upload a new patient (201), %d site(s) round robin; closed loop, %d clients, %s warm-up + %s measured. Disk: %s (%s), one goroutine rewriting 512 bytes and syncing, %gs of fsync and %gs of fdatasync before and after the uploads.\n\n",
		thousands(float64(u.DocBytes)), max(u.Sites, 1), u.Clients, u.Scenario.Warmup, u.Scenario.Duration, u.FsyncDir, orNA(u.Device), u.FsyncSecs, u.FsyncSecs)
	fmt.Fprintln(w, "| disk, plain | fsync/s | fdatasync/s | device flushes per sync |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for i, s := range u.DiskSyncs {
		when := "before"
		if i > 0 {
			when = "after"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2f |\n", when, thousands(s.FsyncPerSec), thousands(s.FdatasyncPerSec), s.FlushesPerSync)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| uploads/s | p50 | p90 | p99 | max | errors | device flushes/s | uploads per flush | store commits/s | uploads per commit | uploads/s ÷ plain fdatasync/s |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	per := func(n uint64) string {
		if n == 0 || m.Seconds == 0 {
			return "n/a"
		}
		return thousands(float64(n) / m.Seconds)
	}
	ratio := func(f float64) string {
		if f == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", f)
	}
	fmt.Fprintf(w, "| **%s** | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", thousands(m.UnitsPerSec),
		msCell(m.P50Ms), msCell(m.P90Ms), msCell(m.P99Ms), msCell(m.MaxMs), m.Errors+m.WarmupErrors,
		per(u.Flushes), ratio(u.UploadsPerFlush), per(u.Commits), ratio(u.UploadsPerCommit), ratio(u.UploadsPerPlainSync))
	fmt.Fprintf(w, "\nTarget: at least %.0f uploads per fsync (group commit; the store's commits where it counts them, else the device's flushes), p99 under %s, no errors: %s\n",
		u.MinPerFsync, msCell(u.MaxP99Ms), verdict(u.Met))
	// Each reading of "uploads per fsync" on its own, so a verdict is never
	// read without the others.
	var readings []string
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"per store commit", u.UploadsPerCommit},
		{"per device flush (fsyncs actually made)", u.UploadsPerFlush},
		{"uploads/s ÷ the disk's plain fdatasync/s", u.UploadsPerPlainSync},
	} {
		if r.v > 0 {
			readings = append(readings, fmt.Sprintf("%s %.2f (%s)", r.name, r.v, verdict(r.v >= u.MinPerFsync)))
		}
	}
	if len(readings) > 0 {
		fmt.Fprintf(w, "\nUploads per fsync by reading (target %.0f): %s.\n", u.MinPerFsync, strings.Join(readings, "; "))
	}
	cpuTable(w, cpu, "upload", m)
}

func orNA(s string) string {
	if s == "" {
		return "device n/a"
	}
	return "device " + s
}

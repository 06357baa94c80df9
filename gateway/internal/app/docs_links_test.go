package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// architectureDoc names the repository's files on the way of each request.
const architectureDoc = "../../../docs/architecture.md"

var (
	docBackticked = regexp.MustCompile("`([^`\\s]+)`")
	// docRepoPath is a backticked word that names a repository path: one
	// under a top-level directory, or any word with a slash and a file
	// extension (so that a misspelt directory is checked too).
	docRepoPath  = regexp.MustCompile(`^(?:(?:gateway|services|pkg|proto|e2e|tools|deploy|docs)/[^:]*|[^/:]+(?:/[^/:]+)+\.(?:go|md|proto|html|js|css|sh|yaml|json))$`)
	docPlaceName = regexp.MustCompile(`<[^>]*>`)
	docLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	docAnchor    = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	docHeading   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	docMdLink    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// TestArchitectureDocPathsExist fails when docs/architecture.md names a
// repository path that does not exist (a placeholder such as <svc> stands
// for any name).
func TestArchitectureDocPathsExist(t *testing.T) {
	b, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range docBackticked.FindAllStringSubmatch(string(b), -1) {
		p := m[1]
		if !docRepoPath.MatchString(p) {
			continue
		}
		checked++
		pattern := filepath.Join(docRepoRoot, docPlaceName.ReplaceAllString(strings.TrimSuffix(p, "/"), "*"))
		found, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(found) == 0 {
			t.Errorf("%s names %s, which does not exist", architectureDoc, p)
		}
	}
	if checked < 50 {
		t.Fatalf("%d paths checked in %s: the doc or this test's idea of a path changed", checked, architectureDoc)
	}
}

// docMarkdownFiles are the Markdown files a reader of the repository follows links
// between.
func docMarkdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(docRepoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, filepath.Join(docRepoRoot, "README.md"), filepath.Join(docRepoRoot, "BENCHMARKS.md"),
		filepath.Join(docRepoRoot, "deploy", "README.md"))
}

// docSlug is the anchor GitHub gives a heading: its text lower-cased, without
// punctuation, spaces as hyphens.
func docSlug(heading string) string {
	heading = docMdLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docAnchorsOf are the link targets of a Markdown file: its headings' slugs
// (a repeated one with -1, -2, ...) and explicit <a id="..."> anchors.
func docAnchorsOf(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if m := docHeading.FindStringSubmatch(line); m != nil {
			s := docSlug(m[1])
			if n := seen[s]; n > 0 {
				out[s+"-"+strconv.Itoa(n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
		for _, m := range docAnchor.FindAllStringSubmatch(line, -1) {
			if out[m[1]] {
				t.Errorf("%s: the anchor %q is there twice", file, m[1])
			}
			out[m[1]] = true
		}
	}
	return out
}

// TestDocLinksResolve fails when a link between the repository's docs
// points at a file that does not exist or at an anchor its target does not
// have: entries are linked by id (docs/decisions.md's <a id> anchors, the
// other docs' headings), and a renamed one must not leave links dangling.
func TestDocLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	links := 0
	for _, file := range docMarkdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
				continue
			}
			if fence {
				continue
			}
			for _, m := range docLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := file + ":" + strconv.Itoa(i+1)
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: the link %s points at a file that does not exist", where, target)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if cache[dest] == nil {
					cache[dest] = docAnchorsOf(t, dest)
				}
				if !cache[dest][frag] {
					t.Errorf("%s: the link %s points at an anchor %s does not have", where, target, dest)
				}
			}
		}
	}
	if links < 20 {
		t.Fatalf("%d links checked: the docs or this test's idea of a link changed", links)
	}
}

// decisionsDoc holds the choices, each entry a bullet with an id of its
// own.
const decisionsDoc = "../../../docs/decisions.md"

var docEntry = regexp.MustCompile(`^- (<a id="([^"]+)"></a>)?\*\*`)

// TestDecisionsDocEntriesHaveIDs fails when an entry of docs/decisions.md
// (a top-level bullet that starts in bold) has no <a id> anchor, or when
// the table of contents does not link it: links to an entry then survive
// a change of its wording.
func TestDecisionsDocEntriesHaveIDs(t *testing.T) {
	b, err := os.ReadFile(decisionsDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	entries := 0
	for i, line := range strings.Split(text, "\n") {
		m := docEntry.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		entries++
		if m[2] == "" {
			t.Errorf("%s:%d: an entry without an id (start it with <a id=\"section-topic\"></a>): %.60s", decisionsDoc, i+1, line)
			continue
		}
		if !strings.Contains(text, "](#"+m[2]+")") {
			t.Errorf("%s:%d: the contents do not link the entry %q", decisionsDoc, i+1, m[2])
		}
	}
	if entries < 100 {
		t.Fatalf("%d entries in %s: the doc's format or this test's idea of an entry changed", entries, decisionsDoc)
	}
}

// TestBenchmarksDocShort fails when BENCHMARKS.md grows past 300 lines: it
// holds the method and the latest figures, and git the rest.
func TestBenchmarksDocShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docRepoRoot, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 300 {
		t.Errorf("BENCHMARKS.md has %d lines, want at most 300: keep the method and each suite's latest figures, and point to git for earlier runs", n)
	}
}

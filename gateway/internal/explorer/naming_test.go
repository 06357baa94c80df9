package explorer

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kebab is the one naming scheme of the templates: their files and the
// templates they define, lower case words joined by hyphens.
var kebab = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)

func TestTemplateNames(t *testing.T) {
	files, err := fs.Glob(templateFS, "templates/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("templates: %v %v", files, err)
	}
	for _, f := range files {
		if name, ok := strings.CutSuffix(filepath.Base(f), ".html"); !ok || !kebab.MatchString(name) {
			t.Errorf("template file %s: not lower-case-words-joined-by-hyphens.html", f)
		}
	}
	e := newEnv(t, false)
	for _, tm := range e.app.pages.Templates() {
		if name := tm.Name(); !strings.HasSuffix(name, ".html") && !kebab.MatchString(name) {
			t.Errorf("template %q: not lower-case-words-joined-by-hyphens", name)
		}
	}
}

// TestMessageFileNames: the message catalogues' files are messages.go and
// messages_<part>.go.
func TestMessageFileNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f, "messages") && f != "messages.go" && !regexp.MustCompile(`^messages_[a-z]+(_test)?\.go$`).MatchString(f) {
			t.Errorf("%s: a message catalogue's file is messages_<part>.go", f)
		}
	}
}

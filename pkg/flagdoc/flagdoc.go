// Package flagdoc holds the README's flag table as data, so that each
// component's tests can hold its real flag set against it: a flag the table
// names must exist with the default the table gives, and every flag must be
// in the table or in a reviewed list of flags docs/security.md describes.
// The table is written for readers; the few conventions it follows for the
// check are those of Read.
package flagdoc

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Components are the binaries whose serve flags the table documents.
var Components = []string{"gateway", "auth", "mdr", "upload", "broker"}

// services are the components "all services" names.
var services = []string{"auth", "mdr", "upload", "broker"}

// Row is one line of the table.
type Row struct {
	Line int
	// Components the row is about.
	Components []string
	// Flags without their dash; a name ending in * stands for every flag
	// it begins.
	Flags []string
	// Defaults per flag, parallel to Flags; see Default.
	Defaults []Default
}

// Default is what the table says of one flag's default.
type Default struct {
	// Checked is false when the cell points elsewhere ("see ...").
	Checked bool
	Value   string
	// Only, when set, limits the value to one component ("mdr: `x`");
	// For overrides Value for the components it names ("(upload: `2ms`)").
	Only string
	For  map[string]string
}

// Docs is the documentation the flags are checked against.
type Docs struct {
	Rows []Row
	// Security is docs/security.md's text.
	Security string
}

// Load reads README.md's "### Configuration" table and docs/security.md
// under the repository's root.
func Load(root string) (Docs, error) {
	readme, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		return Docs{}, err
	}
	defer readme.Close()
	rows, err := Read(readme)
	if err != nil {
		return Docs{}, err
	}
	sec, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		return Docs{}, err
	}
	return Docs{Rows: rows, Security: string(sec)}, nil
}

var (
	flagName = regexp.MustCompile("`-([a-z0-9-]+\\*?)`")
	quoted   = regexp.MustCompile("`([^`]*)`")
	// "mdr: `127.0.0.1:9102`" at the start of a cell; "(upload: `2ms`)"
	// after a value.
	onlyFor     = regexp.MustCompile("^([a-z]+): ")
	overrideFor = regexp.MustCompile("\\(([a-z]+): `([^`]*)`\\)")
)

// Read parses the table of the "### Configuration" section: rows
// "| components | flags | defaults | meaning |". Components are names,
// "all services", or both ("all services, gateway"); flags are `-name`s
// joined by " / "; defaults are joined the same way, one per flag or one
// for all, each `value`, "empty" or "none..." (no default), or "see ..."
// (not checked). A value may name exceptions, "`1ms` (upload: `2ms`)"; a
// cell beginning "mdr: " gives that component's defaults only.
func Read(f interface{ Read([]byte) (int, error) }) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	in := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(line) == "### Configuration"
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| service |") {
			continue
		}
		cells := split(line)
		if len(cells) != 4 {
			return nil, fmt.Errorf("README.md:%d: %d cells, want 4", n, len(cells))
		}
		row, err := parseRow(n, cells)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("README.md: no flag table under ### Configuration")
	}
	return rows, nil
}

// split cuts a table line at its unescaped pipes.
func split(line string) []string {
	line = strings.ReplaceAll(line, `\|`, "\x00")
	parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "\x00", "|"))
	}
	return parts
}

func parseRow(n int, cells []string) (Row, error) {
	row := Row{Line: n}
	for _, c := range strings.Split(cells[0], ",") {
		switch c = strings.TrimSpace(c); {
		case c == "all services":
			row.Components = append(row.Components, services...)
		case slices.Contains(Components, c):
			row.Components = append(row.Components, c)
		default:
			return row, fmt.Errorf("README.md:%d: unknown component %q", n, c)
		}
	}
	for _, m := range flagName.FindAllStringSubmatch(cells[1], -1) {
		row.Flags = append(row.Flags, m[1])
	}
	if len(row.Flags) == 0 {
		return row, fmt.Errorf("README.md:%d: no `-flag` in %q", n, cells[1])
	}
	cell, only := cells[2], ""
	if m := onlyFor.FindStringSubmatch(cell); m != nil && slices.Contains(Components, m[1]) {
		only, cell = m[1], cell[len(m[0]):]
	}
	parts := strings.Split(cell, " / ")
	if len(parts) != 1 && len(parts) != len(row.Flags) {
		return row, fmt.Errorf("README.md:%d: %d defaults for %d flags", n, len(parts), len(row.Flags))
	}
	for i := range row.Flags {
		d, err := parseDefault(parts[min(i, len(parts)-1)])
		if err != nil {
			return row, fmt.Errorf("README.md:%d: %w", n, err)
		}
		d.Only = only
		row.Defaults = append(row.Defaults, d)
	}
	return row, nil
}

func parseDefault(s string) (Default, error) {
	switch {
	case strings.HasPrefix(s, "see "):
		return Default{}, nil
	case strings.HasPrefix(s, "empty"), strings.HasPrefix(s, "none"):
		return Default{Checked: true}, nil
	case strings.HasPrefix(s, "`"):
		d := Default{Checked: true, Value: quoted.FindStringSubmatch(s)[1]}
		for _, m := range overrideFor.FindAllStringSubmatch(s, -1) {
			if d.For == nil {
				d.For = map[string]string{}
			}
			d.For[m[1]] = m[2]
		}
		return d, nil
	}
	return Default{}, fmt.Errorf("default %q: want `value`, empty, none or see ...", s)
}

// Check holds component's flags, as fs has them, against the table:
// each flag a row names for the component must be in fs with the row's
// default, and each flag of fs must be in a row or in elsewhere, the flags
// docs/security.md describes instead (each must appear there as `-name`,
// and not in the table too).
func (d Docs) Check(component string, fs *flag.FlagSet, elsewhere []string) []error {
	inTable := map[string]bool{}
	var wild []string
	errs := d.checkRows(component, fs, inTable, &wild)
	for _, name := range elsewhere {
		if fs.Lookup(name) == nil {
			errs = append(errs, fmt.Errorf("%s has no flag -%s, yet lists it as documented in docs/security.md", component, name))
		}
		if !regexp.MustCompile("`-" + regexp.QuoteMeta(name) + "[ `=]").MatchString(d.Security) {
			errs = append(errs, fmt.Errorf("docs/security.md does not describe %s's -%s (as `-%s`)", component, name, name))
		}
		if inTable[name] {
			errs = append(errs, fmt.Errorf("%s -%s is in README.md's table: drop it from the list of flags documented elsewhere", component, name))
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if inTable[f.Name] || slices.Contains(elsewhere, f.Name) || slices.ContainsFunc(wild, func(p string) bool { return strings.HasPrefix(f.Name, p) }) {
			return
		}
		errs = append(errs, fmt.Errorf("%s -%s is documented neither in README.md's flag table nor in the list of flags docs/security.md describes", component, f.Name))
	})
	return errs
}

// checkRows checks the flags the rows name for component, noting them in
// inTable and the prefixes of wildcards in wild.
func (d Docs) checkRows(component string, fs *flag.FlagSet, inTable map[string]bool, wild *[]string) []error {
	var errs []error
	for _, row := range d.Rows {
		if !slices.Contains(row.Components, component) {
			continue
		}
		for i, name := range row.Flags {
			if prefix, ok := strings.CutSuffix(name, "*"); ok {
				*wild = append(*wild, prefix)
				if !hasPrefixed(fs, prefix) {
					errs = append(errs, fmt.Errorf("README.md:%d: %s has no flag -%s*", row.Line, component, prefix))
				}
				continue
			}
			inTable[name] = true
			f := fs.Lookup(name)
			if f == nil {
				errs = append(errs, fmt.Errorf("README.md:%d: %s has no flag -%s", row.Line, component, name))
				continue
			}
			if want, ok := row.Defaults[i].of(component); ok && !same(want, f.DefValue) {
				errs = append(errs, fmt.Errorf("README.md:%d: %s -%s: the table says default %q, the flag's is %q", row.Line, component, name, want, f.DefValue))
			}
		}
	}
	return errs
}

// of is the default the row gives component, and whether it gives one.
func (d Default) of(component string) (string, bool) {
	if !d.Checked || (d.Only != "" && d.Only != component) {
		return "", false
	}
	if v, ok := d.For[component]; ok {
		return v, true
	}
	return d.Value, true
}

func hasPrefixed(fs *flag.FlagSet, prefix string) bool {
	found := false
	fs.VisitAll(func(f *flag.Flag) { found = found || strings.HasPrefix(f.Name, prefix) })
	return found
}

// same compares a documented default with a flag's: durations by value
// (the table writes 168h, the flag 168h0m0s).
func same(doc, def string) bool {
	if doc == def {
		return true
	}
	a, errA := time.ParseDuration(doc)
	b, errB := time.ParseDuration(def)
	return errA == nil && errB == nil && a == b
}

package explorer

import "strings"

// csvRows is a CSV file of replies without its query line.
func csvRows(s string) string {
	if strings.HasPrefix(s, "# ") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}

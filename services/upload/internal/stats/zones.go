package stats

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The connector writes its last upload's time with Java's
// SimpleDateFormat("E, dd MMM yyyy HH:mm:ss z") in its JVM's default zone
// and locale. `z` prints the zone's short name where Java has one (CET,
// EST, IST, ...), else "GMT+hh:mm"; `E` and `MMM` print the locale's day and
// month names ("Mon", "Nov"; in German "Mo.", "Nov." or, before Java 9's
// CLDR data, "Mo", "Nov", "Mrz").

// zones are the short names Java prints, and their offsets in seconds east
// of UTC. A name Java uses for more than one zone lists every offset
// (ambiguous, below). MEZ and MESZ are the German locale's CET and CEST.
var zones = map[string][]int{
	"GMT": {0}, "UT": {0}, "UTC": {0}, "Z": {0}, "WET": {0}, "GMT0": {0}, "UCT": {0},
	"CET": {h(1)}, "MEZ": {h(1)}, "MET": {h(1)}, "WEST": {h(1)}, "WAT": {h(1)},
	"CEST": {h(2)}, "MESZ": {h(2)}, "MEST": {h(2)}, "EET": {h(2)}, "CAT": {h(2)}, "SAST": {h(2)},
	"EEST": {h(3)}, "MSK": {h(3)}, "EAT": {h(3)}, "TRT": {h(3)},
	"GST": {h(4)}, "AZT": {h(4)}, "GET": {h(4)}, "AMT": {h(4)},
	"IRST": {h(3) + 30*60}, "AFT": {h(4) + 30*60},
	"PKT": {h(5)}, "UZT": {h(5)}, "YEKT": {h(5)},
	"NPT": {h(5) + 45*60}, "BDT": {h(6)}, "ALMT": {h(6)}, "MMT": {h(6) + 30*60},
	"ICT": {h(7)}, "WIB": {h(7)}, "KRAT": {h(7)},
	"HKT": {h(8)}, "SGT": {h(8)}, "AWST": {h(8)}, "PHT": {h(8)}, "WITA": {h(8)}, "MYT": {h(8)}, "IRKT": {h(8)},
	"JST": {h(9)}, "KST": {h(9)}, "WIT": {h(9)}, "YAKT": {h(9)},
	"ACST": {h(9) + 30*60}, "ACDT": {h(10) + 30*60},
	"AEST": {h(10)}, "VLAT": {h(10)}, "CHST": {h(10)},
	"AEDT": {h(11)}, "NZST": {h(12)}, "NZDT": {h(13)},
	"EST": {h(-5)}, "EDT": {h(-4)}, "CDT": {h(-5)}, "MST": {h(-7)}, "MDT": {h(-6)},
	"PST": {h(-8)}, "PDT": {h(-7)}, "AKST": {h(-9)}, "AKDT": {h(-8)}, "HST": {h(-10)}, "HDT": {h(-9)},
	"ADT": {h(-3)}, "NST": {h(-3) - 30*60}, "NDT": {h(-2) - 30*60},
	"BRT": {h(-3)}, "ART": {h(-3)}, "UYT": {h(-3)}, "CLT": {h(-4)}, "CLST": {h(-3)},
	"COT": {h(-5)}, "PET": {h(-5)}, "ECT": {h(-5)}, "VET": {h(-4)}, "BOT": {h(-4)}, "PYT": {h(-4)},
	"SST": {h(-11)}, "AZOT": {h(-1)}, "CVT": {h(-1)},
	"BST": {h(1)},
	// Ambiguous: Java prints IST for Asia/Kolkata, Asia/Jerusalem and
	// Europe/Dublin in summer, CST for America/Chicago and Asia/Shanghai,
	// AST for America/Halifax and Asia/Riyadh.
	"IST": {h(5) + 30*60, h(2), h(1)},
	"CST": {h(8), h(-6)},
	"AST": {h(3), h(-4)},
}

func h(n int) int { return n * 3600 }

// months are the month names and abbreviations Java prints in English and
// German (CLDR and the older JRE data), lower-cased, without a trailing dot.
var months = map[string]time.Month{}

func init() {
	for m, names := range [...][]string{
		{"jan", "january", "januar", "jän", "jänner"},
		{"feb", "february", "februar"},
		{"mar", "march", "mär", "märz", "mrz"},
		{"apr", "april"},
		{"may", "mai"},
		{"jun", "june", "juni"},
		{"jul", "july", "juli"},
		{"aug", "august"},
		{"sep", "sept", "september"},
		{"oct", "october", "okt", "oktober"},
		{"nov", "november"},
		{"dec", "december", "dez", "dezember"},
	} {
		for _, n := range names {
			months[n] = time.Month(m + 1)
		}
	}
}

// javaDate is SimpleDateFormat's "E, dd MMM yyyy HH:mm:ss z" in any of
// those locales: an optional day name (ignored: the date says it), day,
// month name, four-digit year, time, zone.
var javaDate = regexp.MustCompile(`^(?:[\pL.]{1,12},? )?(\d{1,2})\.? ([\pL]{3,9})\.? (\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))? (\S{1,12})$`)

// gmtOffset is "GMT+01:00" as Java prints a zone without a short name, and
// the forms people write by hand: UTC instead of GMT, no colon, no minutes.
var gmtOffset = regexp.MustCompile(`^(?:GMT|UTC|UT)([+-])(\d{1,2})(?::?(\d{2}))?$`)

// zoneOffsets reads a zone: a short name from the table, a GMT offset or an
// RFC 822 offset (+0100). Ambiguous names give every candidate.
func zoneOffsets(z string) ([]int, bool) {
	if offs, ok := zones[strings.ToUpper(z)]; ok {
		return offs, true
	}
	if m := gmtOffset.FindStringSubmatch(strings.ToUpper(z)); m != nil {
		return offset(m[1], m[2], m[3])
	}
	if len(z) == 5 && (z[0] == '+' || z[0] == '-') {
		return offset(z[:1], z[1:3], z[3:])
	}
	return nil, false
}

func offset(sign, hh, mm string) ([]int, bool) {
	hours, err := strconv.Atoi(hh)
	if err != nil || hours > 14 {
		return nil, false
	}
	minutes := 0
	if mm != "" {
		if minutes, err = strconv.Atoi(mm); err != nil || minutes > 59 {
			return nil, false
		}
	}
	s := hours*3600 + minutes*60
	if sign == "-" {
		s = -s
	}
	return []int{s}, true
}

// parseJava reads the connector's form. Of an ambiguous zone's readings it
// takes the earliest instant: the next incremental upload then starts
// early and sends a few patients again, where a late start would skip
// the changes in between without a word.
func parseJava(s string) (time.Time, bool) {
	m := javaDate.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	month, ok := months[strings.ToLower(m[2])]
	if !ok {
		return time.Time{}, false
	}
	offs, ok := zoneOffsets(m[7])
	if !ok {
		return time.Time{}, false
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	day, year, hour, minute, sec := n(m[1]), n(m[3]), n(m[4]), n(m[5]), n(m[6])
	if day < 1 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, false
	}
	wall := time.Date(year, month, day, hour, minute, min(sec, 59), 0, time.UTC)
	if wall.Day() != day {
		// 31 Nov: time.Date would roll it over to 1 Dec.
		return time.Time{}, false
	}
	return earliest(wall, offs), true
}

// earliest is the earliest instant wall (read as UTC) names in any of the
// zones offs.
func earliest(wall time.Time, offs []int) time.Time {
	largest := offs[0]
	for _, o := range offs[1:] {
		largest = max(largest, o)
	}
	return wall.Add(-time.Duration(largest) * time.Second)
}

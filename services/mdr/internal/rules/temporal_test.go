package rules

import (
	"testing"
)

func TestCheckDates(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name:   "DIN_5008 MM.yyyy",
			v:      validation("DATE", "DIN_5008"),
			valid:  []string{"12.2020", "01.1999", "02.2000", " 12.2020 "},
			reject: []string{"13.2020", "00.2020", "1.2020", "12.20", "2020-12", "24.12.2020", "12.2020x", "12/2020", ""},
		},
		{
			name: "DIN_5008_WITH_DAYS dd.MM.yyyy",
			v:    validation("DATE", "DIN_5008_WITH_DAYS"),
			valid: []string{
				"29.02.2020", // leap year
				"29.02.2000", // divisible by 400
				"31.12.1999", "01.01.2000", "30.04.2021", "31.01.2021",
			},
			reject: []string{
				"31.02.2020", "30.02.2020", "29.02.2019", "29.02.1900", // no such day
				"31.04.2021", "32.01.2020", "00.01.2020", "01.00.2020", "01.13.2020",
				"1.2.2020", // day and month must have two digits
				"01.02.20", // year must have four digits
				"2020-02-29", "02/29/2020", "29.02.2020 12:00", "", "heute",
			},
		},
		{
			name:   "DIN_5008_ONLY_YEAR",
			v:      validation("DATE", "DIN_5008_ONLY_YEAR"),
			valid:  []string{"2020", "1900", "0001"},
			reject: []string{"20", "202", "20201", "2020.", "year", ""},
		},
		{
			name:   "ISO_8601 yyyy-MM",
			v:      validation("DATE", "ISO_8601"),
			valid:  []string{"2020-02", "1999-12", "2000-01"},
			reject: []string{"2020-2", "2020-13", "2020-00", "02.2020", "2020-02-01", "2020/02", ""},
		},
		{
			name:   "ISO_8601_WITH_DAYS yyyy-MM-dd",
			v:      validation("DATE", "ISO_8601_WITH_DAYS"),
			valid:  []string{"2020-02-29", "1999-12-31", "2021-04-30"},
			reject: []string{"2019-02-29", "2020-02-30", "2020-04-31", "2020-4-01", "2020-04-1", "29.02.2020", "2020-02-29T00:00:00", ""},
		},
		{
			name:   "LOCAL_DATE is yyyy-MM-dd",
			v:      validation("DATE", "LOCAL_DATE"),
			valid:  []string{"2020-02-29"},
			reject: []string{"2019-02-29", "29.02.2020"},
		},
		{
			name:   "format names are case-insensitive and trimmed",
			v:      validation("DATE", " din_5008_with_days "),
			valid:  []string{"29.02.2020"},
			reject: []string{"31.02.2020"},
		},
	})
}

func TestCheckTimes(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name:   "HOURS_24 HH:mm",
			v:      validation("TIME", "HOURS_24"),
			valid:  []string{"00:00", "23:59", "13:45", "09:05", " 13:45 "},
			reject: []string{"24:00", "12:60", "1345", "13:45:00", "01:45 PM", "13:5", "9:30", "-1:00", "13.45", ""},
		},
		{
			name:   "HOURS_24_WITH_SECONDS HH:mm:ss",
			v:      validation("TIME", "HOURS_24_WITH_SECONDS"),
			valid:  []string{"00:00:00", "23:59:59", "13:45:00"},
			reject: []string{"23:59", "23:59:60", "24:00:00", "13:45:00.123", "13:45:00,5", "1:45:00", ""},
		},
		{
			name:   "HOURS_12 hh:mm a",
			v:      validation("TIME", "HOURS_12"),
			valid:  []string{"12:00 AM", "12:00 PM", "01:30 PM", "11:59 pm", "09:15 am"},
			reject: []string{"13:00 PM", "00:30 AM", "01:30", "01:30PM", "1:30 PM", "01:30 XM", "13:30", "01:30:00 PM", ""},
		},
		{
			name:   "HOURS_12_WITH_SECONDS hh:mm:ss a",
			v:      validation("TIME", "HOURS_12_WITH_SECONDS"),
			valid:  []string{"11:59:59 PM", "12:00:00 am"},
			reject: []string{"11:59 PM", "11:59:60 PM", "11:59:59", "11:59:59.5 PM", ""},
		},
	})
}

func TestCheckDateTime(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name: "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS",
			v:    validation("DATETIME", "DIN_5008_WITH_DAYS; HOURS_24_WITH_SECONDS"),
			valid: []string{
				"24.12.2019 13:45:00",
				"24.12.2019; 13:45:00", // separated as in the validation data
				"24.12.2019;13:45:00",
				" 29.02.2020 00:00:00 ",
			},
			reject: []string{
				"24.12.2019 13:45", "24.12.2019T13:45:00", "2019-12-24 13:45:00",
				"31.02.2019 13:45:00", "24.12.2019 25:00:00", "24.12.2019", "13:45:00",
				"13:45:00 24.12.2019", "", "24.12.2019 13:45:00 extra",
			},
		},
		{
			name:   "no space after the semicolon in the validation data",
			v:      validation("DATETIME", "ISO_8601_WITH_DAYS;HOURS_24"),
			valid:  []string{"2019-12-24 13:45"},
			reject: []string{"2019-12-24 13:45:00", "24.12.2019 13:45"},
		},
		{
			name:   "12-hour clock",
			v:      validation("DATETIME", "ISO_8601_WITH_DAYS; HOURS_12"),
			valid:  []string{"2019-12-24 01:45 PM", "2019-12-24 01:45 pm", "2019-12-24; 01:45 PM"},
			reject: []string{"2019-12-24 13:45", "2019-12-24 13:45 PM", "2019-12-24 01:45"},
		},
	})
}

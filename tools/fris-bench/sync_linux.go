package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fdatasync flushes f's data (and only the metadata needed to read it back),
// as bbolt does for its pages on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// blockDevice finds the /proc/diskstats name of the device holding dir.
func blockDevice(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return ""
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	f, err := os.Open("/proc/diskstats")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) >= 3 && fl[0] == strconv.FormatUint(uint64(major), 10) && fl[1] == strconv.FormatUint(uint64(minor), 10) {
			return fl[2]
		}
	}
	return ""
}

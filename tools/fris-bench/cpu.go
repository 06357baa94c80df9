package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuWatch reads the CPU time (user+system) this process and the watched
// ones (by pid, from /proc; Linux only) have used, so a run can say how much
// CPU each process spent per request. On a machine whose cores are shared by
// the load generator and the servers, that is what bounds throughput.
type cpuWatch struct {
	procs []watched
}

type watched struct {
	name string
	pid  int
	// tree: the process and its children, living and reaped (a database
	// server whose backends come and go), "name=+pid" in -watch.
	tree bool
}

// selfName is this process: the load generator, plus the baseline server
// during baseline runs.
const selfName = "fris-bench"

// clockTick is USER_HZ, the unit of /proc/PID/stat times; 100 on every
// Linux architecture Go supports.
const clockTick = 100

// parseWatch reads "name=pid,name=+pid" (+: with its children).
func parseWatch(s string) (*cpuWatch, error) {
	w := &cpuWatch{}
	if strings.TrimSpace(s) == "" {
		return w, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, pid, ok := strings.Cut(strings.TrimSpace(part), "=")
		tree := strings.HasPrefix(pid, "+")
		n, err := strconv.Atoi(strings.TrimPrefix(pid, "+"))
		if !ok || name == "" || err != nil || n <= 0 {
			return nil, fmt.Errorf("-watch: %q is not name=pid", part)
		}
		if _, err := procCPU(n); err != nil {
			return nil, fmt.Errorf("-watch %s: %w", name, err)
		}
		w.procs = append(w.procs, watched{name, n, tree})
	}
	return w, nil
}

// otherName is every other process on the machine: what the whole machine
// spent (/proc/stat) less this process and the watched ones. On a shared
// machine it shows how much a run was disturbed.
const otherName = "other"

// names lists the processes of the bench, this one first.
func (w *cpuWatch) names() []string {
	out := []string{selfName}
	for _, p := range w.procs {
		out = append(out, p.name)
	}
	return out
}

type cpuSample map[string]time.Duration

func (w *cpuWatch) sample() cpuSample {
	if w == nil {
		return nil
	}
	s := cpuSample{}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s[selfName] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	ours, complete := s[selfName], true
	for _, p := range w.procs {
		d, err := procCPU(p.pid)
		if p.tree {
			d, err = treeCPU(p.pid)
		}
		if err != nil {
			complete = false
			continue
		}
		s[p.name] = d
		ours += d
	}
	if all, err := machineCPU(); err == nil && complete {
		s[otherName] = all - ours
	}
	return s
}

// perRequest is the CPU each process spent between before and s, in
// microseconds per request.
func (s cpuSample) perRequest(before cpuSample, requests uint64) map[string]float64 {
	if s == nil || requests == 0 {
		return nil
	}
	out := map[string]float64{}
	for name, d := range s {
		if b, ok := before[name]; ok {
			// The machine's and the processes' clocks tick apart, so the rest
			// of an idle machine can come out a little below zero.
			out[name] = max(0, float64(d-b)/float64(time.Microsecond)/float64(requests))
		}
	}
	return out
}

// machineCPU reads the busy time of all CPUs from /proc/stat.
func machineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, errors.New("/proc/stat: unexpected format")
	}
	var busy uint64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, errors.New("/proc/stat: unexpected format")
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clockTick, nil
}

// procCPU reads utime+stime of pid from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return f.utime + f.stime, nil
}

// treeCPU is the CPU of pid and its children: its own, what its reaped
// children used (cutime+cstime), and what its living children used so far,
// with their own reaped children.
func treeCPU(pid int) (time.Duration, error) {
	root, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	sum := root.utime + root.stime + root.cutime + root.cstime
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range dir {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		// A child may exit between the listing and the read: then its time
		// is in the root's cutime at the next sample, a small error.
		if c, err := procStat(n); err == nil && c.ppid == pid {
			sum += c.utime + c.stime + c.cutime + c.cstime
		}
	}
	return sum, nil
}

type statFields struct {
	ppid                         int
	utime, stime, cutime, cstime time.Duration
}

// procStat reads the parent and the CPU times of pid from /proc/PID/stat.
func procStat(pid int) (statFields, error) {
	var out statFields
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return out, err
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return out, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), f[1] the parent; utime, stime, cutime and
	// cstime are fields 14 to 17.
	if len(f) < 15 {
		return out, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	var v [4]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[11+i], 10, 64)
		if err != nil {
			return out, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
		}
		v[i] = n
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return out, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	tick := func(n uint64) time.Duration { return time.Duration(n) * time.Second / clockTick }
	return statFields{ppid: ppid, utime: tick(v[0]), stime: tick(v[1]), cutime: tick(v[2]), cstime: tick(v[3])}, nil
}

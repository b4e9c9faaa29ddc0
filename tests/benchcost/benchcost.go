/*
Copyright 2026 The credo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package benchcost tells what an operation costs the local control plane,
// for benchmarks: the requests kube-apiserver served, by verb and resource
// (deltas of its apiserver_request_total, so every client counts: the
// controller, the benchmark's own driver, anything else running), and on
// Linux the CPU time of kube-apiserver, etcd and the benchmark's process
// (with any controller it runs in-process), read from /proc.
//
// With CREDO_BENCH_APISERVER_PROFILE=<dir>, each measured part also takes a
// CPU profile of kube-apiserver (its /debug/pprof/profile, for the first
// CREDO_BENCH_APISERVER_PROFILE_SECONDS of the part, default 8) and Report
// writes it to <dir>/<op>.pprof, for `go tool pprof -top`: the proof of
// where kube-apiserver's share of an operation goes.
package benchcost

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Meter holds the counters read when the measured part began.
type Meter struct {
	cfg      *rest.Config
	requests map[string]float64
	cpu      map[string]float64
	// extra are processes (by pid) outside this one whose CPU counts too,
	// named as they are reported.
	extra map[string]int
	// profile delivers kube-apiserver's CPU profile of the part, when
	// asked for.
	profile chan []byte
}

// Start reads kube-apiserver's request counters through cfg and the CPU
// times now.
func Start(b testing.TB, cfg *rest.Config) *Meter {
	b.Helper()
	m := &Meter{cfg: cfg, extra: map[string]int{}}
	m.requests, m.cpu = m.readRequests(b), m.readCPU()
	if os.Getenv("CREDO_BENCH_APISERVER_PROFILE") != "" {
		m.profile = make(chan []byte, 1)
		go m.profileAPIServer(b)
	}
	return m
}

// ProfileSeconds is CREDO_BENCH_APISERVER_PROFILE_SECONDS, how long a CPU
// profile of a benchmark's part runs, or def when unset or not a number.
func ProfileSeconds(def string) string {
	if v := os.Getenv("CREDO_BENCH_APISERVER_PROFILE_SECONDS"); v != "" {
		if _, err := strconv.Atoi(v); err == nil {
			return v
		}
	}
	return def
}

// profileAPIServer sends kube-apiserver's CPU profile of the next seconds
// (nil if it could not be read).
func (m *Meter) profileAPIServer(b testing.TB) {
	seconds := ProfileSeconds("8")
	raw, err := kubernetes.NewForConfigOrDie(m.cfg).RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", seconds).DoRaw(context.Background())
	if err != nil {
		b.Logf("reading kube-apiserver's CPU profile: %v", err)
		raw = nil
	}
	m.profile <- raw
}

// Process counts the CPU time of the process pid (a controller run as its
// own process) under name from now on.
func (m *Meter) Process(name string, pid int) {
	m.extra[name] = pid
	if m.cpu != nil {
		m.cpu[name] = processSeconds(pid)
	}
}

// Cost is what n operations cost since Start.
type Cost struct {
	// Requests are kube-apiserver's requests per operation by "verb resource".
	Requests map[string]float64
	// Total is the sum of Requests.
	Total float64
	// CPUms is the CPU milliseconds per operation by process: kube-apiserver,
	// etcd, "test" (this process) and those given to Process.
	CPUms map[string]float64
	// Profile is kube-apiserver's CPU profile of the part, when asked for.
	Profile []byte
}

// Stop returns the cost of each of n operations since Start.
func (m *Meter) Stop(b testing.TB, n int) Cost {
	b.Helper()
	requests, cpu := m.readRequests(b), m.readCPU()
	c := Cost{Requests: map[string]float64{}, CPUms: map[string]float64{}}
	for k, v := range requests {
		if d := (v - m.requests[k]) / float64(n); d > 0 {
			c.Requests[k] = d
			c.Total += d
		}
	}
	for name, v := range cpu {
		if before, ok := m.cpu[name]; ok {
			c.CPUms[name] = (v - before) / float64(n) * 1000
		}
	}
	if m.profile != nil {
		c.Profile = <-m.profile
	}
	return c
}

// Report logs the requests per op by verb and resource (those of at least
// 0.01 per op) and reports the total and the CPU per op as metrics named
// after op ("api-requests/rotation", "apiserver-cpu-ms/rotation", ...).
func (c Cost) Report(b *testing.B, op string) {
	b.Helper()
	b.Logf("kube-apiserver requests per %s:\n%s", op, c.String())
	b.ReportMetric(c.Total, "api-requests/"+op)
	if dir := os.Getenv("CREDO_BENCH_APISERVER_PROFILE"); dir != "" && c.Profile != nil {
		path := filepath.Join(dir, strings.ReplaceAll(op, "/", "-")+".pprof")
		if err := os.WriteFile(path, c.Profile, 0o644); err != nil {
			b.Logf("writing kube-apiserver's CPU profile: %v", err)
		} else {
			b.Logf("kube-apiserver's CPU profile of %s: %s", op, path)
		}
	}
	for name, v := range c.CPUms {
		unit := name + "-cpu-ms/" + op
		if name == "kube-apiserver" {
			unit = "apiserver-cpu-ms/" + op
		}
		b.ReportMetric(v, unit)
	}
}

// String lists the requests per operation, most frequent first.
func (c Cost) String() string {
	var lines []string
	for k, v := range c.Requests {
		if v >= 0.01 {
			lines = append(lines, fmt.Sprintf("%8.2f %s", v, k))
		}
	}
	slices.Sort(lines)
	slices.Reverse(lines)
	return strings.Join(lines, "\n")
}

// readRequests returns kube-apiserver's apiserver_request_total summed by
// verb, group and resource[/subresource].
func (m *Meter) readRequests(b testing.TB) map[string]float64 {
	b.Helper()
	raw, err := kubernetes.NewForConfigOrDie(m.cfg).RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("reading kube-apiserver's metrics: %v", err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		series, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labelsText, value, ok := strings.Cut(series, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for kv := range strings.SplitSeq(labelsText, ",") {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = strings.Trim(v, `"`)
		}
		resource := labels["resource"]
		if labels["group"] != "" {
			resource += "." + labels["group"]
		}
		if labels["subresource"] != "" {
			resource += "/" + labels["subresource"]
		}
		out[labels["verb"]+" "+resource] += v
	}
	return out
}

// readCPU returns the CPU seconds of this process ("test"), of its
// children by command name (kube-apiserver, etcd) and of the processes
// given to Process; nil elsewhere than on Linux.
func (m *Meter) readCPU() map[string]float64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	out := map[string]float64{"test": processSeconds(self)}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		name, ppid, secs, ok := stat(pid)
		if ok && ppid == self && (name == "kube-apiserver" || name == "etcd") {
			out[name] += secs
		}
	}
	for name, pid := range m.extra {
		out[name] = processSeconds(pid)
	}
	return out
}

func processSeconds(pid int) float64 {
	_, _, secs, _ := stat(pid)
	return secs
}

// stat reads a process's command name, parent and user+system CPU seconds.
func stat(pid int) (name string, ppid int, secs float64, ok bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, 0, false
	}
	// pid (comm) state ppid ... utime stime: fields 14 and 15.
	s := string(raw)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, 0, false
	}
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 13 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return s[open+1 : closing], ppid, (utime + stime) / 100, true // USER_HZ
}

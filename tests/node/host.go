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

package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// sysctls kubelet and the CNI bridge plugin change, put back by Restore.
var sysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes", "net/ipv4/ip_forward",
	"net/ipv4/conf/all/route_localnet", "net/netfilter/nf_conntrack_max", "net/netfilter/nf_conntrack_tcp_be_liberal",
}

var iptablesTables = []string{"filter", "nat", "mangle"}

// hostPaths are directories kubelet and the CRI create outside their own
// directories whatever they are told; Restore removes those that did not
// exist before.
var hostPaths = []string{"/var/log/containers", "/var/log/pods", "/var/lib/kubelet", "/var/run/netns"}

// HostState is what a node changes on the machine outside its directory,
// recorded before it starts so Restore can undo exactly what it added:
// iptables rules and chains, network namespaces, links, cgroups, sysctls.
type HostState struct {
	rules   map[string][]string // "iptables nat" → iptables -S lines
	netns   map[string]bool
	cgroups map[string]bool
	sysctls map[string]string
	paths   map[string]bool
}

// SnapshotHost records the machine's state.
func SnapshotHost() (*HostState, error) {
	h := &HostState{rules: map[string][]string{}, sysctls: map[string]string{}}
	for _, bin := range []string{"iptables", "ip6tables"} {
		for _, t := range iptablesTables {
			lines, err := iptablesRules(bin, t)
			if err != nil {
				return nil, err
			}
			h.rules[bin+" "+t] = lines
		}
	}
	h.netns = dirSet("/var/run/netns")
	h.paths = map[string]bool{}
	for _, p := range hostPaths {
		if _, err := os.Stat(p); err == nil {
			h.paths[p] = true
		}
	}
	h.cgroups = cgroupSet()
	for _, s := range sysctls {
		b, err := os.ReadFile("/proc/sys/" + s)
		if err == nil {
			h.sysctls[s] = strings.TrimSpace(string(b))
		}
	}
	return h, nil
}

func iptablesRules(bin, table string) ([]string, error) {
	out, err := exec.Command(bin, "-w", "-t", table, "-S").Output()
	if err != nil {
		return nil, fmt.Errorf("%s -t %s -S: %w", bin, table, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

func dirSet(dir string) map[string]bool {
	set := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		set[e.Name()] = true
	}
	return set
}

// cgroupSet lists the kubepods cgroups (kubelet's cgroupfs driver creates
// one per hierarchy).
func cgroupSet() map[string]bool {
	set := map[string]bool{}
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	more, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods.slice")
	for _, m := range append(matches, more...) {
		set[m] = true
	}
	return set
}

// Restore removes what was added since the snapshot: the bridge, iptables
// rules and chains, network namespaces, kubepods cgroups, and puts the
// sysctls back. Processes must be stopped first.
func (h *HostState) Restore() error {
	var errs []error
	for _, bin := range []string{"iptables", "ip6tables"} {
		for _, t := range iptablesTables {
			errs = append(errs, restoreRules(bin, t, h.rules[bin+" "+t]))
		}
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		if out, err := exec.Command("ip", "link", "del", Bridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link del %s: %w: %s", Bridge, err, out))
		}
	}
	for name := range dirSet("/var/run/netns") {
		if h.netns[name] {
			continue
		}
		p := filepath.Join("/var/run/netns", name)
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
		errs = append(errs, os.Remove(p))
	}
	for _, p := range hostPaths {
		if !h.paths[p] {
			unmountUnder(p)
			errs = append(errs, os.RemoveAll(p))
		}
	}
	for cg := range cgroupSet() {
		if !h.cgroups[cg] {
			errs = append(errs, removeCgroup(cg))
		}
	}
	for s, v := range h.sysctls {
		b, _ := os.ReadFile("/proc/sys/" + s)
		if strings.TrimSpace(string(b)) != v {
			errs = append(errs, os.WriteFile("/proc/sys/"+s, []byte(v), 0o644))
		}
	}
	return errors.Join(errs...)
}

// restoreRules deletes the rules added since (every "-A" line not in
// before), then the chains added since.
func restoreRules(bin, table string, before []string) error {
	had := map[string]bool{}
	for _, l := range before {
		had[l] = true
	}
	now, err := iptablesRules(bin, table)
	if err != nil {
		return err
	}
	var errs []error
	var chains []string
	for _, l := range now {
		if had[l] {
			continue
		}
		switch {
		case strings.HasPrefix(l, "-A "):
			args := append([]string{"-w", "-t", table, "-D"}, splitRule(strings.TrimPrefix(l, "-A "))...)
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, out))
			}
		case strings.HasPrefix(l, "-N "):
			chains = append(chains, strings.TrimPrefix(l, "-N "))
		}
	}
	for _, c := range chains {
		_ = exec.Command(bin, "-w", "-t", table, "-F", c).Run()
	}
	for _, c := range chains {
		if out, err := exec.Command(bin, "-w", "-t", table, "-X", c).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s -t %s -X %s: %w: %s", bin, table, c, err, out))
		}
	}
	return errors.Join(errs...)
}

// splitRule splits an iptables -S line into arguments, keeping quoted
// strings (comments) whole.
func splitRule(s string) []string {
	var args []string
	var cur strings.Builder
	inQuote, escaped, started := false, false, false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && inQuote:
			escaped = true
		case r == '"':
			inQuote = !inQuote
			started = true
		case r == ' ' && !inQuote:
			if started {
				args = append(args, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		args = append(args, cur.String())
	}
	return args
}

// removeCgroup removes a cgroup directory tree, deepest first.
func removeCgroup(root string) error {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var errs []error
	for _, d := range dirs {
		if err := syscall.Rmdir(d); err != nil {
			errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// killShims kills the containerd shims serving socket and every process
// under them (the containers), which outlive containerd.
func killShims(socket string) {
	children := map[int][]int{}
	var shims []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + p.Name() + "/stat"); err == nil {
			// pid (comm) state ppid ...
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				f := strings.Fields(string(stat)[i+1:])
				if len(f) > 1 {
					ppid, _ := strconv.Atoi(f[1])
					children[ppid] = append(children[ppid], pid)
				}
			}
		}
		cmdline, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 0 && strings.Contains(args[0], "containerd-shim") && strings.Contains(string(cmdline), socket) {
			shims = append(shims, pid)
		}
	}
	var kill func(int)
	kill = func(pid int) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for _, c := range children[pid] {
			kill(c)
		}
	}
	for _, s := range shims {
		kill(s)
	}
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mounts []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			mounts = append(mounts, fields[4])
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
}

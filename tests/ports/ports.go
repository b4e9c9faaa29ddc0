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

// Package ports hands out loopback TCP ports for the processes the tests
// start (Flux controllers, credo's binaries, the database engines), which
// bind an address given on their command line and so cannot be handed an
// open listener.
//
// A port found by listening on 127.0.0.1:0 and closing the listener is free
// only for a moment: the kernel hands the same ephemeral range to every other
// listen on port 0 and to every outgoing connection on the machine, and with
// a dozen test packages starting processes at once another one can take the
// port before the child binds it. Ports here come from below the kernel's
// ephemeral range, where it never picks one itself, and each is reserved
// across processes by an flock that the test process holds until it exits.
package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

const (
	// lowest is the first port handed out.
	lowest = 10000
	// minimum is the fewest ports below the ephemeral range worth using;
	// with fewer, ports come from the ephemeral range as before.
	minimum = 2000
)

var (
	mu sync.Mutex
	// held are the lock files of the ports handed out; closing one would
	// release its port to other processes, so none is ever closed.
	held []*os.File
)

// Addr returns "127.0.0.1:<port>" for a port reserved by Free.
func Addr() (string, error) {
	p, err := Free()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// Free returns a port on 127.0.0.1 that nothing listens on and that no
// other caller of Free, in this process or another, is handed while this
// process runs.
func Free() (int, error) {
	first, err := ephemeralStart()
	if err != nil || first-lowest < minimum {
		return ephemeral()
	}
	dir := filepath.Join(os.TempDir(), "credo-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, fmt.Errorf("creating the port lock directory: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	n := first - lowest
	start := rand.IntN(n)
	for i := range n {
		p := lowest + (start+i)%n
		if reserve(dir, p) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port in [%d, %d)", lowest, first)
}

// reserve takes port p's lock and checks that nothing outside the tests
// listens on it.
func reserve(dir string, p int) bool {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		f.Close()
		return false
	}
	if err := l.Close(); err != nil {
		f.Close()
		return false
	}
	held = append(held, f)
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range.
func ephemeralStart() (int, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, errors.New("unexpected ip_local_port_range")
	}
	return strconv.Atoi(fields[0])
}

// ephemeral is the fallback: a port the kernel picked, free a moment ago.
func ephemeral() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

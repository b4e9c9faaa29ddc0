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

package ports

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestPortsAreBelowTheEphemeralRangeAndNeverHandedOutTwice asks for many
// ports in this process and in a second one at the same time: none repeats,
// none is in the range the kernel hands to listen(:0) and outgoing
// connections, and each can be bound.
func TestPortsAreBelowTheEphemeralRangeAndNeverHandedOutTwice(t *testing.T) {
	if os.Getenv("CREDO_PORTS_CHILD") != "" {
		for range 200 {
			p, err := Free()
			if err != nil {
				t.Fatal(err)
			}
			os.Stdout.WriteString(strconv.Itoa(p) + "\n")
		}
		// Hold the ports (their locks go when this process exits) until the
		// parent has taken its own: it closes our stdin then.
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
	first, err := ephemeralStart()
	if err != nil {
		t.Fatalf("reading the ephemeral range: %v", err)
	}
	if first-lowest < minimum {
		t.Fatalf("this machine's ephemeral range starts at %d, too low for the test", first)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestPortsAreBelowTheEphemeralRangeAndNeverHandedOutTwice$")
	child.Env = append(os.Environ(), "CREDO_PORTS_CHILD=1")
	var out strings.Builder
	child.Stdout = &out
	// The child holds its ports until this closes its stdin: a child that
	// exited early would release them to the parent, and the test would
	// report its own race as a port handed out twice.
	hold, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for range 200 {
		p, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if p < lowest || p >= first {
			t.Fatalf("port %d is outside [%d, %d)", p, lowest, first)
		}
		if _, dup := seen[p]; dup {
			t.Fatalf("port %d handed out twice in one process", p)
		}
		seen[p] = "parent"
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d cannot be bound: %v", p, err)
		}
		l.Close()
	}
	hold.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	n := 0
	for _, line := range strings.Fields(out.String()) {
		p, err := strconv.Atoi(line)
		if err != nil {
			continue // the test binary's own PASS line
		}
		n++
		if who, dup := seen[p]; dup {
			t.Fatalf("port %d handed out to the child and to the %s", p, who)
		}
		seen[p] = "child"
	}
	if n != 200 {
		t.Fatalf("the child handed out %d ports, want 200", n)
	}
}

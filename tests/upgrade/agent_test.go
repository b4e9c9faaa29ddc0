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

package upgrade

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/tests/controlplane"
)

// agentProcs are the running credo-agent processes, by hostname.
var agentProcs = map[string]*controlplane.Process{}

// startAgent runs bin's credo-agent as a process, enrolling with token
// (read from a file: never on a command line or in a log) against server,
// verified with caFile. Its Workload's hostname is name.example.org, which
// it returns.
func startAgent(t *testing.T, g Gomega, name, bin, server, caFile, token string) string {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	g.Expect(os.WriteFile(tokenFile, []byte(token), 0o600)).To(Succeed())
	hostname := name + ".example.org"
	p, err := env.StartProcess(name, filepath.Join(bin, "credo-agent"), nil,
		"--server="+server, "--ca-file="+caFile, "--token-file="+tokenFile,
		"--state-dir="+filepath.Join(dir, "state"), "--hostname="+hostname, "--log-level=debug")
	g.Expect(err).NotTo(HaveOccurred())
	agentProcs[hostname] = p
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	return hostname
}

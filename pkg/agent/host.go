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

package agent

import (
	"fmt"
	"os"
	"strings"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// bootIDFile holds the Linux kernel's random id of the current boot: two
// running copies of one cloned image never share it.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// hostname is Config.Hostname, or the system's.
func (a *Agent) hostname() (string, error) {
	if a.cfg.Hostname != "" {
		return a.cfg.Hostname, nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("finding the hostname: %w", err)
	}
	return h, nil
}

// host is what the agent tells the server of its host with each
// certificate request: the server records it beside the certificate, and
// in a duplicate-identity record it tells the copies of a cloned host
// apart. It authenticates nothing; what cannot be read is left out.
func (a *Agent) host() *enrollapi.Host {
	h := &enrollapi.Host{}
	h.Hostname, _ = a.hostname()
	if b, err := os.ReadFile(bootIDFile); err == nil {
		if id := strings.TrimSpace(string(b)); len(id) <= enrollapi.MaxBootIDLength {
			h.BootID = id
		}
	}
	return h
}

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

package benchcost

import (
	"os"
	"testing"
)

// Processes measures CPU time alone, with no control plane: this process's
// ("test") and that of the processes it is given. It is Meter for a
// benchmark of a server that needs no kube-apiserver, such as a peer
// certificate authority run beside credo's.
type Processes struct {
	pids  map[string]int
	start map[string]float64
}

// StartProcesses reads the CPU times of this process and of pids (by the
// name they are reported under) now.
func StartProcesses(pids map[string]int) *Processes {
	p := &Processes{pids: pids}
	p.start = p.read()
	return p
}

// Stop returns the CPU milliseconds of each of n operations since
// StartProcesses, by process; the Cost has no requests. Elsewhere than on
// Linux it is empty.
func (p *Processes) Stop(n int) Cost {
	c := Cost{Requests: map[string]float64{}, CPUms: map[string]float64{}}
	for name, v := range p.read() {
		if before, ok := p.start[name]; ok {
			c.CPUms[name] = (v - before) / float64(n) * 1000
		}
	}
	return c
}

// read returns the CPU seconds of this process and of p's processes; nil
// without /proc.
func (p *Processes) read() map[string]float64 {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil
	}
	out := map[string]float64{"test": processSeconds(os.Getpid())}
	for name, pid := range p.pids {
		out[name] = processSeconds(pid)
	}
	return out
}

// ReportCPU reports the CPU per op of each process as a metric named after
// both ("step-ca-cpu-ms/sign"): Report without kube-apiserver's requests.
func (c Cost) ReportCPU(b *testing.B, op string) {
	b.Helper()
	for name, v := range c.CPUms {
		b.ReportMetric(v, name+"-cpu-ms/"+op)
	}
}

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

package accessapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/credo-dev/credo/internal/verifier"
)

// BenchmarkCostPerMint mints sha256-hex accounts as BenchmarkMint does and
// reports what one mint costs the control plane, to tell where the time
// goes on a machine the processes share:
//
//   - the requests kube-apiserver served per mint, by verb and resource
//     (deltas of its apiserver_request_total: the access API server's own
//     calls, the reconciler's reactions, everything else running; the
//     proxied mint itself is not counted there);
//   - on Linux, the CPU time per mint of kube-apiserver, etcd and this test
//     process (the access API server, the reconciler and the clients).
//
// Run it with a fixed -benchtime (e.g. 2000x): the figures are per mint.
func BenchmarkCostPerMint(b *testing.B) {
	runMints(b, mintLoad{format: verifier.SHA256Hex, clients: benchClients, cost: &mintCost{}})
}

// mintCost holds the counters read when the timed part begins.
type mintCost struct {
	requests map[string]float64
	cpu      map[string]float64
}

func (c *mintCost) begin(b *testing.B) {
	c.requests, c.cpu = apiRequests(b), processCPU()
}

func (c *mintCost) end(b *testing.B) {
	requests, cpu := apiRequests(b), processCPU()
	n := float64(b.N)
	var total float64
	var lines []string
	for k, v := range requests {
		d := v - c.requests[k]
		total += d
		if d/n >= 0.01 {
			lines = append(lines, fmt.Sprintf("%6.2f %s", d/n, k))
		}
	}
	slices.Sort(lines)
	slices.Reverse(lines)
	b.Logf("kube-apiserver requests per mint (b.N=%d):\n%s", b.N, strings.Join(lines, "\n"))
	b.ReportMetric(total/n, "api-requests/mint")
	for name, unit := range map[string]string{"kube-apiserver": "apiserver-cpu-ms/mint", "etcd": "etcd-cpu-ms/mint", "": "test-cpu-ms/mint"} {
		if v, ok := cpu[name]; ok {
			b.ReportMetric((v-c.cpu[name])/n*1000, unit)
		}
	}
}

// apiRequests returns kube-apiserver's apiserver_request_total summed by
// verb, group and resource[/subresource].
func apiRequests(b *testing.B) map[string]float64 {
	raw, err := kubernetes.NewForConfigOrDie(env.Config).RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
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

// processCPU returns the user and system CPU seconds of this process
// (under "") and of its children by command name (kube-apiserver, etcd),
// read from /proc; nil elsewhere than on Linux.
func processCPU() map[string]float64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	out := map[string]float64{}
	for _, e := range entries {
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime stime: fields 14 and 15.
		stat := string(raw)
		open, closing := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
		if open < 0 || closing < open {
			continue
		}
		name, fields := stat[open+1:closing], strings.Fields(stat[closing+1:])
		if len(fields) < 13 {
			continue
		}
		switch {
		case e.Name() == self:
			name = ""
		case fields[1] != self:
			continue
		}
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		out[name] += (utime + stime) / 100 // USER_HZ
	}
	return out
}

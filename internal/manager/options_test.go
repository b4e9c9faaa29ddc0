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

package manager

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/credo-dev/credo/internal/shard"
)

func parse(t *testing.T, args ...string) (*Options, *pflag.FlagSet) {
	t.Helper()
	var o Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &o, fs
}

func TestWatchLabelSelectorFlag(t *testing.T) {
	g := NewWithT(t)
	o, fs := parse(t, "--watch-label-selector=sharding.fluxcd.io/key=shard1")
	s, err := o.Shard()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Sharded()).To(BeTrue())
	g.Expect(s.String()).To(Equal(shard.Key + "=shard1"))
	g.Expect(fs.Lookup("watch-all-namespaces")).To(BeNil(), "credo serves every namespace")
	g.Expect(fs.Lookup("watch-configs-label-selector")).To(BeNil(), "credo reads Secrets whatever their labels")

	o, _ = parse(t)
	s, err = o.Shard()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Sharded()).To(BeFalse(), "no flag: unsharded")

	o, _ = parse(t, "--watch-label-selector=a=b=c")
	_, err = o.Shard()
	g.Expect(err).To(HaveOccurred())
}

func TestLeaderElectionIDPerShard(t *testing.T) {
	g := NewWithT(t)
	unsharded, _ := parse(t)
	main, _ := parse(t, "--watch-label-selector=!sharding.fluxcd.io/key")
	shard1, _ := parse(t, "--watch-label-selector=sharding.fluxcd.io/key=shard1")
	shard2, _ := parse(t, "--watch-label-selector=sharding.fluxcd.io/key=shard2")
	g.Expect(unsharded.LeaderElectionID("trust-controller")).To(Equal("trust-controller-leader-election"),
		"an unsharded controller keeps the lease it always had")
	ids := map[string]bool{}
	for _, o := range []*Options{unsharded, main, shard1, shard2} {
		id := o.LeaderElectionID("trust-controller")
		g.Expect(id).To(HavePrefix("trust-controller-leader-election"))
		g.Expect(len(id)).To(BeNumerically("<=", 63), "a lease name is a DNS label")
		ids[id] = true
	}
	g.Expect(ids).To(HaveLen(4), "each shard elects its own leader")
}

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

package account

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

func TestGeneratePasswordIsLongAndRandom(t *testing.T) {
	g := NewWithT(t)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		p, err := GeneratePassword()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(len(p)).To(BeNumerically(">=", 32))
		g.Expect(seen[p]).To(BeFalse())
		seen[p] = true
	}
}

func TestHistoryKeepsTheLastTen(t *testing.T) {
	g := NewWithT(t)
	var h History
	for i := 0; i < 12; i++ {
		h = h.Append(credv1.OriginMinted, "user-"+string(rune('a'+i)), time.Unix(int64(i), 0))
	}
	g.Expect(h).To(HaveLen(10))
	g.Expect(h[0].By).To(Equal("user-c"))
	back := ParseHistory(h.String())
	g.Expect(back).To(HaveLen(10))
	g.Expect(back[9].By).To(Equal("user-l"))
	g.Expect(ParseHistory("not json")).To(BeEmpty())
}

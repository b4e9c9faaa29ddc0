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

package credentials

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

func TestRewriteGuard(t *testing.T) {
	const uid = types.UID("release-uid")
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	// putBack writes item n times, a minute apart from at, as if someone
	// removed it before each write, and returns the rewrites counted.
	putBack := func(g *rewriteGuard, item string, at time.Time, n int) int {
		total := 0
		for i := range n {
			now := at.Add(time.Duration(i) * time.Minute)
			if c, _ := g.contested(uid, now, item); c != "" {
				return total
			}
			total += g.wrote(uid, now, item)
		}
		return total
	}
	for _, tc := range []struct {
		name   string
		assert func(g Gomega, w *rewriteGuard)
	}{
		{"a first placement is no rewrite", func(g Gomega, w *rewriteGuard) {
			g.Expect(putBack(w, "a", t0, 1)).To(Equal(0))
		}},
		{"three rewrites within the window are written, the fourth is contested once", func(g Gomega, w *rewriteGuard) {
			g.Expect(putBack(w, "a", t0, 4)).To(Equal(maxRewrites))
			item, fresh := w.contested(uid, t0.Add(5*time.Minute), "a")
			g.Expect(item).To(Equal("a"))
			g.Expect(fresh).To(BeTrue())
			item, fresh = w.contested(uid, t0.Add(6*time.Minute), "a")
			g.Expect(item).To(Equal("a"))
			g.Expect(fresh).To(BeFalse(), "one Warning per contest")
			item, _ = w.contested(uid, t0.Add(time.Hour), "a")
			g.Expect(item).To(Equal("a"), "a contest does not end on a timer")
		}},
		{"rewrites older than the window do not count", func(g Gomega, w *rewriteGuard) {
			n := 0
			for i := range 10 {
				now := t0.Add(time.Duration(i) * rewriteWindow / 2)
				c, _ := w.contested(uid, now, "a")
				g.Expect(c).To(BeEmpty(), "two rewrites per window stay under the bound")
				n += w.wrote(uid, now, "a")
			}
			g.Expect(n).To(Equal(9))
		}},
		{"finding it in place ends the contest", func(g Gomega, w *rewriteGuard) {
			putBack(w, "a", t0, 4)
			c, _ := w.contested(uid, t0.Add(5*time.Minute), "a")
			g.Expect(c).To(Equal("a"))
			w.held(uid, t0.Add(6*time.Minute), "a")
			c, _ = w.contested(uid, t0.Add(7*time.Minute), "a")
			g.Expect(c).To(BeEmpty())
		}},
		{"one item contested refuses the write of all", func(g Gomega, w *rewriteGuard) {
			putBack(w, "a", t0, 4)
			c, _ := w.contested(uid, t0.Add(5*time.Minute), platformLabelItem, "a")
			g.Expect(c).To(Equal("a"))
		}},
		{"what credo removed itself is no rewrite when written again", func(g Gomega, w *rewriteGuard) {
			putBack(w, "a", t0, 1)
			w.forget(uid, "a")
			g.Expect(putBack(w, "a", t0.Add(time.Minute), 1)).To(Equal(0))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.assert(NewWithT(t), &rewriteGuard{})
		})
	}
}

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

package trust

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testpki"
)

// A rule whose secretName is no Secret name for a release it selects (too
// long once the release name is in it; admission cannot know the release,
// whose name its author chooses) claims nothing for that release: the
// declared anchor of the release stays Ready instead of turning
// AmbiguousSource. The release is told by a Warning; the rule stays Ready
// for its other releases and counts it in ReleasesNotApplied without
// naming it. Fixed, the rule has nothing left to count.
func TestRuleWithAnImpossibleSecretNameForOneReleaseClaimsNothingForIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "postgres-main", "postgres", nil)
	env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	cert, _ := testpki.CA(t, "postgres-main-ca")
	env.NewSecret(t, ns, "postgres-main-tls", nil, nil, map[string][]byte{"ca.crt": cert})
	g.Expect(env.Client.Create(ctx, &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: "postgres-main", Namespace: ns},
		Spec:       trustv1.TrustAnchorSpec{Release: "postgres-main", Source: trustv1.SecretKeySource{Name: "postgres-main-tls"}},
	})).To(Succeed())
	anchorWith(g, ns, "postgres-main", ready)

	// 243 + "-" + 13 characters: 257, more than a Secret name may have;
	// with "pg", 246.
	ts := newRule(t, ns, trustv1.TrustSourceSpec{Chart: "postgres", SecretName: strings.Repeat("a", 243) + "-{release}"})
	ruleMatches(g, ts, 2)
	g.Consistently(func(g Gomega) {
		var ta trustv1.TrustAnchor
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "postgres-main"}, &ta)).To(Succeed())
		g.Expect(conditions.Get(&ta, trustv1.SourceUnavailableCondition)).To(BeNil())
		g.Expect(ready(&ta)).To(BeTrue())
	}, 3*time.Second, 100*time.Millisecond).Should(Succeed(), "the declared anchor is not knocked into AmbiguousSource")

	ev := env.ReleaseWarning(g, hr, trustv1.InvalidSecretNameReason)
	g.Expect(ev.Message).To(And(ContainSubstring("TrustSource "+ts.Name+" names the source Secret aaaa"),
		ContainSubstring("must be no more than 253 characters"), ContainSubstring("it claims nothing for the release")))
	ts = notApplied(g, ts, trustv1.InvalidSecretNameReason)
	g.Expect(conditions.GetMessage(ts, trustv1.ReleasesNotAppliedCondition)).To(HavePrefix("1 release(s) not applied in full (InvalidSecretName 1)"))
	statusNamesNone(g, ts, ns, "postgres-main")
	g.Expect(conditions.IsStalled(ts)).To(BeFalse())
	anchorWith(g, ns, "pg", func(ta *trustv1.TrustAnchor) bool { return ta.Status.TrustSource == ts.Name })

	// Fixed to name the declared source: one claim of one Secret, the
	// anchor stays Ready, and the rule has nothing left to count.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)).To(Succeed())
	ts.Spec.SecretName = "{release}-tls"
	g.Expect(env.Client.Update(ctx, ts)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ruleMatches(g, ts, 2)
		g.Expect(conditions.Get(ts, trustv1.ReleasesNotAppliedCondition)).To(BeNil())
		g.Expect(conditions.GetMessage(ts, meta.ReadyCondition)).To(Equal("rule matches 2 release(s)"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	anchorWith(g, ns, "postgres-main", ready)
}

// A secretName stored before admission checked it names no Secret for
// any release: the rule says why.
func TestSecretNameTemplateErrors(t *testing.T) {
	cases := map[string]struct{ secretName, want string }{
		"a valid template":     {"{release}-ca", ""},
		"no placeholder":       {"shared-ca", `secretName "shared-ca" does not contain {release}: it would name one Secret for every release`},
		"upper case":           {"{release}-CA", `secretName "{release}-CA" is not a Secret name once {release} is replaced: `},
		"another placeholder":  {"{release}-{namespace}", `secretName "{release}-{namespace}" is not a Secret name once {release} is replaced: `},
		"a leading separator ": {"-{release}", `secretName "-{release}" is not a Secret name once {release} is replaced: `},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := secretNameTemplateError(&trustv1.TrustSource{Spec: trustv1.TrustSourceSpec{SecretName: tc.secretName}})
			if tc.want == "" {
				NewWithT(t).Expect(got).To(BeEmpty())
				return
			}
			NewWithT(t).Expect(got).To(HavePrefix(tc.want))
		})
	}
}

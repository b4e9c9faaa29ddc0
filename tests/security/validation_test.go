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

package security

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// dryRun creates obj as the platform administrator without storing it:
// kube-apiserver validates it against the installed CRD, CEL included.
func dryRun(obj client.Object) error {
	return env.Client.Create(context.Background(), obj, client.DryRunAll)
}

func trustSource(spec trustv1.TrustSourceSpec) *trustv1.TrustSource {
	return &trustv1.TrustSource{ObjectMeta: metav1.ObjectMeta{GenerateName: "rule-"}, Spec: spec}
}

// A TrustSource's secretName must make a Secret name of every release
// name: only lower-case alphanumerics, '-', '.' and {release}, which it
// must contain, in the shape of a DNS subdomain.
func TestTrustSourceSecretNameMustFormASecretName(t *testing.T) {
	for _, tc := range []struct {
		name, secretName string
		valid            bool
	}{
		{"a suffix", "{release}-ca", true},
		{"a prefix and a dotted suffix", "ca-{release}.cert", true},
		{"the release alone", "{release}", true},
		{"no placeholder", "postgres-ca", false},
		{"an underscore", "{release}_ca", false},
		{"a slash", "{release}/ca", false},
		{"upper case", "{release}-CA", false},
		{"a misspelt placeholder", "{Release}-ca", false},
		{"a leading dash", "-{release}", false},
		{"a trailing dot", "{release}.", false},
		{"an empty label", "{release}..ca", false},
		{"an unknown placeholder", "{release}-{namespace}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := dryRun(trustSource(trustv1.TrustSourceSpec{Chart: "postgres", SecretName: tc.secretName}))
			if tc.valid {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%q: want Invalid, got %v", tc.secretName, err)
			g.Expect(err.Error()).To(ContainSubstring("secretName"))
		})
	}
}

// What CEL can check of a label selector is checked at admission: the
// operator, and values present exactly for In and NotIn. The rest (the
// syntax of keys and values) is the trust-controller's to refuse, with
// Stalled and InvalidSelector.
func TestTrustSourceSelectorsAreBoundedAtAdmission(t *testing.T) {
	req := func(op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "engine", Operator: op, Values: values}}}
	}
	for _, tc := range []struct {
		name  string
		sel   *metav1.LabelSelector
		valid bool
	}{
		{"In with values", req(metav1.LabelSelectorOpIn, "pg"), true},
		{"Exists without values", req(metav1.LabelSelectorOpExists), true},
		{"labels only", &metav1.LabelSelector{MatchLabels: map[string]string{"engine": "pg"}}, true},
		{"an unknown operator", req("Bogus"), false},
		{"In without values", req(metav1.LabelSelectorOpIn), false},
		{"NotIn without values", req(metav1.LabelSelectorOpNotIn), false},
		{"Exists with values", req(metav1.LabelSelectorOpExists, "pg"), false},
		{"DoesNotExist with values", req(metav1.LabelSelectorOpDoesNotExist, "pg"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, field := range []string{"releaseSelector", "namespaceSelector"} {
				g := NewWithT(t)
				spec := trustv1.TrustSourceSpec{Chart: "postgres", SecretName: "{release}-ca"}
				if field == "releaseSelector" {
					spec.ReleaseSelector = tc.sel
				} else {
					spec.NamespaceSelector = tc.sel
				}
				err := dryRun(trustSource(spec))
				if tc.valid {
					g.Expect(err).NotTo(HaveOccurred(), field)
					continue
				}
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: want Invalid, got %v", field, err)
				g.Expect(err.Error()).To(ContainSubstring(field))
			}
		})
	}
}

// A TrustAnchor is named after its release: the trust-controller keys
// every reconcile by the release, so an anchor of another name would never
// be reconciled, and would claim the release's projection beside the real
// one.
func TestTrustAnchorMustBeNamedAfterItsRelease(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	anchor := func(name, release string) *trustv1.TrustAnchor {
		return &trustv1.TrustAnchor{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       trustv1.TrustAnchorSpec{Release: release, Source: trustv1.SecretKeySource{Name: release + "-ca"}},
		}
	}
	g.Expect(dryRun(anchor("pg", "pg"))).To(Succeed())
	err := dryRun(anchor("pg-anchor", "pg"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("named after its release"))
}

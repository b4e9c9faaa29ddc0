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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
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

// The Webhook format and account source take the shape every Kubernetes
// webhook takes (clientConfig: url or service, caBundle; timeoutSeconds),
// bounded: exactly one of url and service, an https URL without a query,
// fragment or user information, and a webhook with kind Webhook. Applied
// with strict field validation, as kubectl applies: a field the CRD does
// not know is refused, not dropped.
func TestWebhookShapesFollowWebhookClientConfig(t *testing.T) {
	ns := newNamespace(t)
	url := func(s string) *credv1.WebhookClientConfig { return &credv1.WebhookClientConfig{URL: &s} }
	service := &credv1.WebhookClientConfig{Service: &credv1.WebhookService{Namespace: "hashing", Name: "verifier", Path: ptr.To("/hash")},
		CABundle: testCA(t, "verifier")}
	both := &credv1.WebhookClientConfig{URL: ptr.To("https://hash.example"), Service: &credv1.WebhookService{Namespace: "hashing", Name: "verifier"}}
	withPath := func(path string) *credv1.WebhookClientConfig {
		return &credv1.WebhookClientConfig{Service: &credv1.WebhookService{Namespace: "hashing", Name: "verifier", Path: &path}}
	}
	account := func(cc *credv1.WebhookClientConfig) *credv1.CredentialAccount {
		f := credv1.Format{Name: "custom", Kind: credv1.FormatWebhook}
		if cc != nil {
			f.Webhook = &credv1.WebhookFormat{ClientConfig: *cc, TimeoutSeconds: ptr.To[int32](5)}
		}
		return &credv1.CredentialAccount{ObjectMeta: metav1.ObjectMeta{GenerateName: "hook-", Namespace: ns},
			Spec: credv1.CredentialAccountSpec{Release: "db", Username: "app", Format: f}}
	}
	source := func(cc *credv1.WebhookClientConfig) *credv1.AccountSource {
		entry := credv1.AccountSourceEntry{Kind: credv1.SourceWebhook, Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}}}
		if cc != nil {
			entry.Webhook = &credv1.WebhookSource{ClientConfig: *cc, TimeoutSeconds: ptr.To[int32](5)}
		}
		return &credv1.AccountSource{ObjectMeta: metav1.ObjectMeta{GenerateName: "hook-"},
			Spec: credv1.AccountSourceSpec{Chart: "postgres", Sources: []credv1.AccountSourceEntry{entry}}}
	}
	for _, tc := range []struct {
		name   string
		config *credv1.WebhookClientConfig
		// refused is a part of the refusal's message; "" when admitted.
		refused string
	}{
		{"a URL", url("https://hash.example:8443/verifier"), ""},
		{"a Service with a caBundle", service, ""},
		{"both a URL and a Service", both, "exactly one of url or service"},
		{"neither", &credv1.WebhookClientConfig{}, "exactly one of url or service"},
		{"no webhook at all", nil, "webhook is required for kind Webhook"},
		{"an http URL", url("http://hash.example/verifier"), "absolute https:// URL"},
		{"a URL without a host", url("https:///verifier"), "absolute https:// URL"},
		{"a URL with a query", url("https://hash.example/verifier?format=x"), "query or a fragment"},
		{"a URL with a fragment", url("https://hash.example/verifier#x"), "query or a fragment"},
		{"a URL with user information", url("https://user@hash.example/verifier"), "user information"},
		{"a Service path not starting with /", withPath("hash"), "spec.format.webhook.clientConfig.service.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			for _, obj := range []client.Object{account(tc.config), source(tc.config)} {
				err := env.Client.Create(context.Background(), obj, client.DryRunAll, client.FieldValidation("Strict"))
				if tc.refused == "" {
					g.Expect(err).NotTo(HaveOccurred(), "%T", obj)
					continue
				}
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%T: want Invalid, got %v", obj, err)
				want := tc.refused
				if _, ok := obj.(*credv1.AccountSource); ok {
					want = strings.Replace(want, "spec.format.webhook", "spec.sources[0].webhook", 1)
				}
				g.Expect(err.Error()).To(ContainSubstring(want), "%T", obj)
			}
		})
	}

	// A Service's port defaults to 443, as in admissionregistration.k8s.io.
	g := NewWithT(t)
	acct := account(service)
	g.Expect(env.Client.Create(context.Background(), acct, client.DryRunAll, client.FieldValidation("Strict"))).To(Succeed())
	g.Expect(acct.Spec.Format.Webhook.ClientConfig.Service.Port).To(Equal(ptr.To[int32](443)))
}

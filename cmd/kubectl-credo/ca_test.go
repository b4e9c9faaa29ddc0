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

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/tests/testpki"
)

// On the real API server, as a user who may only get TrustAnchors (no
// Secret): `kubectl credo ca <release>` prints the anchor's certificates,
// exactly the PEM the projection holds, fit for `> ca.crt`; an anchor not
// yet projected and a release without an anchor are clear errors.
func TestCAPrintsTheAnchorsCertificatesWithoutASecretRead(t *testing.T) {
	env := controlPlane(t)
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "ca-demo"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	caPEM, _ := testpki.CA(t, "pg-ca")
	bundle, err := pem.Parse(caPEM)
	g.Expect(err).NotTo(HaveOccurred())
	for _, release := range []string{"pg", "search"} {
		g.Expect(env.Client.Create(ctx, &trustv1.TrustAnchor{
			ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns},
			Spec:       trustv1.TrustAnchorSpec{Release: release, Source: trustv1.SecretKeySource{Name: release + "-ca"}},
		})).To(Succeed())
	}
	// The status the trust-controller writes, including the re-encoded bundle.
	status := &unstructured.Unstructured{}
	status.SetGroupVersionKind(trustv1.GroupVersion.WithKind(trustv1.TrustAnchorKind))
	status.SetNamespace(ns)
	status.SetName("pg")
	g.Expect(unstructured.SetNestedField(status.Object, string(bundle.PEM), "status", "caBundle")).To(Succeed())
	g.Expect(unstructured.SetNestedField(status.Object, "pg"+trustv1.ProjectionSuffix, "status", "projectedSecret")).To(Succeed())
	g.Expect(env.Client.Status().Patch(ctx, status, client.Merge)).To(Succeed())

	path, err := env.WriteKubeconfig("carl", nil, "carl.kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "carl", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{trustv1.GroupVersion.Group}, Resources: []string{"trustanchors"}, Verbs: []string{"get"}}}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carl", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "carl"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carl"}}})).To(Succeed())

	var out bytes.Buffer
	g.Expect(run([]string{"ca", "pg", "-n", ns, "--kubeconfig", path}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(out.String()).To(Equal(string(bundle.PEM)))

	out.Reset()
	err = run([]string{"ca", "search", "-n", ns, "--kubeconfig", path}, strings.NewReader(""), &out)
	g.Expect(err).To(MatchError(ContainSubstring("has not projected a certificate yet")))
	g.Expect(out.String()).To(BeEmpty())

	err = run([]string{"ca", "nope", "-n", ns, "--kubeconfig", path}, strings.NewReader(""), &out)
	g.Expect(err).To(MatchError(ContainSubstring(`no TrustAnchor "nope" in ca-demo`)))
	g.Expect(out.String()).To(BeEmpty())
}

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

package metrics

import (
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

func TestEveryCounterMovesWithItsLabels(t *testing.T) {
	gr := schema.GroupResource{Group: "access.credo.dev", Resource: "mints"}
	for _, tc := range []struct {
		name   string
		record func()
		series prometheus.Counter
	}{
		{"a projection written counts in its namespace", func() { ProjectionWritten("tenant-a") },
			projectionsWritten.WithLabelValues("tenant-a")},
		{"a refused key counts by namespace and reason", func() { KeyRefused("tenant-a", "PrivateKeyDetected") },
			keysRefused.WithLabelValues("tenant-a", "PrivateKeyDetected")},
		{"a trust collision counts in its namespace", func() { TrustCollision("tenant-a") },
			trustCollisions.WithLabelValues("tenant-a")},
		{"an account Secret created counts in its namespace", func() { AccountSecretCreated("tenant-b") },
			accountSecretsCreated.WithLabelValues("tenant-b")},
		{"a platform rotation counts in its namespace", func() { AccountRotated("credo-system") },
			accountRotations.WithLabelValues("credo-system")},
		{"an account collision counts in its namespace", func() { AccountCollision("tenant-b") },
			accountCollisions.WithLabelValues("tenant-b")},
		{"a rewritten valuesFrom entry counts in its namespace", func() { ValuesFromRewritten("tenant-b") },
			valuesFromRewritten.WithLabelValues("tenant-b")},
		{"a swept record counts by namespace and reason", func() { RecordSwept("tenant-b", SweptNamespaceDeleted) },
			recordsSwept.WithLabelValues("tenant-b", SweptNamespaceDeleted)},
		{"a mint counts in its namespace", func() { Minted("tenant-b") }, mints.WithLabelValues("tenant-b")},
		{"a revocation counts in its namespace", func() { Revoked("tenant-b") }, revocations.WithLabelValues("tenant-b")},
		{"a forbidden mint counts with the status reason", func() {
			AccessRefused("tenant-b", OperationMint, apierrors.NewForbidden(gr, "app", errors.New("owner is the platform")))
		}, accessRefused.WithLabelValues("tenant-b", OperationMint, "Forbidden")},
		{"a conflicting revocation counts with the status reason", func() {
			AccessRefused("tenant-b", OperationRevoke, apierrors.NewConflict(gr, "app", errors.New("not created by credo")))
		}, accessRefused.WithLabelValues("tenant-b", OperationRevoke, "Conflict")},
		{"an error that is no API status counts as Unknown", func() {
			AccessRefused("tenant-b", OperationMint, errors.New("plain"))
		}, accessRefused.WithLabelValues("tenant-b", OperationMint, "Unknown")},
		{"an enrollment counts in its namespace", func() { Enrolled("tenant-c") }, enrollments.WithLabelValues("tenant-c")},
		{"a renewal counts in its namespace", func() { Renewed("tenant-c") }, renewals.WithLabelValues("tenant-c")},
		{"a refused enrollment counts by reason", func() { EnrollmentRefused("TokenExpired") },
			enrollmentRefused.WithLabelValues("TokenExpired")},
		{"a rate-limited attempt counts as RateLimited", func() { EnrollmentRefused("RateLimited") },
			enrollmentRefused.WithLabelValues("RateLimited")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before := testutil.ToFloat64(tc.series)
			tc.record()
			g.Expect(testutil.ToFloat64(tc.series)).To(Equal(before + 1))
		})
	}
}

func TestEveryCounterIsOnTheControllerRuntimeRegistry(t *testing.T) {
	g := NewWithT(t)
	for _, c := range Collectors() {
		err := crmetrics.Registry.Register(c)
		var already prometheus.AlreadyRegisteredError
		g.Expect(errors.As(err, &already)).To(BeTrue(), "collector %v is not registered: %v", c, err)
	}
}

func TestEveryCounterIsNamedCredoWithBoundedLabels(t *testing.T) {
	g := NewWithT(t)
	allowed := map[string]bool{labelNamespace: true, labelReason: true, labelOperation: true, labelAction: true, labelKind: true}
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range Collectors() {
		c.Describe(ch)
	}
	close(ch)
	n := 0
	for d := range ch {
		n++
		s := d.String()
		g.Expect(s).To(ContainSubstring(`fqName: "credo_`))
		g.Expect(s).To(ContainSubstring(`_total"`))
		start := strings.Index(s, "variableLabels: {")
		g.Expect(start).To(BeNumerically(">=", 0), s)
		labels := strings.TrimSuffix(s[start+len("variableLabels: {"):], "}}")
		for _, l := range strings.Split(labels, ",") {
			g.Expect(allowed).To(HaveKey(l), "%s has label %q", s, l)
		}
	}
	g.Expect(n).To(Equal(len(Collectors())))
}

func TestAnErrorMessageNeverBecomesALabel(t *testing.T) {
	g := NewWithT(t)
	const secret = "hunter2-very-secret"
	gr := schema.GroupResource{Group: "access.credo.dev", Resource: "mints"}
	AccessRefused("tenant-d", OperationMint, apierrors.NewBadRequest("password "+secret+" refused"))
	AccessRefused("tenant-d", OperationMint, apierrors.NewConflict(gr, "app", errors.New(secret)))

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collectors()...)
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	found := false
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				g.Expect(lp.GetValue()).NotTo(ContainSubstring(secret), "metric %s", mf.GetName())
				if mf.GetName() == "credo_access_refused_total" && lp.GetValue() == "tenant-d" {
					found = true
				}
			}
		}
	}
	g.Expect(found).To(BeTrue(), "the refusals of tenant-d were not gathered")
}

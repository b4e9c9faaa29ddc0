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

package enrollment

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestEveryReconcilerRecordsItsDurationAndDropsItWhenTheObjectIsGone(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		create func(t *testing.T, ns string) client.Object
	}{
		{enrollv1.EnrollmentPolicyKind, func(t *testing.T, ns string) client.Object {
			return newPolicy(t, ns, "vms")
		}},
		{enrollv1.WorkloadKind, func(t *testing.T, ns string) client.Object {
			newPolicy(t, ns, "vms")
			return newEnrolledWorkload(t, ns, "vms")
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			obj := tc.create(t, ns)
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })

			g.Eventually(func() uint64 {
				n, _ := env.DurationSamples(g, tc.kind, obj.GetNamespace(), obj.GetName())
				return n
			}, 30*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 1),
				"a reconcile of the %s is recorded in gotk_reconcile_duration_seconds", tc.kind)

			g.Expect(env.Client.Delete(context.Background(), obj)).To(Succeed())
			g.Eventually(func() bool {
				_, found := env.DurationSamples(g, tc.kind, obj.GetNamespace(), obj.GetName())
				return found
			}, 30*time.Second, 100*time.Millisecond).Should(BeFalse(),
				"the series of the deleted %s is dropped", tc.kind)
		})
	}
}

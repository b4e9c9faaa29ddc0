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
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

func TestEveryReconcilerRecordsItsDurationAndDropsItWhenTheObjectIsGone(t *testing.T) {
	env.RecordsDurationAndDropsIt(t, []testenv.DurationCase{
		{Kind: enrollv1.EnrollmentPolicyKind, Create: func(t *testing.T, ns string) client.Object {
			return newPolicy(t, ns, "vms")
		}},
		{Kind: enrollv1.WorkloadKind, Create: func(t *testing.T, ns string) client.Object {
			newPolicy(t, ns, "vms")
			return newEnrolledWorkload(t, ns, "vms")
		}},
	})
}

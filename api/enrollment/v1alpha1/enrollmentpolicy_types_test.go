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

package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRenewalDeadlineIsNotAfterPlusTheGrace(t *testing.T) {
	notAfter := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		grace *metav1.Duration
		want  time.Time
	}{
		{name: "the default grace", want: notAfter.Add(DefaultRenewalGrace)},
		{name: "a grace of 0s", grace: &metav1.Duration{}, want: notAfter},
		{name: "a grace over the maximum is capped", grace: &metav1.Duration{Duration: 2 * MaxRenewalGrace}, want: notAfter.Add(MaxRenewalGrace)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &EnrollmentPolicy{Spec: EnrollmentPolicySpec{RenewalGrace: tt.grace}}
			if got := p.RenewalDeadline(notAfter); !got.Equal(tt.want) {
				t.Errorf("RenewalDeadline(%s) = %s, want %s", notAfter, got, tt.want)
			}
		})
	}
}

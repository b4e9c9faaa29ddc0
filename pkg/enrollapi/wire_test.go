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

package enrollapi

import (
	"testing"
	"time"
)

func TestRenewalStartIsTheLastThirdRoundedUp(t *testing.T) {
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, life := range []time.Duration{3 * time.Hour, 24 * time.Hour, 10 * time.Nanosecond, time.Nanosecond} {
		got := RenewalStart(nb, nb.Add(life)).Sub(nb)
		if 3*got < 2*life || 3*(got-1) >= 2*life {
			t.Errorf("lifetime %s: renewal starts %s in, want the smallest d with 3d >= 2×lifetime", life, got)
		}
	}
	if got := RenewalStart(nb, nb.Add(-time.Hour)); !got.Equal(nb) {
		t.Errorf("an empty lifetime starts its renewal at notBefore, got %s", got)
	}
}

func TestParseWorkloadURIReturnsOnlyWorkloadIDs(t *testing.T) {
	const id = "0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60"
	if got, err := ParseWorkloadURI(WorkloadURI(id)); err != nil || got != id {
		t.Fatalf("ParseWorkloadURI(WorkloadURI(%q)) = %q, %v", id, got, err)
	}
	for _, bad := range []string{"", "someone-else", "a/b", "../x", "0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60-0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60"} {
		if got, err := ParseWorkloadURI(WorkloadURI(bad)); err == nil {
			t.Errorf("ParseWorkloadURI accepted %q as workload %q", WorkloadURI(bad), got)
		}
	}
}

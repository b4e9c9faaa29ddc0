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

package account

import "testing"

// The decision of what a platform account's Secret needs, case by case,
// and in the order the checks run: a lost kept password and an unanswered
// rotation come before a Secret being deleted, which comes before the
// stored value.
func TestDecidePlatformRepair(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state PlatformState
		want  PlatformRepair
	}{
		{"in line", PlatformState{Matches: true, KeptRotate: "r1", SecretRotate: "r1", Rotate: "r1"}, PlatformInLine},
		{"in line, never rotated", PlatformState{Matches: true}, PlatformInLine},
		{"the rotation answered is not recorded on the Secret", PlatformState{Matches: true, KeptRotate: "r2", SecretRotate: "r1", Rotate: "r2"}, PlatformRecordRotation},
		{"no kept password", PlatformState{KeptLost: true, Matches: true}, PlatformKeptLost},
		{"no kept password, while the Secret is being deleted", PlatformState{KeptLost: true, Deleting: true}, PlatformKeptLost},
		{"a rotation the kept password does not answer", PlatformState{Matches: true, KeptRotate: "r1", Rotate: "r2"}, PlatformRotate},
		{"a rotation asked while the Secret is being deleted", PlatformState{Deleting: true, Matches: true, Rotate: "r2"}, PlatformRotate},
		{"no rotation asked, the kept password answers one", PlatformState{Matches: true, KeptRotate: "r1", SecretRotate: "r1"}, PlatformInLine},
		{"deleting and holding the kept verifier", PlatformState{Deleting: true, Matches: true}, PlatformAwaitDeletion},
		{"deleting and holding another value", PlatformState{Deleting: true}, PlatformReclaim},
		{"another value stored", PlatformState{KeptRotate: "r1", SecretRotate: "r1", Rotate: "r1"}, PlatformRepairVerifier},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecidePlatformRepair(tc.state); got != tc.want {
				t.Errorf("DecidePlatformRepair(%+v) = %s, want %s", tc.state, got, tc.want)
			}
		})
	}
}

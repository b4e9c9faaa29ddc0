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

// PlatformRepair is what a platform account's Secret needs, as the
// credential-controller's check of it decides (DecidePlatformRepair); the
// controller carries it out through the Writer, with the events each one
// raises.
type PlatformRepair string

const (
	// PlatformInLine: the Secret holds the kept password's verifier and
	// records its rotation; nothing is written.
	PlatformInLine PlatformRepair = "InLine"
	// PlatformRecordRotation: the verifier is the kept password's; the
	// rotation it answers is recorded on the Secret.
	PlatformRecordRotation PlatformRepair = "RecordRotation"
	// PlatformKeptLost: no password is kept; a new one is generated.
	PlatformKeptLost PlatformRepair = "KeptLost"
	// PlatformRotate: a rotation is asked that the kept password does not
	// answer; a new one is generated.
	PlatformRotate PlatformRepair = "Rotate"
	// PlatformAwaitDeletion: the Secret is being deleted (its release
	// going) and holds the kept password's verifier; it is created again
	// once it is gone.
	PlatformAwaitDeletion PlatformRepair = "AwaitDeletion"
	// PlatformReclaim: the Secret is being deleted and holds another
	// value; it is replaced with the kept password's verifier.
	PlatformReclaim PlatformRepair = "Reclaim"
	// PlatformRepairVerifier: the stored value is not the kept password's
	// verifier (someone else wrote it); it is written again from the kept
	// password.
	PlatformRepairVerifier PlatformRepair = "RepairVerifier"
)

// PlatformState is what the check of a platform account's Secret read.
type PlatformState struct {
	// KeptLost: no kept password, or an empty one.
	KeptLost bool
	// Rotate is the account's spec.rotate; KeptRotate the rotation the
	// kept password answers; SecretRotate the one the Secret records.
	Rotate, KeptRotate, SecretRotate string
	// Matches: the Secret's stored value is the verifier of the kept
	// password.
	Matches bool
	// Deleting: the Secret is being deleted.
	Deleting bool
}

// DecidePlatformRepair decides what a platform account's Secret needs. The
// checks run in this order: a lost kept password, an unanswered rotation,
// a Secret being deleted, then the stored value.
func DecidePlatformRepair(s PlatformState) PlatformRepair {
	switch {
	case s.KeptLost:
		return PlatformKeptLost
	case s.Rotate != "" && s.Rotate != s.KeptRotate:
		return PlatformRotate
	case s.Deleting && s.Matches:
		return PlatformAwaitDeletion
	case s.Deleting:
		return PlatformReclaim
	case s.Matches && s.SecretRotate == s.KeptRotate:
		return PlatformInLine
	case s.Matches:
		return PlatformRecordRotation
	default:
		return PlatformRepairVerifier
	}
}

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

// Metadata keys of the events the trust-controller records on a
// TrustAnchor. Each starts with the API group: notification-controller
// forwards such a key with the prefix stripped ("release", "source", ...),
// and drops keys of other groups. None ever holds key material.
const (
	// EventReleaseKey is the HelmRelease the anchor belongs to.
	EventReleaseKey = "trust.credo.dev/release"
	// EventSourceKey is the source Secret the CA is read from.
	EventSourceKey = "trust.credo.dev/source"
	// EventSourceKeyKey is the key of the source Secret that is lifted.
	EventSourceKeyKey = "trust.credo.dev/sourceKey"
	// EventProjectionKey is the projected <release>.tenant-ca Secret.
	EventProjectionKey = "trust.credo.dev/projection"
	// EventLegKey is how the source was found: Declared, Label or TrustSource.
	EventLegKey = "trust.credo.dev/leg"
	// EventFingerprintKey is the projection's fingerprint (its revision),
	// on Projected events.
	EventFingerprintKey = "trust.credo.dev/fingerprint"
)

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

// Metadata keys of the events credo records on enrollment objects. Each
// starts with the API group: notification-controller forwards such a key
// with the prefix stripped ("policy", "token", ...), and drops keys of other
// groups. None ever holds a token's secret, a key or a certificate.
const (
	// EventPolicyKey is the EnrollmentPolicy of the token or workload.
	EventPolicyKey = "enrollment.credo.dev/policy"
	// EventTokenKey is the JoinToken (the token's id, never its secret).
	EventTokenKey = "enrollment.credo.dev/token"
	// EventRefusalKey is the reason the enrollment server answered the
	// agent with (enrollapi: TokenExpired, LabelsNotAllowed, ...).
	EventRefusalKey = "enrollment.credo.dev/refusal"
	// EventAddressKey is the client address of the refused request.
	EventAddressKey = "enrollment.credo.dev/address"
)

// EventMetadata is the metadata of the events recorded on the policy.
func (in *EnrollmentPolicy) EventMetadata() map[string]string {
	return map[string]string{EventPolicyKey: in.Name}
}

// EventMetadata is the metadata of the events recorded on the token: its
// policy and its id (the object's name; the secret is never stored).
func (in *JoinToken) EventMetadata() map[string]string {
	return map[string]string{EventPolicyKey: in.Spec.Policy, EventTokenKey: in.Name}
}

// EventMetadata is the metadata of the events recorded on the workload:
// its policy and the token it enrolled with.
func (in *Workload) EventMetadata() map[string]string {
	return map[string]string{EventPolicyKey: in.Spec.Policy, EventTokenKey: in.Spec.Token}
}

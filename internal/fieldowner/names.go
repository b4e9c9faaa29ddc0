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

package fieldowner

// The one name of each of credo's binaries: the field manager of every
// write it makes (its manager's client sets it, and its user agent names
// it, so a write without an explicit field owner carries it too), the
// reporting controller of its events, the prefix of its leader election
// lease, and its ServiceAccount in config/rbac.
const (
	// TrustController is the trust-controller's name.
	TrustController = "credo-trust-controller"
	// CredentialController is the credential-controller's name, which the
	// access API it serves writes under too.
	CredentialController = "credo-credential-controller"
	// EnrollmentController is the enrollment-controller's name, which the
	// enrollment listener and the CA it runs write under too.
	EnrollmentController = "credo-enrollment-controller"
	// Migrate is the field manager of kubectl credo migrate's report.
	Migrate = "credo-migrate"
	// Plugin is the field manager of what kubectl credo writes.
	Plugin = "kubectl-credo"
)

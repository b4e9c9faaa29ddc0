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

package devenv

import (
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// The demo tenant: config/samples' namespace, and the user Start binds to
// admin there (with credo's and Flux's roles aggregated), whose
// kubeconfig is Environment.DemoTenantKubeconfig.
const (
	DemoNamespace = "tenant-demo"
	DemoTenant    = "tenant-demo-admin"
)

// OnPurpose is a sample object that is not Ready by design: it shows one
// of credo's guards at work.
type OnPurpose struct {
	// Resource is the object's kind as kubectl names it (trustanchor).
	Resource string
	// Namespace is empty for a cluster-scoped object.
	Namespace string
	Name      string
	// Reason is the reason of its Ready condition.
	Reason string
	// Why says what the sample shows, in a line.
	Why string
}

// FailingOnPurpose are the objects of config/samples that are not Ready
// once the demo settled, and only they: make dev's welcome lists them so
// that a newcomer does not read them as a broken demo, and TestDocs checks
// that nothing else fails.
var FailingOnPurpose = []OnPurpose{
	{Resource: "trustanchor", Namespace: DemoNamespace, Name: "nats-bus", Reason: trustv1.NameCollisionReason,
		Why: "a Secret credo did not create holds nats-bus.tenant-ca: credo never overwrites it"},
	{Resource: "trustanchor", Namespace: DemoNamespace, Name: "search", Reason: trustv1.PrivateKeyDetectedReason,
		Why: "the source Secret search-ca carries a private key: credo never projects one"},
	{Resource: "credentialaccount", Namespace: DemoNamespace, Name: "maria-root", Reason: credv1.PlaintextExposedReason,
		Why: "tenant-demo-admin reads every Secret of tenant-demo: MariaDB's root plaintext is never written where a tenant reads it"},
	{Resource: "trustsource", Name: "percona-psmdb", Reason: trustv1.NoReleasesMatchedReason,
		Why: "the demo has no MongoDB release for the rule to match"},
	{Resource: "accountsource", Name: "mariadb-root-before-switch", Reason: credv1.NoReleasesMatchedReason,
		Why: "the demo has no MariaDB release a chart rendered before credo for the rule to match"},
}

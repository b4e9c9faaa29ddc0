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

// ContractKeys are the label and annotation keys of the trust-anchor
// contract under one domain: a Secret labelled PublishCACert "true" and
// Release "<release>" publishes, under the key its Key annotation names,
// the CA certificate of that release; every projection carries TenantCA.
// It is no API type: it is never serialized, so it has no json tags.
//
//nolint:kubeapilinter // jsontags: not an API type, never serialized.
type ContractKeys struct {
	// PublishCACert opts a Secret in: "<d>/publish-ca-cert" = "true".
	PublishCACert string
	// Release names the release the CA belongs to: "<d>/publish-ca-cert-release".
	Release string
	// Key annotation names the key to lift: "<d>/publish-ca-cert-key".
	Key string
	// TenantCA is stamped on every projection: "<d>/tenant-ca" = "true".
	TenantCA string
}

// NewContractKeys returns the contract keys under domain, e.g.
// internal.cozystack.io.
func NewContractKeys(domain string) ContractKeys {
	return ContractKeys{
		PublishCACert: domain + "/publish-ca-cert",
		Release:       domain + "/publish-ca-cert-release",
		Key:           domain + "/publish-ca-cert-key",
		TenantCA:      domain + "/tenant-ca",
	}
}

// PublishLabels are the labels that publish a Secret's CA for release.
func (k ContractKeys) PublishLabels(release string) map[string]string {
	return map[string]string{k.PublishCACert: "true", k.Release: release}
}

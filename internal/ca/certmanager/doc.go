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

// Package certmanager is a CertificateAuthority that hands signing to a
// cert-manager issuer: each Sign creates a cert-manager.io/v1
// CertificateRequest carrying the agent's CSR, waits until the issuer
// answers (Ready, Denied, Failed or InvalidRequest), deletes it, and
// checks what came back: the CSR's public key, exactly the one URI SAN
// asked for and nothing else, a certificate that verifies against the
// bundle. Approval is cert-manager's business (its approver, or a policy
// approver); this package only waits.
//
// The bundle peers must trust is read from a configured Secret or
// ConfigMap key (for a CA issuer, typically its CA Secret's ca.crt), cached
// for Options.RefreshAfter.
//
// Objects are unstructured: the cert-manager Go module is not a dependency.
// The controller needs create, get, watch and delete on
// certificaterequests.cert-manager.io in Options.Namespace, and get on the
// bundle's Secret or ConfigMap.
package certmanager

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

// Package embedded is the certificate authority built into the control
// plane: a CA key and certificate kept in one Secret in the controller's
// namespace, created on first start, rotated with an overlap, and published
// as a trust anchor by a TrustAnchor it declares (Anchor).
//
// # The Secret
//
// The Secret (type Opaque, default name credo-enrollment-ca) holds:
//
//   - tls.crt, tls.key: the current CA, the one that signs workload
//     certificates. The key is PEM (PKCS#8 when generated here).
//   - ca.crt: the trust bundle, the PEM certificates of every CA still
//     trusted: the current one first, then the previous ones whose overlap
//     has not ended, newest first. This is the only key the trust-anchor
//     machinery projects, and what Bundle returns.
//   - previous.key: present only during an overlap. The PEM private keys of
//     the previous CAs still in ca.crt, matched to their certificates by
//     public key. They sign nothing but the enrollment server's own serving
//     certificate (see ServingCertificate), and are dropped with their
//     certificate when the overlap ends.
//
// With a KeyStore (Options.Keys: a PKCS#11 token, package
// internal/ca/pkcs11) the keys are generated in the store and never leave
// it: the Secret holds tls.crt and ca.crt only, no tls.key and, once the
// overlap after moving into the store has ended, no previous.key. A CA
// certificate's Subject Key Identifier is the id of its key in the store,
// by which every replica finds it. A key generated for a write that lost a
// race (or was otherwise refused) is destroyed at once, and a previous CA's
// key when the CA leaves the bundle. After a write that failed without
// saying whether it was stored (a timeout, a 5xx), the Secret is read again
// and the key destroyed only when the Secret names another CA and the write
// can no longer land; otherwise it is kept (logged with its id): a key left
// in the store is unused, a destroyed key the Secret names is lost. A Secret that still holds tls.key is moved into
// the store by a rotation; its old key stays in previous.key until its
// overlap ends, as any previous CA's. Without a KeyStore, a Secret whose key
// is in one is refused: nothing replaces a key in a token by one in a
// Secret.
//
// Its annotations:
//
//   - enrollment.credo.dev/bundle: JSON list of {fingerprint, trustedUntil}
//     for each previous CA in ca.crt; fingerprint is "sha256:<hex>" of the
//     certificate's DER. A previous CA leaves ca.crt at trustedUntil.
//     Certificates in ca.crt that are neither the current CA nor listed here
//     are dropped on the next write: the Secret belongs to the controller.
//   - enrollment.credo.dev/rotate-requested-at: set it to any new value to
//     request a rotation (like Flux's reconcile.fluxcd.io/requestedAt);
//     enrollment.credo.dev/rotate-handled-at records the last value handled.
//
// Earlier versions labelled the Secret as a source of the trust-anchor
// label leg (<labelDomain>/publish-ca-cert and friends); those labels and
// the key annotation are removed on the next write.
//
// # The trust anchor
//
// The leader declares the TrustAnchor <release> (Options.Release, default
// credo) in the Secret's namespace, lifting ca.crt, with spec.owner
// TrustAnchor: the trust-controller projects <release>.tenant-ca,
// owner-referenced to that TrustAnchor, whether or not a HelmRelease of the
// name exists. The TrustAnchor carries the label enrollment.credo.dev/ca-anchor
// and the field manager credo-enrollment-controller; the anchors so marked
// under another name (the release was renamed) are deleted, and garbage
// collection deletes their projections. A controller switched to another
// CA (cert-manager) declares the same TrustAnchor with the other CA's
// bundle as its source (package anchor), so that the projection follows
// with no withdrawal. A TrustAnchor of the name declared by anyone else is
// never written or deleted.
//
// # Rotation
//
// A rotation generates a new CA that signs from then on; the previous CA
// stays in ca.crt (and keeps its key in previous.key or in the key store)
// for Options.Overlap, which must cover the longest workload certificate
// lifetime plus the renewal grace, so that every certificate the old CA
// signed expires, or is renewed by an agent that fetched the new bundle,
// before the old CA leaves the bundle. A rotation happens on request (the
// annotation above, or Rotate) or by itself once the current CA has passed
// two thirds of its lifetime.
//
// Every write is an update conditional on the resourceVersion read; on a
// conflict the Secret is read again and the decision made again, so
// replicas acting at once end with one CA and one rotation per request.
//
// # Caching
//
// The signer and the bundle are cached in memory and refreshed from the
// Secret, by an uncached read, when Reconcile runs and when Sign or
// ServingCertificate find the cache older than Options.RefreshAfter: there
// is no API call per signature in the steady state. A failed refresh keeps
// the cached signer, so that renewals survive a short API outage.
package embedded

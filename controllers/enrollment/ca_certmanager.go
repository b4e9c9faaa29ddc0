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

package enrollment

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca/anchor"
	"github.com/credo-dev/credo/internal/ca/certmanager"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/manager"
)

// NewCertManagerCA builds the cert-manager CA on the manager as
// cmd/enrollment-controller runs it: the CA, signing through
// CertificateRequests on every replica, and the issuer's CA published as
// the enrollment anchor by the leader, as the embedded CA publishes its
// own: the bundle's certificates kept in the Secret
// --cert-manager-anchor-secret of the controller's namespace
// (certmanager.Mirror), lifted by the TrustAnchor <release>
// (--enrollment-ca-release) declared there (anchor.Anchor). An anchor the
// embedded CA declared under that name takes the new source; one under
// another name is deleted. cmd/enrollment-controller and the tests build
// it here alike.
func NewCertManagerCA(s *manager.Setup, opts certmanager.Options, caOpts embedded.Options) (*certmanager.CA, error) {
	if caOpts.Namespace == "" {
		return nil, errors.New("--certificate-authority=cert-manager publishes the issuer's CA in the controller's namespace: set --namespace (or RUNTIME_NAMESPACE)")
	}
	mgr := s.Manager
	watching, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, err
	}
	authority, err := certmanager.New(opts, watching)
	if err != nil {
		return nil, err
	}
	mirror, err := certmanager.NewMirror(authority, caOpts.Namespace, mgr.GetClient(), mgr.GetAPIReader())
	if err != nil {
		return nil, err
	}
	published, err := anchor.New(anchor.Options{Namespace: caOpts.Namespace, Release: caOpts.Release,
		SecretName: opts.AnchorSecret, Key: certmanager.MirrorKey}, mgr.GetClient(), mgr.GetAPIReader())
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(mirror); err != nil {
		return nil, fmt.Errorf("adding the cert-manager CA's bundle mirror: %w", err)
	}
	if err := mgr.Add(published); err != nil {
		return nil, fmt.Errorf("adding the cert-manager CA's trust anchor: %w", err)
	}
	return authority, nil
}

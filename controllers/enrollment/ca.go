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
	"fmt"

	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/ca/pkcs11"
	"github.com/credo-dev/credo/internal/manager"
)

// NewEmbeddedCA builds the embedded CA on the manager as
// cmd/enrollment-controller runs it: the CA, kept fresh on every replica,
// and its trust anchor, declared by the leader (embedded.Anchor), so that
// <release>.tenant-ca is published on every install, with or without a
// HelmRelease. cmd/enrollment-controller and the tests build it here alike.
func NewEmbeddedCA(s *manager.Setup, opts embedded.Options) (*embedded.CA, error) {
	mgr := s.Manager
	authority, err := embedded.New(opts, mgr.GetClient(), mgr.GetAPIReader(), s.Recorder)
	if err != nil {
		return nil, err
	}
	anchor, err := embedded.NewAnchor(opts, mgr.GetClient(), mgr.GetAPIReader())
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(authority); err != nil {
		return nil, fmt.Errorf("adding the embedded CA: %w", err)
	}
	if err := mgr.Add(anchor); err != nil {
		return nil, fmt.Errorf("adding the embedded CA's trust anchor: %w", err)
	}
	return authority, nil
}

// checkKeyStore refuses PKCS#11 flags a binary built without PKCS#11
// support was given, flags that name no whole token, and a token for
// another CA than the embedded one.
func checkKeyStore(kind string, o pkcs11.Options) error {
	if !o.Enabled() {
		return nil
	}
	if kind != AuthorityEmbedded {
		return fmt.Errorf("--%s and the other PKCS#11 flags keep the embedded CA's keys: they do not go with --certificate-authority=%s",
			pkcs11.FlagModule, kind)
	}
	return o.Validate()
}

// withKeyStore returns caOpts with the PKCS#11 token o names opened as the
// CA's key store, or as they are when o names none. The token stays open
// for the life of the process.
func withKeyStore(caOpts embedded.Options, o pkcs11.Options) (embedded.Options, error) {
	if !o.Enabled() {
		return caOpts, nil
	}
	token, err := pkcs11.Open(o)
	if err != nil {
		return caOpts, fmt.Errorf("opening the embedded CA's PKCS#11 token: %w", err)
	}
	caOpts.Keys = token
	return caOpts, nil
}

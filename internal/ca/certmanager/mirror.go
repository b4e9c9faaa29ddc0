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

package certmanager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca/anchor"
	"github.com/credo-dev/credo/internal/fieldowner"
)

const (
	// MirrorKey is the key of the mirror Secret, the one the TrustAnchor lifts.
	MirrorKey = anchor.DefaultKey
	// LabelMirror marks the mirror Secret.
	LabelMirror = "enrollment.credo.dev/issuer-bundle"
	// mirrorReassert is how often the mirror is read and written again
	// when the bundle did not change (a mirror edited or deleted by hand
	// comes back within it).
	mirrorReassert = time.Hour
)

// ErrForeignMirror is returned when the mirror's Secret exists and the
// enrollment-controller did not write it: it is never overwritten.
var ErrForeignMirror = errors.New("a Secret of that name exists that the enrollment-controller did not write")

// Mirror keeps a key-free copy of the CA's trust bundle (the certificates
// of the configured Secret or ConfigMap key, re-encoded, nothing else) in
// the Secret Options.AnchorSecret of the enrollment-controller's
// namespace, under ca.crt: the source of the TrustAnchor that publishes
// the issuer's CA as the enrollment anchor (package anchor). A TrustAnchor
// lifts a key of a Secret of its own namespace, and the bundle may be a
// ConfigMap or live in the issuer's namespace, next to the CA's key.
//
// It runs on the leader and follows the bundle by reading it every
// Options.RefreshAfter (the read Sign makes, shared with it): a rotated
// bundle reaches the mirror within two periods, and the trust-controller
// projects the mirror on its watch.
type Mirror struct {
	ca        *CA
	key       client.ObjectKey
	client    client.Client
	reader    client.Reader
	written   []byte
	checkedAt time.Time
}

// NewMirror returns the Mirror of authority's bundle into the Secret
// namespace/Options.AnchorSecret. c writes; reader must not be a cache
// (a manager's APIReader).
func NewMirror(authority *CA, namespace string, c client.Client, reader client.Reader) (*Mirror, error) {
	if authority == nil || c == nil {
		return nil, errors.New("cert-manager CA mirror: a CA and a client are required")
	}
	if namespace == "" || authority.opts.AnchorSecret == "" {
		return nil, errors.New("cert-manager CA mirror: the namespace and the Secret's name are required")
	}
	if reader == nil {
		reader = c
	}
	return &Mirror{ca: authority, key: client.ObjectKey{Namespace: namespace, Name: authority.opts.AnchorSecret},
		client: c, reader: reader}, nil
}

// Start syncs until ctx is done; it makes the Mirror a manager Runnable.
func (m *Mirror) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("secret", m.key.String())
	anchor.Repeat(ctx, m.ca.opts.RefreshAfter, func(ctx context.Context) error {
		err := m.Sync(ctx)
		if err != nil {
			log.Error(err, "publishing the cert-manager issuer's CA")
		}
		return err
	})
	return nil
}

// NeedLeaderElection is true: one replica writes.
func (m *Mirror) NeedLeaderElection() bool { return true }

// Sync reads the bundle and writes the mirror when the bundle changed
// since the last write, or mirrorReassert after the last check.
func (m *Mirror) Sync(ctx context.Context) error {
	_, roots, err := m.ca.loadBundle(ctx)
	if err != nil {
		return err
	}
	var want bytes.Buffer
	for _, c := range roots {
		want.Write(encodeCert(c))
	}
	now := m.ca.now()
	if bytes.Equal(want.Bytes(), m.written) && now.Sub(m.checkedAt) < mirrorReassert {
		return nil
	}
	if err := m.write(ctx, want.Bytes()); err != nil {
		return err
	}
	m.written, m.checkedAt = want.Bytes(), now
	return nil
}

// write creates the mirror, or updates the one the enrollment-controller
// wrote (its resourceVersion as a precondition); any other is foreign.
func (m *Mirror) write(ctx context.Context, bundle []byte) error {
	var cur corev1.Secret
	err := m.reader.Get(ctx, m.key, &cur)
	switch {
	case apierrors.IsNotFound(err):
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: m.key.Name, Namespace: m.key.Namespace,
				Labels: map[string]string{LabelMirror: "true", labelManagedBy: managedBy}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{MirrorKey: bundle},
		}
		if err := fieldowner.Create(ctx, m.client, s, anchor.FieldOwner); err != nil {
			return fmt.Errorf("creating Secret %s: %w", m.key, err)
		}
		ctrl.LoggerFrom(ctx).Info("published the cert-manager issuer's CA", "secret", m.key.String())
		return nil
	case err != nil:
		return fmt.Errorf("reading Secret %s: %w", m.key, err)
	case !fieldowner.Wrote(&cur, anchor.FieldOwner) || cur.Labels[LabelMirror] != "true":
		return fmt.Errorf("Secret %s: %w; it is left untouched", m.key, ErrForeignMirror)
	case len(cur.Data) == 1 && bytes.Equal(cur.Data[MirrorKey], bundle):
		return nil
	}
	cur.Data = map[string][]byte{MirrorKey: bundle}
	cur.StringData = nil
	if err := m.client.Update(ctx, &cur, client.FieldOwner(anchor.FieldOwner)); err != nil {
		return fmt.Errorf("updating Secret %s: %w", m.key, err)
	}
	ctrl.LoggerFrom(ctx).Info("the cert-manager issuer's CA changed: published it again", "secret", m.key.String())
	return nil
}

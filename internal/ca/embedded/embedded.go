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

package embedded

import (
	"context"
	"encoding/pem"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollmentv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/ca"
)

const (
	// maxAttempts bounds the read-decide-write rounds of one sync.
	maxAttempts = 8
	// eventActionRotate is the action of the CARotated event.
	eventActionRotate = "Rotate"
	// minWait is the shortest pause of Run between two reconciliations.
	minWait = 100 * time.Millisecond
)

// Causes of a rotation, in logs and events.
const (
	causeRequested  = "requested"
	causeAnnotation = "requested by annotation " + AnnotationRotateRequestedAt
	causeLifetime   = "two thirds of its lifetime passed"
)

// CA is the embedded certificate authority. It implements
// ca.CertificateAuthority; create it with New and run Run (or add it to a
// manager as a Runnable) on every replica.
type CA struct {
	opts     Options
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
	now      func() time.Time

	snap      atomic.Pointer[snapshot]
	refreshMu sync.Mutex
	// changed wakes Run when the cache sees a new version of the Secret,
	// so that it plans its next wake-up (the end of an overlap) at once.
	changed chan struct{}
	// unused is Run's record of the store's unused keys.
	unused unusedKeys
}

// snapshot is the cached, parsed Secret.
type snapshot struct {
	state           *state
	resourceVersion string
	// checked is when the Secret was last read or written.
	checked time.Time
}

var _ ca.CertificateAuthority = (*CA)(nil)

// New returns the embedded CA. c writes the Secret; reader, when not nil,
// reads it and must not be a cache (a manager's APIReader); recorder, when
// not nil, records CARotated events on the Secret. Flux's events.Recorder
// is one.
func New(opts Options, c client.Client, reader client.Reader, recorder events.EventRecorder) (*CA, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("embedded CA options: %w", err)
	}
	if c == nil {
		return nil, fmt.Errorf("embedded CA: a client is required")
	}
	if reader == nil {
		reader = c
	}
	return &CA{opts: opts, client: c, reader: reader, recorder: recorder, now: time.Now,
		changed: make(chan struct{}, 1)}, nil
}

func (c *CA) secretKey() client.ObjectKey {
	return client.ObjectKey{Namespace: c.opts.Namespace, Name: c.opts.SecretName}
}

// Reconcile ensures the Secret exists with its labels, handles a rotation
// request or a due rotation, drops previous CAs whose overlap has ended, and
// refreshes the cache. It writes only when something changes.
func (c *CA) Reconcile(ctx context.Context) error {
	return c.sync(ctx, false)
}

// Rotate makes a new CA the signer at once; the current one stays in the
// bundle for the overlap. When another replica rotated in the meantime,
// that rotation stands for this one.
func (c *CA) Rotate(ctx context.Context) error {
	return c.sync(ctx, true)
}

// Run reconciles now, then every Interval, when a previous CA's overlap
// ends or a rotation falls due, and when the cache sees the Secret changed
// (another replica rotated), until ctx is done. Errors are logged and
// retried at the next tick. After each reconciliation it reports the key
// store's unused keys (reportUnusedKeys).
func (c *CA) Run(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("secret", c.secretKey().String())
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-c.changed:
			timer.Stop() // since Go 1.23 a stopped timer delivers no stale tick
		}
		wait := c.opts.Interval
		if err := c.Reconcile(ctx); err != nil {
			log.Error(err, "reconciling the enrollment CA")
		} else if s := c.snap.Load(); s != nil {
			c.reportUnusedKeys(ctx)
			if d := s.state.nextEvent().Sub(c.now()) + minWait; d < wait {
				wait = max(d, minWait)
			}
		}
		timer.Reset(wait)
	}
}

// Start runs Run; it makes the CA a manager Runnable.
func (c *CA) Start(ctx context.Context) error { return c.Run(ctx) }

// NeedLeaderElection is false: every replica signs, so every replica keeps
// its cache fresh. Writes are conditional, so replicas never race.
func (c *CA) NeedLeaderElection() bool { return false }

// sync is one read-decide-write round of the Secret, repeated on conflicts.
// explicit rotates unless the CA read first has already been replaced.
func (c *CA) sync(ctx context.Context, explicit bool) error {
	log := ctrl.LoggerFrom(ctx).WithValues("secret", c.secretKey().String())
	var base string
	for attempt := 1; ; attempt++ {
		var s corev1.Secret
		err := c.reader.Get(ctx, c.secretKey(), &s)
		if apierrors.IsNotFound(err) {
			err = c.create(ctx)
			if apierrors.IsAlreadyExists(err) && attempt < maxAttempts {
				continue // another replica created it: read theirs
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("reading the CA Secret %s: %w", c.secretKey(), err)
		}
		st, err := parseSecret(&s, c.opts.Keys)
		if err != nil {
			return err
		}
		now := c.now()
		if base == "" {
			base = st.current.fingerprint
		}
		requested := s.Annotations[AnnotationRotateRequestedAt]
		var cause string
		switch {
		case explicit && st.current.fingerprint == base:
			cause = causeRequested
		case requested != "" && requested != s.Annotations[AnnotationRotateHandledAt]:
			cause = causeAnnotation
		case c.opts.Keys != nil && st.keysInSecret():
			cause = causeIntoStore
		case dueForRotation(st.current.cert, now):
			cause = causeLifetime
		}
		previous := st.current
		var next *authority
		if cause != "" {
			if next, err = newAuthority(now, c.opts.Lifetime, c.opts.Keys); err != nil {
				return err
			}
			st.rotate(next, now, c.opts.Overlap)
		}
		dropped := st.prune(now)
		out := s.DeepCopy()
		if err := st.render(out, &c.opts, now); err != nil {
			c.destroyKeys(ctx, "the CA Secret was not written", next)
			return err
		}
		if requested != "" {
			out.Annotations[AnnotationRotateHandledAt] = requested
		}
		if secretEqual(&s, out) {
			c.store(st, s.ResourceVersion)
			return nil
		}
		// A write stored despite its error (settleKey) goes on as one that succeeded.
		if err := c.client.Update(ctx, out); err != nil && !c.settleKey(ctx, err, s.ResourceVersion, next) {
			if apierrors.IsConflict(err) && attempt < maxAttempts {
				continue
			}
			return fmt.Errorf("updating the CA Secret %s: %w", c.secretKey(), err)
		}
		c.store(st, out.ResourceVersion)
		c.destroyKeys(ctx, "the CA left the bundle", dropped...)
		if cause != "" {
			c.rotated(ctx, out, cause, previous, st.current)
		} else {
			log.V(1).Info("updated the enrollment CA Secret", "trusted", len(st.trusted(now)))
		}
		return nil
	}
}

// create writes a new Secret with a new CA. It returns the AlreadyExists
// error of a replica that was quicker, wrapped.
func (c *CA) create(ctx context.Context) error {
	now := c.now()
	a, err := newAuthority(now, c.opts.Lifetime, c.opts.Keys)
	if err != nil {
		return err
	}
	st := &state{current: a}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: c.opts.SecretName, Namespace: c.opts.Namespace},
		Type:       corev1.SecretTypeOpaque,
	}
	if err := st.render(s, &c.opts, now); err != nil {
		c.destroyKeys(ctx, "the CA Secret was not written", a)
		return err
	}
	// A Secret stored despite the error (settleKey) is created.
	if err := c.client.Create(ctx, s); err != nil && !c.settleKey(ctx, err, "", a) {
		return fmt.Errorf("creating the CA Secret %s: %w", c.secretKey(), err)
	}
	c.store(st, s.ResourceVersion)
	ctrl.LoggerFrom(ctx).Info("created the enrollment CA", "secret", c.secretKey().String(),
		"fingerprint", a.fingerprint, "notAfter", a.cert.NotAfter.UTC().Format(time.RFC3339), "key", a.keyPlace())
	return nil
}

// rotated logs and records a rotation. Only fingerprints and times: never key material.
func (c *CA) rotated(ctx context.Context, s *corev1.Secret, cause string, previous, current *authority) {
	until := previous.trustedUntil.UTC().Format(time.RFC3339)
	ctrl.LoggerFrom(ctx).Info("rotated the enrollment CA", "secret", c.secretKey().String(), "cause", cause,
		"fingerprint", current.fingerprint, "previous", previous.fingerprint, "previousTrustedUntil", until,
		"key", current.keyPlace())
	if c.recorder != nil {
		c.recorder.Eventf(s, nil, corev1.EventTypeNormal, enrollmentv1.CARotatedReason, eventActionRotate,
			"rotated the enrollment CA (%s): new CA %s; previous CA %s stays trusted until %s",
			cause, current.fingerprint, previous.fingerprint, until)
	}
}

func (c *CA) store(st *state, resourceVersion string) {
	old := c.snap.Swap(&snapshot{state: st, resourceVersion: resourceVersion, checked: c.now()})
	if old != nil && old.resourceVersion != resourceVersion {
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

// fresh returns the cached state, re-reading the Secret first when the cache
// is older than RefreshAfter. Only one caller reads at a time; the others
// use the cache meanwhile. A failed read keeps the cache.
func (c *CA) fresh(ctx context.Context) (*snapshot, error) {
	s := c.snap.Load()
	if s != nil && c.now().Sub(s.checked) < c.opts.RefreshAfter {
		return s, nil
	}
	if s != nil {
		if !c.refreshMu.TryLock() {
			return s, nil
		}
	} else {
		c.refreshMu.Lock()
	}
	defer c.refreshMu.Unlock()
	if cur := c.snap.Load(); cur != nil && c.now().Sub(cur.checked) < c.opts.RefreshAfter {
		return cur, nil
	}
	var secret corev1.Secret
	if err := c.reader.Get(ctx, c.secretKey(), &secret); err != nil {
		if s != nil {
			ctrl.LoggerFrom(ctx).Error(err, "refreshing the enrollment CA; signing with the cached CA", "secret", c.secretKey().String())
			c.store(s.state, s.resourceVersion)
			return s, nil
		}
		return nil, fmt.Errorf("%w: reading the CA Secret %s: %w", ca.ErrUnavailable, c.secretKey(), err)
	}
	if s != nil && s.resourceVersion == secret.ResourceVersion {
		c.store(s.state, s.resourceVersion)
		return c.snap.Load(), nil
	}
	st, err := parseSecret(&secret, c.opts.Keys)
	if err != nil {
		if s != nil {
			ctrl.LoggerFrom(ctx).Error(err, "refreshing the enrollment CA; signing with the cached CA")
			c.store(s.state, s.resourceVersion)
			return s, nil
		}
		return nil, fmt.Errorf("%w: %w", ca.ErrUnavailable, err)
	}
	c.store(st, secret.ResourceVersion)
	return c.snap.Load(), nil
}

// Sign issues a workload certificate with the current CA. It makes no API
// call while the cache is fresh.
func (c *CA) Sign(ctx context.Context, req ca.SigningRequest) (*ca.Issued, error) {
	s, err := c.fresh(ctx)
	if err != nil {
		return nil, err
	}
	cur := s.state.current
	if !c.now().Before(cur.cert.NotAfter) {
		return nil, fmt.Errorf("%w: the enrollment CA %s has expired", ca.ErrUnavailable, cur.fingerprint)
	}
	tmpl, err := leafTemplate(req, cur.cert)
	if err != nil {
		return nil, err
	}
	cert, der, err := cur.issue(tmpl, req.PublicKey)
	if err != nil {
		return nil, err
	}
	return &ca.Issued{
		Certificate:    cert,
		CertificatePEM: pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}),
	}, nil
}

// Bundle returns the PEM of every CA still trusted, current first.
func (c *CA) Bundle(ctx context.Context) ([]byte, error) {
	s, err := c.fresh(ctx)
	if err != nil {
		return nil, err
	}
	return s.state.bundlePEM(c.now()), nil
}

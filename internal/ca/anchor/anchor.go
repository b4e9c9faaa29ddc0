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

// Package anchor publishes the enrollment CA, whichever signs, as a trust
// anchor: the leader of the enrollment-controller declares the TrustAnchor
// <release> in its own namespace, lifting a key of a Secret there, with
// spec.owner TrustAnchor (no HelmRelease is needed; deleting the
// TrustAnchor garbage-collects the projection <release>.tenant-ca). The
// embedded CA lifts its own Secret's ca.crt; the cert-manager CA lifts the
// copy of its issuer's bundle it keeps (certmanager.Mirror).
package anchor

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
)

const (
	// Label marks the TrustAnchor the enrollment-controller declares for
	// its CA. It finds the anchors it declared under another release name
	// by it, to delete them.
	Label = "enrollment.credo.dev/ca-anchor"

	// FieldOwner is the field manager of the CA's TrustAnchor. A
	// TrustAnchor of the name without an entry of it is foreign: it is
	// never written or deleted.
	FieldOwner = fieldowner.EnrollmentController

	// DefaultKey is the key lifted when Options.Key is empty.
	DefaultKey = "ca.crt"

	// anchorInterval is how often the leader asserts the TrustAnchor again
	// after it succeeded (a deleted one comes back within it).
	anchorInterval = time.Hour
	// anchorRetryMax caps the backoff after a failure.
	anchorRetryMax = 5 * time.Minute
	// maxAttempts bounds the read-decide-write rounds of one Reconcile.
	maxAttempts = 8
)

// ErrForeign is returned when a TrustAnchor named after the release exists
// that the enrollment-controller did not declare: it is left as it is, and
// the CA is not published until it is removed or the release renamed
// (--enrollment-ca-release).
var ErrForeign = errors.New("a TrustAnchor of that name exists that the enrollment-controller did not declare")

// Options name the TrustAnchor and its source.
type Options struct {
	// Namespace of the TrustAnchor and of its source Secret: the
	// enrollment-controller's own.
	Namespace string
	// Release names the TrustAnchor and its projection <release>.tenant-ca.
	Release string
	// SecretName is the source Secret, in Namespace.
	SecretName string
	// Key is the key of SecretName lifted; DefaultKey when empty.
	Key string
}

func (o *Options) validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("the namespace is required"))
	}
	if o.Release == "" || o.SecretName == "" {
		errs = append(errs, errors.New("the release and the source Secret are required"))
	}
	return errors.Join(errs...)
}

// Anchor publishes the enrollment CA as a trust anchor: it declares the
// TrustAnchor <release> in its namespace, lifting Options.Key from the
// source Secret, with spec.owner TrustAnchor, and deletes the TrustAnchors
// it declared before under another release name.
//
// It runs on the leader only, so that during a rollout with another
// release name the old leader and the new one never undo each other's work:
// on start, then every hour, and after a failure with backoff.
type Anchor struct {
	opts   Options
	client client.Client
	reader client.Reader
}

// New returns the Anchor that declares the CA's TrustAnchor. c writes;
// reader reads TrustAnchors and must not be a cache (a manager's
// APIReader): managed fields tell the anchor declared here from any other.
func New(opts Options, c client.Client, reader client.Reader) (*Anchor, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("trust anchor options: %w", err)
	}
	if opts.Key == "" {
		opts.Key = DefaultKey
	}
	if c == nil {
		return nil, errors.New("trust anchor: a client is required")
	}
	if reader == nil {
		reader = c
	}
	return &Anchor{opts: opts, client: c, reader: reader}, nil
}

// Start reconciles until ctx is done; it makes the Anchor a manager
// Runnable. Errors are logged and retried with backoff.
func (a *Anchor) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("trustanchor", a.key().String())
	Repeat(ctx, anchorInterval, func(ctx context.Context) error {
		err := a.Reconcile(ctx)
		if err != nil {
			log.Error(err, "publishing the enrollment CA as a trust anchor")
		}
		return err
	})
	return nil
}

// Repeat runs fn until ctx is done: again every interval after a success,
// and after a failure with a backoff from a second, doubling up to five
// minutes (or interval, if shorter).
func Repeat(ctx context.Context, interval time.Duration, fn func(context.Context) error) {
	retry := time.Second
	for {
		wait := interval
		if err := fn(ctx); err != nil {
			wait, retry = min(retry, interval), min(2*retry, anchorRetryMax)
		} else {
			retry = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// NeedLeaderElection is true: one replica declares and deletes.
func (a *Anchor) NeedLeaderElection() bool { return true }

// Reconcile declares the TrustAnchor and deletes the ones declared before
// that are not it.
func (a *Anchor) Reconcile(ctx context.Context) error {
	if err := a.declare(ctx); err != nil {
		return err
	}
	return a.prune(ctx)
}

func (a *Anchor) key() client.ObjectKey {
	return client.ObjectKey{Namespace: a.opts.Namespace, Name: a.opts.Release}
}

// desired is the TrustAnchor as declared: all of it this field owner applies.
func (a *Anchor) desired() *trustv1.TrustAnchor {
	return &trustv1.TrustAnchor{
		TypeMeta: metav1.TypeMeta{APIVersion: trustv1.GroupVersion.String(), Kind: trustv1.TrustAnchorKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: a.opts.Release, Namespace: a.opts.Namespace,
			Labels: map[string]string{Label: "true"},
		},
		Spec: trustv1.TrustAnchorSpec{
			Release: a.opts.Release,
			Owner:   &trustv1.ProjectionOwner{Kind: trustv1.OwnerTrustAnchor},
			Source:  trustv1.SecretKeySource{Name: a.opts.SecretName, Key: a.opts.Key},
		},
	}
}

// declare writes the TrustAnchor: created when absent (create, not apply,
// so that one created meanwhile by anyone else fails with AlreadyExists
// instead of being merged into), server-side applied over its own, with
// the resourceVersion read as a precondition. The TrustAnchor an earlier
// version's label on the CA Secret made the trust-controller discover is
// deleted first: it is owned by a HelmRelease and would never let go.
// Any other TrustAnchor of the name is foreign: ErrForeign.
func (a *Anchor) declare(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		retry := attempt < maxAttempts
		var cur trustv1.TrustAnchor
		err := a.reader.Get(ctx, a.key(), &cur)
		switch {
		case apierrors.IsNotFound(err):
			err = fieldowner.Create(ctx, a.client, a.desired(), FieldOwner)
			if apierrors.IsAlreadyExists(err) && retry {
				continue
			}
			if err == nil {
				ctrl.LoggerFrom(ctx).Info("declared the enrollment CA's TrustAnchor", "trustanchor", a.key().String())
			}
			return wrap(err, "creating TrustAnchor %s", a.key())
		case err != nil:
			return fmt.Errorf("reading TrustAnchor %s: %w", a.key(), err)
		case fieldowner.Wrote(&cur, FieldOwner):
			err = a.apply(ctx, cur.ResourceVersion)
			if apierrors.IsConflict(err) && retry {
				continue
			}
			return err
		case a.discoveredFromLabel(&cur):
			err = a.client.Delete(ctx, &cur, client.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion})
			if (err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err)) && retry {
				continue
			}
			return wrap(err, "deleting the discovered TrustAnchor %s", a.key())
		default:
			return fmt.Errorf("TrustAnchor %s: %w; it is left untouched", a.key(), ErrForeign)
		}
	}
}

// discoveredFromLabel reports whether ta is the label leg's anchor of the
// CA Secret, as earlier versions published it (with a HelmRelease).
func (a *Anchor) discoveredFromLabel(ta *trustv1.TrustAnchor) bool {
	return ta.Annotations[trustv1.DiscoveredByAnnotation] == "label" && ta.Spec.Source.Name == a.opts.SecretName
}

// apply server-side applies the desired TrustAnchor over the one of ours
// at resourceVersion (fieldowner's door). An unchanged TrustAnchor is not
// written by the API server.
func (a *Anchor) apply(ctx context.Context, resourceVersion string) error {
	_, err := fieldowner.ApplyOver(ctx, a.client, a.desired(), resourceVersion, FieldOwner)
	return wrap(err, "applying TrustAnchor %s", a.key())
}

// prune deletes the TrustAnchors declared here (labelled, and written by
// this field owner) that are not the one to publish. Garbage collection
// removes their projections.
func (a *Anchor) prune(ctx context.Context) error {
	var list trustv1.TrustAnchorList
	if err := a.reader.List(ctx, &list, client.InNamespace(a.opts.Namespace), client.MatchingLabels{Label: "true"}); err != nil {
		return fmt.Errorf("listing the enrollment CA's TrustAnchors: %w", err)
	}
	var errs []error
	for i := range list.Items {
		ta := &list.Items[i]
		if ta.Name == a.opts.Release || !fieldowner.Wrote(ta, FieldOwner) {
			continue
		}
		err := a.client.Delete(ctx, ta, client.Preconditions{UID: &ta.UID})
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting TrustAnchor %s/%s: %w", ta.Namespace, ta.Name, err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info("deleted a TrustAnchor of the enrollment CA no longer published under its name",
			"trustanchor", ta.Namespace+"/"+ta.Name)
	}
	return errors.Join(errs...)
}

// wrap wraps a non-nil err with what was being done.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

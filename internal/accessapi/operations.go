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

// Package accessapi serves access.credo.dev, the aggregated API behind
// kube-apiserver that mints and revokes account passwords. Authentication,
// authorization and audit are kube-apiserver's own; this package holds the
// operations and the server.
package accessapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// Operations mints and revokes. The account Secret is read uncached and
// written with a conditional update on the version read, so two concurrent
// requests can never both win.
type Operations struct {
	// Client reads and writes directly against the API server (see NewClient).
	Client client.Client
	// AccountReader reads CredentialAccounts; the controller passes its manager's
	// cache, so that a mint costs two API calls (read and write the Secret)
	// rather than three. Nil: Client. An account the cache does not hold
	// yet (created a moment ago) or a cache that cannot answer is read
	// through Client.
	AccountReader client.Reader
	// NamespaceAccounts lists the CredentialAccounts of a namespace, to find
	// a platform account that maps to the Secret a mint would write. It must
	// hold every account (a sharded controller's cache holds its shard's
	// only). Nil: Client, uncached.
	NamespaceAccounts client.Reader
	// Keys are the account Secret's annotation keys.
	Keys account.Keys
	// Events records a Warning on the CredentialAccount when a mint or a
	// revocation of a platform account is refused; nil records none.
	Events events.AnnotatedEventRecorder
	// Now returns the time; time.Now when nil.
	Now func() time.Time
}

// NewClient returns the uncached client the operations read the Secret and
// write with: cfg without client-side rate limiting. Every call it makes
// serves a request kube-apiserver already admitted under its priority and
// fairness, and is itself subject to it; a token bucket here (controller
// binaries default to 50 QPS and a burst of 300, per resource type) would
// cap mints at 25 a second, two Secret calls each, once the burst is spent,
// and queue them inside this server, unseen by kube-apiserver.
func NewClient(cfg *rest.Config, scheme *runtime.Scheme) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	return client.New(cfg, client.Options{Scheme: scheme})
}

// Result is what a successful operation returns. Password is empty for a revocation.
type Result struct {
	Username        string
	Password        string
	SecretName      string
	ResourceVersion string
	At              time.Time
	// Warnings are what stops the engine from using the result, for the
	// client's Warning headers; never a password.
	Warnings []string
}

var (
	mintsResource       = accessv1.GroupVersion.WithResource("mints").GroupResource()
	revocationsResource = accessv1.GroupVersion.WithResource("revocations").GroupResource()
)

// Mint generates a password for a tenant account, stores its verifier (or
// the plaintext for the plaintext format) and returns it. user is the
// requester as kube-apiserver authenticated them; it goes into history.
// Errors are Kubernetes status errors with a clear message and never hold
// the password.
func (o *Operations) Mint(ctx context.Context, namespace string, spec accessv1.AccountRequestSpec, user string) (*Result, error) {
	return o.write(ctx, mintsResource, namespace, spec, user, credv1.OriginMinted)
}

// Revoke replaces the password by the verifier of a value nobody keeps.
func (o *Operations) Revoke(ctx context.Context, namespace string, spec accessv1.AccountRequestSpec, user string) (*Result, error) {
	res, err := o.write(ctx, revocationsResource, namespace, spec, user, credv1.OriginRevoked)
	if res != nil {
		res.Password = ""
	}
	return res, err
}

func (o *Operations) write(ctx context.Context, gr schema.GroupResource, namespace string, spec accessv1.AccountRequestSpec, user string, origin credv1.Origin) (*Result, error) {
	if spec.Account == "" {
		return nil, apierrors.NewBadRequest("spec.account is required")
	}
	acct, err := o.account(ctx, namespace, spec.Account)
	if err != nil {
		return nil, err
	}
	if acct.GetOwner() == credv1.OwnerPlatform {
		o.recordRefusal(acct, gr, user)
		return nil, apierrors.NewForbidden(gr, spec.Account, errors.New(
			"the account is owned by the platform: credo generates and keeps its password, and no tenant can mint or revoke it"))
	}
	if other, err := o.platformAccountAt(ctx, acct); err != nil {
		return nil, err
	} else if other != "" {
		return nil, apierrors.NewForbidden(gr, spec.Account, fmt.Errorf(
			"the account's Secret is the Secret of a platform account (%s): no tenant account can write it", other))
	}
	if c := unsafeToWrite(acct); c != nil {
		return nil, apierrors.NewConflict(gr, spec.Account, fmt.Errorf(
			"the account's Secret is not safe to write (%s: %s)", c.Reason, c.Message))
	}
	f, err := account.FormatOf(acct)
	if err != nil {
		return nil, apierrors.NewConflict(gr, spec.Account, fmt.Errorf("the account's format is refused: %w", err))
	}

	now := o.now()
	w := o.writer(now)
	name := acct.SecretName()
	s, err := w.Read(ctx, acct)
	if err != nil {
		return nil, internalError(err)
	}
	if s == nil {
		return nil, apierrors.NewConflict(gr, spec.Account, fmt.Errorf("the account Secret %s does not exist yet; wait for the CredentialAccount to be Ready", name))
	}
	if err := refusal(o.Keys.Guard(s, acct, false), name); err != nil {
		return nil, apierrors.NewConflict(gr, spec.Account, err)
	}
	if release := s.Annotations[o.Keys.AwaitingRelease()]; release != "" {
		// Until the release exists, no AccountSource is known to leave the
		// Secret's name to this account (a platform account may claim it
		// once the release shows its chart): it holds a password nobody knows.
		return nil, apierrors.NewConflict(gr, spec.Account, fmt.Errorf(
			"the account Secret %s awaits HelmRelease %s, which does not exist yet; mint or revoke once it does", name, release))
	}
	if spec.ResourceVersion != "" && spec.ResourceVersion != s.ResourceVersion {
		return nil, apierrors.NewConflict(gr, spec.Account, fmt.Errorf(
			"the account Secret %s is at resourceVersion %s, not %s: it changed since you read it", name, s.ResourceVersion, spec.ResourceVersion))
	}

	// The write is conditional on s.ResourceVersion, the version read
	// (equal to the expected one when given).
	password, written, err := w.NewPassword(ctx, acct, s, f, account.Record{Origin: origin, By: user})
	var formatErr *account.FormatError
	switch {
	case errors.As(err, &formatErr):
		return nil, internalError(fmt.Errorf("computing the verifier: %w", err))
	case apierrors.IsConflict(err):
		return nil, apierrors.NewConflict(gr, spec.Account, errors.New(
			"another request changed the account at the same time; nothing was stored for this one, send it again"))
	case refusal(err, name) != nil:
		return nil, apierrors.NewConflict(gr, spec.Account, refusal(err, name))
	case err != nil:
		return nil, internalError(fmt.Errorf("writing Secret %s: %w", name, err))
	}
	return &Result{Username: acct.Spec.Username, Password: password, SecretName: name, ResourceVersion: written.ResourceVersion, At: now,
		Warnings: o.releaseWarnings(ctx, acct, origin)}, nil
}

// writer is the account Secrets' writer of an operation at now: it reads
// and writes through Client, and writes tenant accounts only (it has no
// platform namespace).
func (o *Operations) writer(now time.Time) *account.Writer {
	return &account.Writer{Client: o.Client, Keys: o.Keys, Now: func() time.Time { return now }}
}

// refusal words the guard's refusal of the account Secret name for the
// requester; nil for any other error.
func refusal(err error, name string) error {
	switch {
	case errors.Is(err, account.ErrForeign):
		return fmt.Errorf("Secret %s was not created by credo; it is never written", name)
	case errors.Is(err, account.ErrClaimed):
		return fmt.Errorf("Secret %s does not carry this account's identity: another account holds it, or the controller has not recorded this one yet; wait for the CredentialAccount to be Ready", name)
	}
	return nil
}

// account reads the CredentialAccount name from AccountReader, or through Client
// when AccountReader does not hold it. A mint uses only its release and username
// (immutable: they name the Secret), its owner and its format; a change of
// owner or format applies to the mints the server starts after its cache
// received it (the watch's delay, milliseconds), as a change of RBAC applies
// after the authorizer's cache expires.
func (o *Operations) account(ctx context.Context, namespace, name string) (*credv1.CredentialAccount, error) {
	if err := validAccountName(name); err != nil {
		return nil, err
	}
	var acct credv1.CredentialAccount
	key := client.ObjectKey{Namespace: namespace, Name: name}
	if o.AccountReader != nil {
		if err := o.AccountReader.Get(ctx, key, &acct); err == nil {
			return &acct, nil
		}
	}
	if err := o.Client.Get(ctx, key, &acct); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, apierrors.NewNotFound(credv1.GroupVersion.WithResource("credentialaccounts").GroupResource(), name)
		}
		return nil, internalError(fmt.Errorf("reading CredentialAccount %s: %w", name, err))
	}
	return &acct, nil
}

// platformAccountAt names a platform account of acct's namespace, other
// than acct, whose Secret name is acct's ("" when none). Whatever is written
// on the Secret in the tenant's namespace, or on the tenant's accounts, a
// tenant account never writes the Secret a platform account maps to.
func (o *Operations) platformAccountAt(ctx context.Context, acct *credv1.CredentialAccount) (string, error) {
	reader := o.NamespaceAccounts
	if reader == nil {
		reader = o.Client
	}
	var list credv1.CredentialAccountList
	if err := reader.List(ctx, &list, client.InNamespace(acct.Namespace)); err != nil {
		return "", internalError(fmt.Errorf("listing CredentialAccounts: %w", err))
	}
	name := acct.SecretName()
	for i := range list.Items {
		a := &list.Items[i]
		if a.UID != acct.UID && a.GetOwner() == credv1.OwnerPlatform && a.SecretName() == name {
			return a.Name, nil
		}
	}
	return "", nil
}

// validAccountName refuses, with 400, a name no CredentialAccount can have.
func validAccountName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("%q is not a CredentialAccount name: %s", name, strings.Join(errs, "; ")))
	}
	return nil
}

// unsafeToWrite returns the condition of an account whose Secret must not
// be written: one in collision with another account or a foreign Secret.
func unsafeToWrite(acct *credv1.CredentialAccount) *metav1.Condition {
	c := conditions.Get(acct, credv1.SecretFailedCondition)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	switch c.Reason {
	case credv1.AccountCollisionReason, credv1.NameCollisionReason, credv1.KeptPasswordCollisionReason:
		return c
	}
	return nil
}

func (o *Operations) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

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

package credentials

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/exposure"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/verifier"
)

// The exposure check lists RBAC bindings and asks SubjectAccessReviews.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings;clusterrolebindings,verbs=list
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// checkPlaintext refuses to write a platform account's plaintext (format
// plaintext: its consumer, such as mariadb-operator for MariaDB's root,
// needs the password itself) where anyone but its consumers and the
// platform may read it: in a namespace whose admins read Secrets, start
// pods or exec into them, or apply Flux objects that a controller renders
// with its own rights. Seed 002: "plaintext where the consumer needs it,
// in a Secret the tenant is never granted". It runs before every write of
// the account Secret (creation, rotation, repair), so an exposure found
// later stops the next rotation and leaves the copy written before as it
// is: nothing is lost, and nothing new is handed to the subject found.
func (r *CredentialAccountReconciler) checkPlaintext(ctx context.Context, acct *credv1.CredentialAccount, f verifier.Format) error {
	if acct.GetOwner() != credv1.OwnerPlatform || !f.Plaintext() {
		return nil
	}
	if r.Exposure == nil {
		return reconciler.NewStalling(credv1.PlaintextExposedReason,
			"the credential-controller was built without the exposure check; no platform plaintext is written")
	}
	var consumers []rbacv1.Subject
	if p := acct.Spec.Plaintext; p != nil {
		for _, c := range p.Consumers {
			consumers = append(consumers, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: c.Namespace, Name: c.Name})
		}
	}
	targets := []exposure.Target{{Name: acct.SecretName()}}
	if p := acct.Spec.Plaintext; p != nil && p.SecretRef != nil {
		targets = append(targets, exposure.Target{Name: p.SecretRef.Name, Unguarded: true})
	}
	exposed, err := r.Exposure.Check(ctx, acct.Namespace, targets, consumers)
	if err != nil {
		return err
	}
	if exposed != nil {
		return reconciler.NewStalling(credv1.PlaintextExposedReason,
			"the plaintext of platform account %s could be read or replaced by more than its consumers in namespace %s: %s; nothing is written. "+
				"Run the consumer in a namespace no tenant administers, remove that access, or trust the subject with --plaintext-trusted-subjects",
			acct.Name, acct.Namespace, exposed)
	}
	return nil
}

// deliverPlaintext writes a platform plaintext account's password into the
// key its spec.plaintext.secretRef names (an existing MariaDB's
// rootPasswordSecretKeyRef), once `kubectl credo migrate` has adopted that
// Secret: on every reconciliation, so that a rotation, a repair or a
// change of the key by anyone else is put right. Until the Secret is
// adopted, or while it is missing, the account waits and the key is left
// as it is: the consumer keeps the value it runs with.
func (r *CredentialAccountReconciler) deliverPlaintext(ctx context.Context, acct *credv1.CredentialAccount, secret *corev1.Secret) error {
	p := acct.Spec.Plaintext
	if p == nil || p.SecretRef == nil || acct.GetOwner() != credv1.OwnerPlatform || secret == nil {
		return nil
	}
	ref := p.SecretRef
	w := r.writer()
	target, err := w.ReadReferenced(ctx, acct)
	if err != nil {
		return err
	}
	switch {
	case target == nil:
		return reconciler.NewWaiting(credv1.PlaintextSecretNotFoundReason,
			"Secret %s, which spec.plaintext.secretRef names, does not exist; the plaintext is kept in the account Secret %s", ref.Name, secret.Name)
	case !r.AccountKeys.AdoptedFor(target, acct):
		return reconciler.NewWaiting(credv1.PlaintextSecretNotAdoptedReason,
			"Secret %s is not adopted for this account yet: kubectl credo migrate adopts it once the chart no longer renders it; its key %s is left as it is", ref.Name, ref.Key)
	}
	wrote, err := w.Deliver(ctx, acct, target, string(secret.Data[credv1.PasswordKey]))
	if err != nil {
		return err
	}
	if wrote {
		r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.PlaintextDeliveredReason, eventActionAccount,
			"wrote the account's password into key %s of Secret %s, which its consumer reads", ref.Key, ref.Name)
	}
	return nil
}

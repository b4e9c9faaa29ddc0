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

package migrate

import (
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
)

// Action is what the migration does to one account.
type Action string

const (
	// ActionMigrate carries the chart's password of a tenant account over.
	ActionMigrate Action = "migrate"
	// ActionRotate gives a platform account a new password.
	ActionRotate Action = "rotate"
	// ActionSkip leaves the account as it is.
	ActionSkip Action = "skip"
	// ActionKeep stamps helm.sh/resource-policy: keep on the Secret a
	// platform plaintext account's spec.plaintext.secretRef names, before
	// the chart stops rendering it (--phase=prepare).
	ActionKeep Action = "keep"
	// ActionAdopt adopts that Secret once the chart no longer renders it,
	// then rotates the account unless the migration rotated it before;
	// the credential-controller writes the new password into the key.
	ActionAdopt Action = "adopt"
)

// Phase is the part of the migration a run makes.
type Phase string

const (
	// PhaseAll migrates releases whose charts no longer render what the
	// accounts replace (or never did): tenant accounts carried over,
	// platform accounts rotated, referenced Secrets adopted.
	PhaseAll Phase = "all"
	// PhasePrepare runs before the charts switch: tenant accounts are
	// carried over and the Secrets running consumers read
	// (spec.plaintext.secretRef) are stamped keep; no platform account is
	// rotated, since the running chart would not deliver it.
	PhasePrepare Phase = "prepare"
)

// Step is the migration of one account. It holds no password.
type Step struct {
	// Account is the CredentialAccount's name.
	Account string
	// Username is the account's username: the key of <release>-credentials.
	Username string
	// Owner is tenant or platform.
	Owner credv1.AccountOwner
	// Action is what is done.
	Action Action
	// Reason says why (a constant of reasons.go).
	Reason string

	acct   *credv1.CredentialAccount
	secret *corev1.Secret
	format verifier.Format
	// referenced is the Secret spec.plaintext.secretRef names; rotate
	// tells an adoption to rotate too.
	referenced *corev1.Secret
	rotate     bool
}

// Skip is why a release is skipped: a reason of reasons.go and a message
// naming objects and keys, never a value.
type Skip struct {
	Reason  string
	Message string
}

// Release is the migration of one HelmRelease's accounts.
type Release struct {
	Namespace string
	Name      string
	// Steps are the accounts, by name; empty when the release is skipped
	// before its accounts were looked at.
	Steps []Step
	// Skip is set when the release is skipped: nothing of it is written.
	Skip *Skip
}

// Key is the release's key in the report ConfigMap: <namespace>.<release>.
func (r *Release) Key() string { return r.Namespace + "." + r.Name }

// state is what the plan of one release is made from, as read.
type state struct {
	namespace, name string
	// hr is the HelmRelease; nil when there is none.
	hr *helmv2.HelmRelease
	// namespaceUID is the UID of the namespace, which kept passwords are
	// bound to.
	namespaceUID types.UID
	// credentialsName is <release>-credentials; credentials is that Secret,
	// nil when there is none.
	credentialsName string
	credentials     *corev1.Secret
	// accounts are the release's CredentialAccounts, by name, and secrets
	// their account Secrets by account name (nil: none).
	accounts []*credv1.CredentialAccount
	secrets  map[string]*corev1.Secret
	// referenced are the Secrets the accounts' spec.plaintext.secretRef
	// name, by account name (nil: none found), and rendered whether the
	// release's latest Helm record renders each.
	referenced map[string]*corev1.Secret
	rendered   map[string]bool
	// unreadable holds, by account name, why the release's Helm record
	// could not tell whether it renders the Secret.
	unreadable map[string]string
	// live are the UIDs of the namespace's CredentialAccounts.
	live map[string]bool
}

// isLive reports whether uid names a CredentialAccount of the namespace.
func (st *state) isLive(uid string) bool { return st.live[uid] }

// plan decides what to do with one release. It reads nothing and writes
// nothing: every decision of the migration is here.
func plan(keys account.Keys, phase Phase, st state) Release {
	r := Release{Namespace: st.namespace, Name: st.name}
	skip := func(reason, format string, args ...any) Release {
		r.Steps, r.Skip = nil, &Skip{Reason: reason, Message: fmt.Sprintf(format, args...)}
		return r
	}
	switch {
	case st.hr == nil:
		return skip(HelmReleaseNotFoundReason, "HelmRelease %s/%s not found; %d CredentialAccount(s) name it", st.namespace, st.name, len(st.accounts))
	case st.hr.Spec.Suspend:
		return skip(SuspendedReason, "HelmRelease %s/%s is suspended", st.namespace, st.name)
	case !ready(st.hr):
		return skip(NotReadyReason, "HelmRelease %s/%s is not Ready on its current generation", st.namespace, st.name)
	case st.credentials == nil:
		return skip(CredentialsMissingReason, "Secret %s/%s not found", st.namespace, st.credentialsName)
	}
	for _, acct := range st.accounts {
		step := Step{Account: acct.Name, Username: acct.Spec.Username, Owner: acct.GetOwner(), acct: acct}
		f, err := account.FormatOf(acct)
		if err != nil {
			return skip(FormatRefusedReason, "CredentialAccount %s: %v", acct.Name, err)
		}
		step.format = f
		if f.Plaintext() && step.Owner == credv1.OwnerPlatform &&
			conditions.GetReason(acct, credv1.SecretFailedCondition) == credv1.PlaintextExposedReason {
			// The controller's exposure check refused the namespace: a
			// rotation written there would reach whoever it found.
			return skip(PlaintextExposedReason, "CredentialAccount %s: %s", acct.Name, conditions.GetMessage(acct, credv1.SecretFailedCondition))
		}
		s := st.secrets[acct.Name]
		if s == nil {
			return skip(AccountSecretMissingReason, "the Secret %s of CredentialAccount %s does not exist yet; the controller creates it", acct.SecretName(), acct.Name)
		}
		if err := keys.Guard(s, acct, false); err != nil {
			return skip(AccountSecretForeignReason, "Secret %s of CredentialAccount %s: %v", s.Name, acct.Name, err)
		}
		if keys.OfEarlierRelease(s, acct, st.hr) {
			return skip(AccountSecretForeignReason, "Secret %s of CredentialAccount %s was made for an earlier HelmRelease %s; the controller replaces it", s.Name, acct.Name, st.name)
		}
		step.secret = s
		if ref := secretRef(acct); ref != nil && step.Owner == credv1.OwnerPlatform {
			if sk := planReferenced(keys, phase, st, &step, ref); sk != nil {
				return skip(sk.Reason, "%s", sk.Message)
			}
			r.Steps = append(r.Steps, step)
			continue
		}
		password, exposed := st.credentials.Data[acct.Spec.Username]
		origin := credv1.Origin(s.Annotations[keys.Origin])
		switch {
		case step.Owner == credv1.OwnerPlatform && phase == PhasePrepare:
			step.Action, step.Reason = ActionSkip, AfterSwitchReason
		case step.Owner == credv1.OwnerPlatform && s.Annotations[keys.MigratedRotation()] != "":
			step.Action, step.Reason = ActionSkip, AlreadyRotatedReason
		case step.Owner == credv1.OwnerPlatform && exposed:
			step.Action, step.Reason = ActionRotate, ExposedReason
		case step.Owner == credv1.OwnerPlatform:
			// <release>-credentials is the tenant's to write, and Helm
			// history keeps earlier renderings: a key missing now proves
			// nothing the tenant could not read.
			step.Action, step.Reason = ActionRotate, MaybeExposedReason
		case origin == credv1.OriginMinted || origin == credv1.OriginRevoked:
			step.Action, step.Reason = ActionSkip, NewerPasswordReason
		case !exposed:
			return skip(KeyMissingReason, "Secret %s/%s has no key %q for CredentialAccount %s", st.namespace, st.credentialsName, acct.Spec.Username, acct.Name)
		case origin == credv1.OriginMigrated && verifier.Matches(f, acct.Spec.Username, string(password), string(s.Data[credv1.PasswordKey])):
			step.Action, step.Reason = ActionSkip, UpToDateReason
		case origin == credv1.OriginMigrated:
			step.Action, step.Reason = ActionMigrate, ChangedSinceMigrationReason
		default:
			step.Action, step.Reason = ActionMigrate, CarryOverReason
		}
		r.Steps = append(r.Steps, step)
	}
	return r
}

// planReferenced decides for a platform plaintext account whose running
// consumer reads the key spec.plaintext.secretRef names (an existing
// MariaDB's root): before the chart switch, that Secret is stamped keep;
// after it, once no Helm release renders it, it is adopted and the account
// rotated once. It returns why the release is skipped, or nil.
func planReferenced(keys account.Keys, phase Phase, st state, step *Step, ref *credv1.SecretKeyRef) *Skip {
	acct := step.acct
	t := st.referenced[acct.Name]
	if t == nil {
		return &Skip{Reason: ReferencedSecretMissingReason, Message: fmt.Sprintf(
			"Secret %s/%s, which CredentialAccount %s's consumer reads (spec.plaintext.secretRef), not found", st.namespace, ref.Name, acct.Name)}
	}
	switch err := keys.Adoptable(t, acct, st.hr, st.isLive); {
	case errors.Is(err, account.ErrClaimed):
		return &Skip{Reason: AccountSecretForeignReason, Message: fmt.Sprintf(
			"Secret %s/%s, which CredentialAccount %s names in spec.plaintext.secretRef, was adopted for another account", st.namespace, ref.Name, acct.Name)}
	case err != nil:
		return &Skip{Reason: ReferencedSecretForeignReason, Message: fmt.Sprintf(
			"Secret %s/%s, which CredentialAccount %s names in spec.plaintext.secretRef, is not an object of HelmRelease %s's Helm release (meta.helm.sh/release-name and -namespace): only the chart's own Secret is kept and adopted",
			st.namespace, ref.Name, acct.Name, st.name)}
	}
	step.referenced = t
	adopted := keys.AdoptedFor(t, acct)
	rotated := step.secret.Annotations[keys.MigratedRotation()] != ""
	switch {
	case phase == PhasePrepare && (adopted || account.KeptFromHelm(t)):
		step.Action, step.Reason = ActionSkip, AlreadyKeptReason
	case phase == PhasePrepare:
		step.Action, step.Reason = ActionKeep, BeforeSwitchReason
	case st.unreadable[acct.Name] != "":
		return &Skip{Reason: HelmRecordUnreadableReason, Message: fmt.Sprintf(
			"whether the chart still renders Secret %s, which CredentialAccount %s's consumer reads, cannot be told: %s", ref.Name, acct.Name, st.unreadable[acct.Name])}
	case st.rendered[acct.Name]:
		return &Skip{Reason: StillRenderedReason, Message: fmt.Sprintf(
			"the latest Helm release of %s/%s still renders Secret %s, which CredentialAccount %s's consumer reads: run the migration with --phase=prepare (it stamps helm.sh/resource-policy: keep), switch the chart, and run it again once the release is Ready",
			st.namespace, st.name, ref.Name, acct.Name)}
	case !adopted:
		step.Action, step.Reason, step.rotate = ActionAdopt, NoLongerRenderedReason, !rotated
	case rotated:
		step.Action, step.Reason = ActionSkip, AlreadyRotatedReason
	default:
		step.Action, step.Reason = ActionRotate, ExposedReason
	}
	return nil
}

func secretRef(acct *credv1.CredentialAccount) *credv1.SecretKeyRef {
	if acct.Spec.Plaintext == nil {
		return nil
	}
	return acct.Spec.Plaintext.SecretRef
}

// ready reports whether hr's last reconciliation of its current generation
// succeeded.
func ready(hr *helmv2.HelmRelease) bool {
	return conditions.IsReady(hr) && hr.Status.ObservedGeneration == hr.Generation
}

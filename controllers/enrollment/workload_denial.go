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
	"context"
	"fmt"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// DenialsPolicy names the ValidatingAdmissionPolicy of config/admission,
// and its binding, that admit a Workload's spec.denied only in its
// writer's name (config/admission/workloads.yaml).
const DenialsPolicy = "credo-workload-denials"

// DefaultDenialsPolicySettle is how much older than a Workload the
// credo-workload-denials policy and its binding must be for the Workload's
// spec.denied.by to be established: each kube-apiserver enforces a policy
// once its own informers hold it, a second or so after it is written.
const DefaultDenialsPolicySettle = time.Minute

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get,resourceNames=credo-workload-denials;credo-workload-attributes

// deniedBy returns who denied wl as far as it can be established, for
// status.deniedBy: spec.denied.by when credo-workload-denials admitted
// every write of the Workload's spec.denied, so that by names the writer
// of the denial (or, as credo-enrollment-controller, the enrollment
// server). Otherwise it returns "" and, when by names somebody, why that is
// not established. spec.denied.by alone proves nothing: without the policy,
// any namespace admin may write anybody's name there.
func (r *WorkloadReconciler) deniedBy(ctx context.Context, wl *enrollv1.Workload) (by, notEstablished string, err error) {
	d := wl.Spec.Denied
	if d == nil || d.By == "" {
		return "", "", nil
	}
	if notEstablished, err = r.admitted(ctx, DenialsPolicy, wl.CreationTimestamp.Time); err != nil || notEstablished != "" {
		return "", notEstablished, err
	}
	return d.By, "", nil
}

// admitted returns "" when the ValidatingAdmissionPolicy name of
// config/admission and its binding, read uncached, admitted every write
// they match of a Workload created at created (policyAdmitted), else why
// not.
func (r *WorkloadReconciler) admitted(ctx context.Context, name string, created time.Time) (notEstablished string, err error) {
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range []struct {
		obj  client.Object
		what string
	}{{&policy, "the admission policy " + name}, {&binding, "the admission policy binding " + name}} {
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, o.obj); {
		case apierrors.IsNotFound(err):
			return o.what + " is not installed", nil
		case apierrors.IsForbidden(err):
			return "the enrollment-controller may not read " + o.what, nil
		case err != nil:
			return "", fmt.Errorf("reading %s: %w", o.what, err)
		}
	}
	return policyAdmitted(&policy, &binding, created, r.denialsPolicySettle()), nil
}

// policyAdmitted returns "" when policy and binding, as read, admitted
// every write they match of a Workload created at created: the binding
// binds the policy, denies, covers every namespace and object, and refuses
// a write when its parameters are missing; the policy fails closed; both
// are older than the Workload by settle, so that no write they match came
// before them (one recreated since is younger). Otherwise
// it says why not. Their rules are the platform's: only a cluster
// administrator may change them, and one may as well write the status.
func policyAdmitted(policy *admissionv1.ValidatingAdmissionPolicy, binding *admissionv1.ValidatingAdmissionPolicyBinding,
	created time.Time, settle time.Duration) string {
	b := binding.Spec
	switch {
	case b.PolicyName != policy.Name:
		return fmt.Sprintf("the binding %s binds %q, not the policy", binding.Name, b.PolicyName)
	case !slices.Contains(b.ValidationActions, admissionv1.Deny):
		return fmt.Sprintf("the binding %s does not deny (validationActions %v)", binding.Name, b.ValidationActions)
	case !matchesEverything(b.MatchResources):
		return fmt.Sprintf("the binding %s does not cover every namespace and object (matchResources)", binding.Name)
	case b.ParamRef != nil && b.ParamRef.ParameterNotFoundAction != nil && *b.ParamRef.ParameterNotFoundAction != admissionv1.DenyAction:
		return fmt.Sprintf("the binding %s admits every write when its parameters are missing", binding.Name)
	case policy.Spec.FailurePolicy != nil && *policy.Spec.FailurePolicy != admissionv1.Fail:
		return fmt.Sprintf("the policy %s admits a write it fails to evaluate (failurePolicy %s)", policy.Name, *policy.Spec.FailurePolicy)
	}
	installed := policy.CreationTimestamp.Time
	if t := binding.CreationTimestamp.Time; t.After(installed) {
		installed = t
	}
	if created.Before(installed.Add(settle)) {
		return fmt.Sprintf("the Workload was created at %s, before the admission policy %s had been installed for %s (at %s)",
			formatTime(created), policy.Name, settle, formatTime(installed))
	}
	return ""
}

// matchesEverything reports whether a binding's matchResources leaves out
// nothing its policy matches.
func matchesEverything(m *admissionv1.MatchResources) bool {
	if m == nil {
		return true
	}
	return emptySelector(m.NamespaceSelector) && emptySelector(m.ObjectSelector) &&
		len(m.ResourceRules) == 0 && len(m.ExcludeResourceRules) == 0
}

func emptySelector(s *metav1.LabelSelector) bool {
	return s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0)
}

// deniedMessage is the Ready message of a denied Workload: by whom when
// status.deniedBy establishes it, else what spec.denied.by says and why it
// is not established.
func deniedMessage(wl *enrollv1.Workload, notEstablished string) string {
	d := wl.Spec.Denied
	at := formatTime(wl.Status.DeniedAt.Time)
	const lifted = "the workload renews nothing until spec.denied is removed"
	switch {
	case wl.Status.DeniedBy != "":
		return fmt.Sprintf("denied by %s at %s: %s; %s", wl.Status.DeniedBy, at, d.Reason, lifted)
	case d.By != "":
		return fmt.Sprintf("denied at %s: %s; %s; spec.denied.by says %q, which is not established: %s", at, d.Reason, lifted, d.By, notEstablished)
	}
	return fmt.Sprintf("denied at %s: %s; %s", at, d.Reason, lifted)
}

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
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// DeniedBy is spec.denied.by when a policy's onDuplicate denies a workload.
const DeniedBy = fieldowner.EnrollmentController

// peerOf is what the listener sees of a request: its source address, and
// what the agent says of its host. That is a record, not a check: a value
// that does not fit it (not a DNS name, not a boot id) is left out rather
// than refusing the renewal of a workload whose certificate is good.
func peerOf(r *http.Request, h *enrollapi.Host) enrollv1.WorkloadPeer {
	p := enrollv1.WorkloadPeer{Address: clientAddr(r)}
	if h == nil {
		return p
	}
	if h.Hostname != "" && len(validation.IsDNS1123Subdomain(strings.ToLower(h.Hostname))) == 0 {
		p.Hostname = h.Hostname
	}
	if len(h.BootID) <= enrollapi.MaxBootIDLength && strings.Trim(h.BootID, "0123456789abcdefABCDEF-") == "" {
		p.BootID = h.BootID
	}
	return p
}

// recordDuplicate records on wl (read from the API server) that presented,
// a renewal with a still valid certificate of wl other than its current
// one, was made, applies the policy's onDuplicate, and returns the refusal
// the presenter gets. The refusal does not wait on the record: a record
// that cannot be written is logged, and the presenter is refused all the
// same.
func (s *Server) recordDuplicate(ctx context.Context, wl *enrollv1.Workload, policy *enrollv1.EnrollmentPolicy, presented enrollv1.WorkloadPeer) *apiError {
	action := policy.GetOnDuplicate()
	now := metav1.NewTime(s.now())
	presented.At = &now
	current := enrollv1.WorkloadPeer{Serial: wl.Status.Serial}
	if wl.Status.IssuedTo != nil {
		current = *wl.Status.IssuedTo
		current.Serial = wl.Status.Serial
	}
	msg := fmt.Sprintf("certificate %s was presented from %s while %s, issued to %s, is current: the workload runs twice (a cloned host?); %s",
		presented.Serial, describePeer(presented), current.Serial, describePeer(current), actionMessage(action))
	if err := s.writeDuplicate(ctx, wl, action, current, presented, msg); err != nil {
		s.Log.Error(err, "could not record a duplicate identity", "workload", wl.Name, "namespace", wl.Namespace)
	}
	metrics.DuplicateIdentity(wl.Namespace, string(action))
	// The record and the event name both sides; the answer does not: its
	// caller may be the copy that should not exist.
	e := &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonDuplicateIdentity,
		msg: fmt.Sprintf("certificate %s is not the current certificate of workload %s: another copy of the workload renewed with it (a cloned host?); %s",
			presented.Serial, wl.Name, actionMessage(action))}
	if action == enrollv1.DuplicateRecord {
		// The latest renewal supersedes, as without detection: the
		// presenter alone enrolls again.
		e.reason = enrollapi.ReasonNotCurrent
	}
	s.refusalEvent(wl, enrollv1.DuplicateIdentityEventReason, &apiError{reason: e.reason, msg: fmt.Sprintf("workload %s: %s", wl.Name, msg)})
	return e
}

// writeDuplicate writes the record: for Deny first spec.denied, then the
// status, each conditional on the version read, read again from the API
// server after a conflict (three writes at the most).
func (s *Server) writeDuplicate(ctx context.Context, wl *enrollv1.Workload, action enrollv1.DuplicateAction,
	current, presented enrollv1.WorkloadPeer, msg string) error {
	return reconciler.UpdateStatus(ctx, s.Client, s.APIReader, wait.Backoff{Steps: 3}, wl, func(wl *enrollv1.Workload) (bool, error) {
		if action == enrollv1.DuplicateDeny && wl.Spec.Denied == nil {
			wl.Spec.Denied = &enrollv1.WorkloadDenial{By: DeniedBy,
				Reason: fmt.Sprintf("duplicate identity: certificate %s presented from %s while %s is current (policy %s denies duplicates)",
					presented.Serial, describePeer(presented), current.Serial, wl.Spec.Policy)}
			if err := s.Client.Update(ctx, wl); apierrors.IsConflict(err) {
				return false, err
			} else if err != nil {
				// Refused (RBAC, an admission policy naming another
				// identity): fail closed, as ForceReenroll, and record it.
				s.Log.Error(err, "could not deny a duplicated workload; forcing re-enrollment instead", "workload", wl.Name, "namespace", wl.Namespace)
				wl.Spec.Denied = nil
				action = enrollv1.DuplicateForceReenroll
			}
		}
		count := int32(1)
		if d := wl.Status.Duplicate; d != nil {
			count = d.Count + 1
		}
		wl.Status.Duplicate = &enrollv1.DuplicateIdentityRecord{
			DetectedAt: *presented.At, Action: action, Count: count, Current: current, Presented: presented,
		}
		reconciler.MarkCondition(wl, enrollv1.DuplicateIdentityCondition, metav1.ConditionTrue, string(action), msg)
		if action == enrollv1.DuplicateForceReenroll {
			reconciler.MarkState(wl, metav1.ConditionFalse, enrollv1.DuplicateIdentityReason, msg)
		}
		return true, nil
	})
}

// describePeer names a request's address and host for a message.
func describePeer(p enrollv1.WorkloadPeer) string {
	out := p.Address
	if out == "" {
		out = "an unknown address"
	}
	var host []string
	if p.Hostname != "" {
		host = append(host, "hostname "+p.Hostname)
	}
	if p.BootID != "" {
		host = append(host, "boot "+p.BootID)
	}
	if len(host) > 0 {
		out += " (" + strings.Join(host, ", ") + ")"
	}
	return out
}

func actionMessage(a enrollv1.DuplicateAction) string {
	switch a {
	case enrollv1.DuplicateDeny:
		return "the policy denies duplicates: the workload is denied until an operator lifts the denial"
	case enrollv1.DuplicateRecord:
		return "the policy records duplicates: the copy presenting the older certificate must enroll again"
	default:
		return "the policy forces re-enrollment: no copy renews any more, each enrolls again with a join token"
	}
}

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

package accessapi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// eventSlots bounds the refusal events being recorded at once. Flux's
// recorder posts to notification-controller synchronously, with retries:
// a request never waits for it, and while notification-controller is slow
// or down, refusals beyond these are recorded nowhere but in kube-apiserver's
// audit log and the refusal counter.
var eventSlots = make(chan struct{}, 16)

// recordRefusal records a Warning on a platform account whose mint or
// revocation user asked for: the platform owns its password, so the request
// is either a mistake or a tenant probing. Nothing secret is in it; the
// request is answered without waiting.
func (o *Operations) recordRefusal(acct *credv1.CredentialAccount, gr schema.GroupResource, user string) {
	if o.Events == nil {
		return
	}
	select {
	case eventSlots <- struct{}{}:
	default:
		return
	}
	action := "Mint"
	if gr == revocationsResource {
		action = "Revoke"
	}
	md := account.EventMetadata(acct, credv1.EventRequesterKey, user)
	go func() {
		defer func() { <-eventSlots }()
		o.Events.AnnotatedEventf(acct, nil, md, corev1.EventTypeWarning, credv1.MintRefusedReason, action,
			"%s refused for %s: the platform owns the password of account %s, no tenant can mint or revoke it",
			gr.Resource, user, acct.Spec.Username)
	}()
}

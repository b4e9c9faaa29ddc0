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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// eventMetadata is the metadata of an event on obj (its policy and token,
// see the API's EventMetadata), plus extra key-value pairs.
func eventMetadata(obj runtime.Object, extra ...string) map[string]string {
	md := map[string]string{}
	if o, ok := obj.(interface{ EventMetadata() map[string]string }); ok {
		md = o.EventMetadata()
	}
	for i := 0; i+1 < len(extra); i += 2 {
		md[extra[i]] = extra[i+1]
	}
	return md
}

// refusalEvent records a refused enrollment or renewal on obj, with the
// reason the agent was answered with in the metadata.
func (s *Server) refusalEvent(obj runtime.Object, reason string, e *apiError) {
	if s.Recorder == nil {
		return
	}
	s.Recorder.AnnotatedEventf(obj, nil, eventMetadata(obj, enrollv1.EventRefusalKey, e.reason), corev1.EventTypeWarning, reason,
		eventAction, "%s: %s", e.reason, e.msg)
}

// failed spends one attempt of key (see attemptKey). The attempt that uses
// up the budget (the key is refused from now on) is recorded, once, as a
// Warning on the JoinTokens the attempt named: someone is guessing at a
// known token. An attempt naming no existing token has no object to record
// on; the log and the refusal counter see it.
func (s *Server) failed(key, addr string, tokens []enrollv1.JoinToken) {
	s.Limiter.Failed(key)
	if s.Limiter.Allowed(key) || s.Recorder == nil {
		return
	}
	for i := range tokens {
		jt := &tokens[i]
		s.Recorder.AnnotatedEventf(jt, nil,
			eventMetadata(jt, enrollv1.EventRefusalKey, enrollapi.ReasonRateLimited, enrollv1.EventAddressKey, addr),
			corev1.EventTypeWarning, enrollv1.TokenAttemptsRateLimitedReason, eventAction,
			"failed attempts with join token %s from %s used up their budget; it is refused from there until the budget refills", jt.Name, addr)
	}
}

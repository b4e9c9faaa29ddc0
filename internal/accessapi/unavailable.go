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
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// retryAfterSeconds is the Retry-After of a 503 answered because
// kube-apiserver refused this replica's credentials.
const retryAfterSeconds = 1

// internalError is the answer to a request that failed on a read or write
// of kube-apiserver, or on a step of the operation itself: a 500, unless
// kube-apiserver refused this replica's own credentials (401).
//
// That refusal is a replica on its way out: its pod was deleted without a
// grace period (kubectl delete --force, a node's eviction), which revokes
// the pod's ServiceAccount token at once, while the process serves on for
// the kubelet's two seconds of grace over the connections kube-apiserver
// holds open to it. Nothing was written for the request (each operation
// writes once, last), so it is answered 503 with Retry-After: client-go,
// and so kubectl, send it again on their own, and the next try reaches a
// live replica once this one's connection closes.
func internalError(err error) error {
	if !apierrors.IsUnauthorized(err) {
		return apierrors.NewInternalError(err)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusServiceUnavailable,
		Reason: metav1.StatusReasonServiceUnavailable,
		Message: fmt.Sprintf("kube-apiserver refused this replica's credentials (%v): its pod is being deleted; "+
			"nothing was written, send the request again", err),
		Details: &metav1.StatusDetails{RetryAfterSeconds: retryAfterSeconds},
	}}
}

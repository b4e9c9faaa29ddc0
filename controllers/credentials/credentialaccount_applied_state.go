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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/engine"
)

// appliedEngines are the operator kinds the reconciler observes (their
// CRDs were installed when it started) and the cache it reads them from.
// Set by SetupWithManager.
type appliedEngines struct {
	kinds  []engine.Kind
	absent []engine.Kind
	reader client.Reader
}

// consumerState is what one consumer of the account Secret says about its
// current verifier: a status of the Applied condition, its reason and a
// message naming the consumer.
type consumerState struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func appliedTrue(reason, format string, args ...any) consumerState {
	return consumerState{metav1.ConditionTrue, reason, fmt.Sprintf(format, args...)}
}

func appliedFalse(reason, format string, args ...any) consumerState {
	return consumerState{metav1.ConditionFalse, reason, fmt.Sprintf(format, args...)}
}

func appliedUnknown(reason, format string, args ...any) consumerState {
	return consumerState{metav1.ConditionUnknown, reason, fmt.Sprintf(format, args...)}
}

// truncate bounds a message an operator wrote.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

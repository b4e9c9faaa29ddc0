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

// Package caller tells a command-line tool who its user is, as
// kube-apiserver authenticates them: the name a tool records as the author
// of what it writes.
package caller

import (
	"context"
	"errors"
	"fmt"

	authnv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Username asks kube-apiserver who the user of c is (a SelfSubjectReview,
// which every authenticated user may create).
func Username(ctx context.Context, c client.Client) (string, error) {
	review := &authnv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking kube-apiserver who you are (SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", errors.New("kube-apiserver did not say who you are (SelfSubjectReview with no username)")
	}
	return review.Status.UserInfo.Username, nil
}

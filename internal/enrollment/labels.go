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
	"fmt"
	"maps"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// LabelsAllowed returns nil when the policy allows every one of labels (a
// valid key the policy names, with a valid value among its values when it
// lists any), else an error naming the first label, by key order, that it
// does not: what an enrollment asking for them is refused with, and why a
// relabel is not established.
func LabelsAllowed(p *enrollv1.EnrollmentPolicy, labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q is not valid: %s", k, errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("the value of label %q is not valid: %s", k, errs[0])
		}
		i := slices.IndexFunc(p.Spec.AllowedLabels, func(r enrollv1.LabelRule) bool { return r.Key == k })
		if i < 0 {
			return fmt.Errorf("label %q is not allowed by enrollment policy %s", k, p.Name)
		}
		if vals := p.Spec.AllowedLabels[i].Values; len(vals) > 0 && !slices.Contains(vals, v) {
			return fmt.Errorf("label %s=%q is not allowed by enrollment policy %s (allowed: %v)", k, v, p.Name, vals)
		}
	}
	return nil
}

// AllowedLabels returns the labels of labels the policy allows, nil when
// none: what stays established of a workload's labels once its policy has
// stopped allowing some.
func AllowedLabels(p *enrollv1.EnrollmentPolicy, labels map[string]string) map[string]string {
	var out map[string]string
	for k, v := range labels {
		if LabelsAllowed(p, map[string]string{k: v}) != nil {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(labels))
		}
		out[k] = v
	}
	return out
}

// checkLabels refuses an enrollment asking for a label the policy does not
// allow.
func checkLabels(p *enrollv1.EnrollmentPolicy, labels map[string]string) *apiError {
	if err := LabelsAllowed(p, labels); err != nil {
		return &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonLabelsNotAllowed, msg: err.Error()}
	}
	return nil
}

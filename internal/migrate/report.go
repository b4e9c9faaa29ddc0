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
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/fieldowner"
)

// ReportFieldOwner is the field manager of the report ConfigMap.
const ReportFieldOwner = fieldowner.Migrate

// The report is one ConfigMap in the platform namespace whose data has one
// key per skipped release, <namespace>.<release> (a namespace has no dot),
// valued "<Reason>: <message>". A run replaces the entries of its scope
// (its namespace and release, when limited) by the releases it skipped, and
// keeps the others: a release that a later run migrates leaves the list.

// report returns the report's data after a run that planned releases, and
// writes it under Apply (a server-side apply under ReportFieldOwner).
func (o *Options) report(ctx context.Context, releases []Release) (map[string]string, error) {
	var cur corev1.ConfigMap
	err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.PlatformNamespace, Name: o.ReportConfigMap}, &cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", o.PlatformNamespace, o.ReportConfigMap, err)
	}
	listed := map[string]string{}
	for k, v := range cur.Data {
		if !o.inScope(k) {
			listed[k] = v
		}
	}
	for i := range releases {
		if s := releases[i].Skip; s != nil {
			listed[releases[i].Key()] = s.Reason + ": " + s.Message
		}
	}
	if !o.Apply {
		return listed, nil
	}
	cm := corev1ac.ConfigMap(o.ReportConfigMap, o.PlatformNamespace).
		WithLabels(map[string]string{"app.kubernetes.io/part-of": "credo", "app.kubernetes.io/component": "migration"}).
		WithData(listed)
	if err := o.Client.Apply(ctx, cm, client.ForceOwnership, client.FieldOwner(ReportFieldOwner)); err != nil {
		return nil, fmt.Errorf("writing ConfigMap %s/%s: %w", o.PlatformNamespace, o.ReportConfigMap, err)
	}
	return listed, nil
}

// inScope reports whether the report key k (<namespace>.<release>) is of a
// release this run looked at.
func (o *Options) inScope(k string) bool {
	ns, release, ok := strings.Cut(k, ".")
	if !ok {
		return false
	}
	return (o.Namespace == "" || ns == o.Namespace) && (o.Release == "" || release == o.Release)
}

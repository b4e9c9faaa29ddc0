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

package reconciler

import (
	"fmt"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// onObject is one event an objectRecorder saw, with the object it is on.
type onObject struct {
	on                     runtime.Object
	eventType, reason, msg string
	metadata               map[string]string
}

type objectRecorder struct{ events []onObject }

func (f *objectRecorder) Eventf(obj runtime.Object, related runtime.Object, eventType, reason, action, note string, args ...any) {
	f.AnnotatedEventf(obj, related, nil, eventType, reason, action, note, args...)
}

func (f *objectRecorder) AnnotatedEventf(obj runtime.Object, _ runtime.Object, md map[string]string, eventType, reason, _, note string, args ...any) {
	f.events = append(f.events, onObject{obj, eventType, reason, fmt.Sprintf(note, args...), md})
}

func TestAWarningIsRecordedOnTheReleaseTooANormalEventIsNot(t *testing.T) {
	g := NewWithT(t)
	rec := &objectRecorder{}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "tenant"}}
	ta := &trustv1.TrustAnchor{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "tenant"}}
	md := map[string]string{trustv1.EventReleaseKey: "db"}
	ev := Events{Recorder: rec, Action: "Test", Release: hr}

	_ = ev.Fail(ta, failedCondition, NewWaiting("Missing", "waiting for it"), md)
	_ = ev.Fail(ta, failedCondition, NewStalling("Refused", "refused"), md)
	_ = ev.Fail(ta, failedCondition, NewStalling("Refused", "refused"), md)
	ev.Record(ta, md, EventTypeNone, "Quiet", "nothing")
	ev.Warn(ta, md, "Repaired", "repaired %s", "it")
	g.Expect(rec.events).To(Equal([]onObject{
		{ta, corev1.EventTypeNormal, "Missing", "waiting for it", md},
		{ta, corev1.EventTypeWarning, "Refused", "refused", md},
		{hr, corev1.EventTypeWarning, "Refused", "refused", md},
		{ta, corev1.EventTypeWarning, "Repaired", "repaired it", md},
		{hr, corev1.EventTypeWarning, "Repaired", "repaired it", md},
	}), "a Normal event and a repeated failure are not recorded on the release")

	rec.events = nil
	Events{Recorder: rec, Action: "Test"}.Warn(ta, md, "Repaired", "repaired")
	g.Expect(rec.events).To(HaveLen(1), "no release, no second event")
}

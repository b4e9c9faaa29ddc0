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

package release

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// recorded is one event a fakeRecorder saw.
type recorded struct{ on, eventType, reason, msg string }

type fakeRecorder struct{ events []recorded }

func (f *fakeRecorder) Eventf(obj runtime.Object, related runtime.Object, eventType, reason, action, note string, args ...any) {
	f.AnnotatedEventf(obj, related, nil, eventType, reason, action, note, args...)
}

func (f *fakeRecorder) AnnotatedEventf(obj runtime.Object, _ runtime.Object, _ map[string]string, eventType, reason, _, note string, args ...any) {
	o := obj.(client.Object)
	f.events = append(f.events, recorded{o.GetNamespace() + "/" + o.GetName(), eventType, reason, fmt.Sprintf(note, args...)})
}

func TestNoticesAreRecordedOncePerChange(t *testing.T) {
	rec := &fakeRecorder{}
	n := &Notices{Recorder: rec, Action: "Test"}
	db := hr("postgres", nil)
	n.Report(db, "rule-a", "ChartUnresolved", "gone")
	n.Report(db, "rule-a", "ChartUnresolved", "gone")
	n.Report(db, "rule-b", "ChartUnresolved", "gone")
	n.Report(db, "rule-a", "UsernameRefused", "gone")
	n.Clear(client.ObjectKeyFromObject(db), "rule-a")
	n.Report(db, "rule-a", "UsernameRefused", "gone")
	n.Keep("rule-a", map[client.ObjectKey]bool{client.ObjectKeyFromObject(db): true})
	n.Report(db, "rule-a", "UsernameRefused", "gone")
	n.Keep("rule-a", nil)
	n.Report(db, "rule-a", "UsernameRefused", "gone")
	again := db.DeepCopy()
	again.UID = "u2"
	n.Report(again, "rule-a", "UsernameRefused", "gone")
	n.Report(db, "rule-a", "UsernameRefused", strings.Repeat("x", 5000))
	if len(rec.events) != 7 {
		t.Fatalf("events = %d, want 7 (a repeat of the same notice, kept, is no event): %+v", len(rec.events), rec.events)
	}
	for _, e := range rec.events {
		if e.on != "tenant/db" || e.eventType != "Warning" {
			t.Errorf("event %+v: want a Warning on tenant/db", e)
		}
	}
	if last := rec.events[6].msg; len(last) > maxNoticeLength {
		t.Errorf("a long message is %d bytes, more than %d", len(last), maxNoticeLength)
	}
}

func TestNotAppliedCountsByReasonAndNamesNoRelease(t *testing.T) {
	na := NotApplied{}
	if r, m := na.Condition("A"); r != "" || m != "" {
		t.Errorf("empty: %q %q", r, m)
	}
	a, b := client.ObjectKey{Namespace: "tenant-x", Name: "secret-name"}, client.ObjectKey{Namespace: "tenant-y", Name: "other"}
	na.Add("ChartUnresolved", a)
	na.Add("ChartUnresolved", a)
	na.Add("UsernameRefused", a)
	na.Add("UsernameRefused", b)
	reason, msg := na.Condition("UsernameRefused", "ChartUnresolved")
	want := "2 release(s) not applied in full (UsernameRefused 2, ChartUnresolved 1); each has a Warning event saying why: " +
		"kubectl get events -A --field-selector involvedObject.kind=HelmRelease,reason=UsernameRefused"
	if reason != "UsernameRefused" || msg != want {
		t.Errorf("Condition = %q, %q; want UsernameRefused, %q", reason, msg, want)
	}
	if strings.Contains(msg, "tenant-") || strings.Contains(msg, "secret-name") {
		t.Errorf("the message names a release: %q", msg)
	}
}

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

package embedded

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	fluxevents "github.com/fluxcd/pkg/runtime/events"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	enrollmentv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// A key of the store that no CA of the Secret names (a process stopped
// between generating it and writing the Secret) is reported once it has
// been unused for unusedKeyAge, by its id, once; never a key the Secret
// names, nor one unused for less (another replica's, on its way into the
// Secret). Nothing is destroyed.
func TestAKeyNoCANamesIsReportedOnceUnusedForMinutes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	keys := newMemKeys()
	recorder := fluxevents.NewFakeRecorder(10, false)
	in := newInstance(t, ns, recorder, func(o *Options) { o.Keys = keys })
	g.Expect(in.Reconcile(ctx)).To(Succeed())
	current := hex.EncodeToString(bundleCerts(t, getSecret(t, ns).Data["tls.crt"])[0].SubjectKeyId)

	in.reportUnusedKeys(ctx)
	g.Expect(recorder.GetEvents()).To(BeEmpty(), "every key of the store is named")

	_, orphan, err := keys.Generate()
	g.Expect(err).NotTo(HaveOccurred())
	in.reportUnusedKeys(ctx)
	in.clock.advance(unusedKeyAge - time.Minute)
	in.reportUnusedKeys(ctx)
	g.Expect(recorder.GetEvents()).To(BeEmpty(), "a key unused for less than unusedKeyAge may be on its way into the Secret")

	in.clock.advance(time.Minute)
	in.reportUnusedKeys(ctx)
	events := recorder.GetEvents()
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Type).To(Equal(corev1.EventTypeWarning))
	g.Expect(events[0].Reason).To(Equal(enrollmentv1.UnusedCAKeysReason))
	g.Expect(events[0].Message).To(ContainSubstring(hex.EncodeToString(orphan)))
	g.Expect(events[0].Message).NotTo(ContainSubstring(current))

	in.clock.advance(time.Hour)
	in.reportUnusedKeys(ctx)
	g.Expect(recorder.GetEvents()).To(BeEmpty(), "the same set is reported once")
	g.Expect(keys.ids()).To(ConsistOf(current, hex.EncodeToString(orphan)), "nothing is destroyed")
	g.Expect(keys.destroyed).To(BeEmpty())

	// Destroyed by hand, then another left: the new set is reported in its turn.
	g.Expect(keys.Destroy(orphan)).To(Succeed())
	_, second, err := keys.Generate()
	g.Expect(err).NotTo(HaveOccurred())
	in.reportUnusedKeys(ctx)
	g.Expect(recorder.GetEvents()).To(BeEmpty())
	in.clock.advance(unusedKeyAge)
	in.reportUnusedKeys(ctx)
	events = recorder.GetEvents()
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Message).To(ContainSubstring(hex.EncodeToString(second)))
}

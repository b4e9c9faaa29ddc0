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
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// platformValuesWriter is the tests' stand-in for the platform that owns
// spec.valuesFrom of its application releases: cozystack's
// ApplicationDefinition reconciler, which sets the list to what the
// definition declares, and its apps API, which rebuilds the HelmRelease
// with a plain Update. On every change of the release it watches, it sets
// spec.valuesFrom to its own list, whatever is there, with a plain Update
// (an Update that changes nothing is no change, as on the real API
// server). Every version of the release it sees is recorded.
type platformValuesWriter struct {
	mu   sync.Mutex
	list []helmv2.ValuesReference
	// seen are the versions of the release the watch delivered.
	seen []*helmv2.HelmRelease
}

// startPlatformValuesWriter starts the stand-in on hr with list; it stops
// when the test ends.
func startPlatformValuesWriter(t *testing.T, hr *helmv2.HelmRelease, list []helmv2.ValuesReference) *platformValuesWriter {
	t.Helper()
	g := NewWithT(t)
	w := &platformValuesWriter{list: list}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	var list2 helmv2.HelmReleaseList
	watcher, err := c.Watch(ctx, &list2, client.InNamespace(hr.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", hr.Name)})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); watcher.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range watcher.ResultChan() {
			got, ok := ev.Object.(*helmv2.HelmRelease)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			w.mu.Lock()
			w.seen = append(w.seen, got.DeepCopy())
			w.mu.Unlock()
			w.enforce(ctx, c, client.ObjectKeyFromObject(got))
		}
	}()
	return w
}

// enforce sets the release's list to the writer's, again on a conflict.
func (w *platformValuesWriter) enforce(ctx context.Context, c client.Client, key client.ObjectKey) {
	for range 5 {
		var hr helmv2.HelmRelease
		if err := c.Get(ctx, key, &hr); err != nil {
			return
		}
		want := w.List()
		if reflect.DeepEqual(hr.Spec.ValuesFrom, want) {
			return
		}
		hr.Spec.ValuesFrom = want
		if err := c.Update(ctx, &hr, client.FieldOwner("platform-stand-in")); !apierrors.IsConflict(err) {
			return
		}
	}
}

// List is the writer's list.
func (w *platformValuesWriter) List() []helmv2.ValuesReference {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]helmv2.ValuesReference(nil), w.list...)
}

// Set changes the writer's list (the platform's definition changed) and
// writes it.
func (w *platformValuesWriter) Set(hr *helmv2.HelmRelease, list []helmv2.ValuesReference) {
	w.mu.Lock()
	w.list = list
	w.mu.Unlock()
	w.enforce(context.Background(), env.Client, client.ObjectKeyFromObject(hr))
}

// versionsWith counts the versions of the release seen whose valuesFrom
// has entry: each is one write of it (the writer never lists it unless
// told to).
func (w *platformValuesWriter) versionsWith(entry helmv2.ValuesReference) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, hr := range w.seen {
		for _, v := range hr.Spec.ValuesFrom {
			if v == entry {
				n++
				break
			}
		}
	}
	return n
}

// credoWroteValuesFrom reports whether any version seen records credo's
// field manager owning spec.valuesFrom: credo wrote the list.
func (w *platformValuesWriter) credoWroteValuesFrom() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, hr := range w.seen {
		for _, mf := range hr.ManagedFields {
			if mf.Manager == CredentialFieldOwner && mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), `"f:valuesFrom"`) {
				return true
			}
		}
	}
	return false
}

// onlyLists reports whether every version seen has one of lists as its
// spec.valuesFrom: nobody but the writer changed it.
func (w *platformValuesWriter) onlyLists(lists ...[]helmv2.ValuesReference) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, hr := range w.seen {
		ok := false
		for _, l := range lists {
			ok = ok || reflect.DeepEqual(hr.Spec.ValuesFrom, l)
		}
		if !ok {
			return false
		}
	}
	return true
}

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

package platform

import (
	"context"
	"reflect"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ValuesFromFieldOwner is the stand-in writer's field manager.
const ValuesFromFieldOwner = "cozystack-api"

// ValuesFromWriter is a STAND-IN for the platform's writers of an
// application release's spec.valuesFrom (its ApplicationDefinition
// reconciler and its aggregated apps API): on every change of the release
// it watches, it sets the list to exactly its own with a plain Update of
// the whole object, as they do, dropping any entry it does not list. It
// records every version of the release it saw, so a test can tell what
// the list ever was and who wrote it.
type ValuesFromWriter struct {
	c      client.WithWatch
	key    client.ObjectKey
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	list   []helmv2.ValuesReference
	seen   []*helmv2.HelmRelease
	writes int
}

// StartValuesFromWriter starts the stand-in on the release key with list,
// as cfg's user; Stop ends it.
func StartValuesFromWriter(cfg *rest.Config, scheme *runtime.Scheme, key client.ObjectKey, list []helmv2.ValuesReference) (*ValuesFromWriter, error) {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var hrs helmv2.HelmReleaseList
	watcher, err := c.Watch(ctx, &hrs, client.InNamespace(key.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", key.Name)})
	if err != nil {
		cancel()
		return nil, err
	}
	w := &ValuesFromWriter{c: c, key: key, cancel: cancel, done: make(chan struct{}), list: list}
	go func() {
		defer close(w.done)
		defer watcher.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-watcher.ResultChan():
				if !ok {
					return
				}
				got, isRelease := ev.Object.(*helmv2.HelmRelease)
				if !isRelease || ev.Type == watch.Deleted {
					continue
				}
				w.mu.Lock()
				w.seen = append(w.seen, got.DeepCopy())
				w.mu.Unlock()
				w.enforce(ctx)
			}
		}
	}()
	w.enforce(ctx)
	return w, nil
}

// Stop ends the stand-in.
func (w *ValuesFromWriter) Stop() {
	w.cancel()
	<-w.done
}

// enforce sets the list when it differs, retrying a conflict a few times.
func (w *ValuesFromWriter) enforce(ctx context.Context) {
	for range 5 {
		var hr helmv2.HelmRelease
		if err := w.c.Get(ctx, w.key, &hr); err != nil {
			return
		}
		want := w.List()
		if reflect.DeepEqual(hr.Spec.ValuesFrom, want) {
			return
		}
		hr.Spec.ValuesFrom = want
		err := w.c.Update(ctx, &hr, client.FieldOwner(ValuesFromFieldOwner))
		if err == nil {
			w.mu.Lock()
			w.writes++
			w.mu.Unlock()
		}
		if !apierrors.IsConflict(err) {
			return
		}
	}
}

// List is the list the writer sets.
func (w *ValuesFromWriter) List() []helmv2.ValuesReference {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]helmv2.ValuesReference(nil), w.list...)
}

// Set changes the list, as a changed definition does, and writes it.
func (w *ValuesFromWriter) Set(list []helmv2.ValuesReference) {
	w.mu.Lock()
	w.list = list
	w.mu.Unlock()
	w.enforce(context.Background())
}

// Writes is how many times the writer rewrote the list.
func (w *ValuesFromWriter) Writes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// VersionsWith counts the versions seen whose list carried entry.
func (w *ValuesFromWriter) VersionsWith(entry helmv2.ValuesReference) int {
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

// ManagerWroteValuesFrom reports whether a version seen had manager own
// spec.valuesFrom in its managedFields.
func (w *ValuesFromWriter) ManagerWroteValuesFrom(manager string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, hr := range w.seen {
		for _, mf := range hr.ManagedFields {
			if mf.Manager == manager && mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), `"f:valuesFrom"`) {
				return true
			}
		}
	}
	return false
}

// OnlyLists reports whether every version seen had one of lists.
func (w *ValuesFromWriter) OnlyLists(lists ...[]helmv2.ValuesReference) bool {
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

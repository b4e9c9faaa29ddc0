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
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ValuesFromFieldOwner is the stand-in writer's field manager.
const ValuesFromFieldOwner = "cozystack-api"

// ValuesFromWriter is a STAND-IN for the platform's writers of an
// application release's spec.valuesFrom (its ApplicationDefinition
// reconciler and its apps API): whenever the release's list differs from
// List, it sets it to exactly List with a plain Update of the whole
// object, as they do, dropping any entry it does not list. It polls
// instead of watching: a stand-in, not a controller.
type ValuesFromWriter struct {
	Client  client.Client
	Release client.ObjectKey
	// List is what the platform's definition makes the list: its
	// cozystack-values entry, and the entries the definition declares.
	List []helmv2.ValuesReference

	mu     sync.Mutex
	writes int
}

// Writes is how many times the writer rewrote the list.
func (w *ValuesFromWriter) Writes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// Run rewrites the list every 100 ms, when it differs, until ctx is done.
func (w *ValuesFromWriter) Run(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		var hr helmv2.HelmRelease
		if err := w.Client.Get(ctx, w.Release, &hr); err == nil && !reflect.DeepEqual(hr.Spec.ValuesFrom, w.List) {
			hr.Spec.ValuesFrom = append([]helmv2.ValuesReference(nil), w.List...)
			if w.Client.Update(ctx, &hr, client.FieldOwner(ValuesFromFieldOwner)) == nil {
				w.mu.Lock()
				w.writes++
				w.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

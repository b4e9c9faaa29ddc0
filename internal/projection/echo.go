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

package projection

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Echoes remembers the digest of the ca.crt a Writer last wrote to each
// projection and the UID of its release, recorded before the write is sent, so that the watch events
// of that write (its echo) need not reconcile the release again: the
// reconcile that wrote it recorded it. The zero value is ready; a nil
// *Echoes remembers nothing.
type Echoes struct {
	mu      sync.Mutex
	written map[types.NamespacedName]written
}

// written is what a Writer wrote to a projection.
type written struct {
	digest  string
	release types.UID
}

// expect records that the projection key is being written with w.
func (e *Echoes) expect(key types.NamespacedName, w written) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.written == nil {
		e.written = map[types.NamespacedName]written{}
	}
	e.written[key] = w
}

// last returns what was last written to the projection key.
func (e *Echoes) last(key types.NamespacedName) (written, bool) {
	if e == nil {
		return written{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.written[key]
	return w, ok
}

// Forget drops what is remembered of the projection obj (deleted).
func (e *Echoes) Forget(obj client.Object) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.written, client.ObjectKeyFromObject(obj))
}

// Echo reports whether obj, a Secret's metadata as the cache holds it
// (CacheTransform), is a projection as this writer last wrote it: the
// digest last written, the label, the owner reference to the release, and
// no manager but this writer's. A
// reconcile would find it current; anything else (a change by anyone
// else, an owner reference removed, a foreign Secret, a write not
// remembered) is no echo.
func (w *Writer) Echo(obj client.Object) bool {
	last, ok := w.Echoes.last(client.ObjectKeyFromObject(obj))
	return ok && w.metadataCurrent(obj, last.digest, last.release) && w.onlyOurs(obj)
}

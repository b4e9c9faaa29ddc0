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

// Echoes remembers what a Writer last wrote to each projection: the digest
// of its ca.crt and its owner, recorded before the write is
// sent, and the resourceVersion the API server answered it with (or at
// which an uncached read found it current). The watch event of that version
// (its echo) need not reconcile the release again, and a Secret still at
// that version is known current without a read. The resourceVersion is
// what tells credo's write from anyone else's: a write that names credo's
// field manager and keeps the digest is still another version. The zero
// value is ready; a nil *Echoes remembers nothing.
type Echoes struct {
	mu      sync.Mutex
	written map[types.NamespacedName]written
}

// written is what a Writer wrote to a projection.
type written struct {
	digest string
	owner  ownerID
	// version is the resourceVersion of the write; empty until answered.
	version string
	// inFlight are the versions of events taken for the write's echo
	// before it was answered; doubt, that one of them was another.
	inFlight []string
	doubt    bool
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

// answered records the resourceVersion the write of w to the projection
// key was answered with, unless another write was expected since.
func (e *Echoes) answered(key types.NamespacedName, w written) {
	if e == nil || w.version == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cur, ok := e.written[key]; ok && cur.digest == w.digest && cur.owner == w.owner {
		for _, v := range cur.inFlight {
			w.doubt = w.doubt || v != w.version
		}
		e.written[key] = w
	}
}

// tentative records that an event of the projection key at version was
// taken for the echo of a write not answered yet; false when no write is
// in flight.
func (e *Echoes) tentative(key types.NamespacedName, version string) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.written[key]
	if !ok || w.version != "" {
		return false
	}
	w.inFlight = append(w.inFlight, version)
	e.written[key] = w
	return true
}

// doubted reports, once, whether an event taken for the echo of the last
// write to the projection key while it was in flight was of another
// version than the write's.
func (e *Echoes) doubted(key types.NamespacedName) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.written[key]
	if !ok || !w.doubt {
		return false
	}
	w.doubt = false
	e.written[key] = w
	return true
}

// current reports whether the projection key at resourceVersion version
// is what this writer last wrote or found current.
func (e *Echoes) current(key types.NamespacedName, version string) bool {
	w, ok := e.last(key)
	return ok && w.version != "" && w.version == version
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
func (e *Echoes) Forget(obj client.Object) { e.forget(client.ObjectKeyFromObject(obj)) }

func (e *Echoes) forget(key types.NamespacedName) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.written, key)
}

// Echo reports whether obj, a Secret's metadata as the cache holds it
// (CacheTransform), is a projection as this writer last wrote it: the
// resourceVersion its write was answered with, the digest last written,
// the label, the owner reference, and no manager but this
// writer's. A reconcile would find it current; anything else (a change by
// anyone else, an owner reference removed, a foreign Secret, a write not
// remembered) is no echo. The event of a write not answered yet (the
// watch can be faster than the response) is taken for its echo on its
// metadata, and its version is checked once the write is answered: Write
// reads and repairs the projection when it was another.
func (w *Writer) Echo(obj client.Object) bool {
	key := client.ObjectKeyFromObject(obj)
	last, ok := w.Echoes.last(key)
	if !ok || !w.metadataCurrent(obj, last.digest, last.owner) || !w.onlyOurs(obj) {
		return false
	}
	return w.Echoes.current(key, obj.GetResourceVersion()) || w.Echoes.tentative(key, obj.GetResourceVersion())
}

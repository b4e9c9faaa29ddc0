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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	enrollmentv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

const (
	// eventActionCheckKeys is the action of the UnusedCAKeys event.
	eventActionCheckKeys = "CheckKeys"
	// unusedKeyAge is how long a key must have been seen unused before it
	// is reported: far longer than a write of the Secret can take (the
	// API server ends a request after a minute), so that a key another
	// replica generated and is recording is never reported.
	unusedKeyAge = 5 * time.Minute
)

// KeyLister is a KeyStore that lists the ids of the CA keys it holds
// (pkcs11.Token). With one, Run reports the keys no CA of the Secret
// names (reportUnusedKeys).
type KeyLister interface {
	KeyIDs() ([][]byte, error)
}

// unusedKeys is what reportUnusedKeys remembers between two rounds of Run,
// which calls it from its one goroutine.
type unusedKeys struct {
	// since is when each id found unused at the last round was first
	// found so.
	since map[string]time.Time
	// reported is the set last reported, its ids sorted and joined.
	reported string
}

// reportUnusedKeys compares the keys of the store with the CAs of the
// Secret as the last reconciliation read it, and reports the keys no CA
// names once they have been unused for unusedKeyAge: an error log and a
// Warning event on the CA Secret, both naming them by id, once for each
// set. Such a key was left by a write of the Secret whose outcome was
// unknown and that was never stored (settleKey keeps its key, logged), or
// by a process stopped between generating the key and writing the Secret.
// Nothing signs with it, and it can be destroyed by hand
// (docs/guides/enrollment.md). credo never destroys one itself: a key
// another replica generated is unused until its write lands (hence the
// age), and a destroyed key a Secret names stops every replica.
func (c *CA) reportUnusedKeys(ctx context.Context) {
	lister, ok := c.opts.Keys.(KeyLister)
	snap := c.snap.Load()
	if !ok || snap == nil {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("secret", c.secretKey().String())
	ids, err := lister.KeyIDs()
	if err != nil {
		log.Error(err, "listing the CA keys of the key store")
		return
	}
	named := map[string]bool{}
	for _, a := range append([]*authority{snap.state.current}, snap.state.previous...) {
		named[hex.EncodeToString(a.cert.SubjectKeyId)] = true
	}
	now := c.now()
	since := map[string]time.Time{}
	var unused []string
	for _, id := range ids {
		h := hex.EncodeToString(id)
		if named[h] {
			continue
		}
		since[h] = now
		if t, ok := c.unused.since[h]; ok {
			since[h] = t
		}
		if now.Sub(since[h]) >= unusedKeyAge {
			unused = append(unused, h)
		}
	}
	c.unused.since = since
	slices.Sort(unused)
	set := strings.Join(unused, ",")
	if set == c.unused.reported {
		return
	}
	c.unused.reported = set
	if len(unused) == 0 {
		return
	}
	log.Error(nil, "the key store holds CA keys no CA of the Secret names; nothing signs with them, and they may be destroyed by hand",
		"keyIDs", unused)
	if c.recorder != nil {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.opts.Namespace, Name: c.opts.SecretName}}
		c.recorder.Eventf(secret, nil, corev1.EventTypeWarning, enrollmentv1.UnusedCAKeysReason, eventActionCheckKeys,
			"the key store holds %d CA key(s) no CA of this Secret names (ids %s): nothing signs with them, and they may be destroyed with the token's tools",
			len(unused), set)
	}
}

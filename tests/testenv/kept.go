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

package testenv

import (
	"context"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kept is an object a test expects left as it was (an upgrade, an
// uninstall, a reinstall): its UID and resourceVersion, read when
// recorded.
type Kept struct {
	What string
	Key  client.ObjectKey
	Obj  client.Object
	UID  string
	RV   string
}

// Record reads obj at key through c and remembers its UID and
// resourceVersion; what names it in failures.
func Record(g Gomega, c client.Reader, what string, key client.ObjectKey, obj client.Object) Kept {
	g.ExpectWithOffset(1, c.Get(context.Background(), key, obj)).To(Succeed(), what)
	return Kept{What: what, Key: key, Obj: obj, UID: string(obj.GetUID()), RV: obj.GetResourceVersion()}
}

// Same expects k's object to exist with the UID it had: neither deleted
// nor replaced, though it may have been written in place.
func (k Kept) Same(g Gomega, c client.Reader) {
	err := c.Get(context.Background(), k.Key, k.Obj)
	g.ExpectWithOffset(1, apierrors.IsNotFound(err)).To(BeFalse(), "%s was deleted", k.What)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred(), k.What)
	g.ExpectWithOffset(1, string(k.Obj.GetUID())).To(Equal(k.UID), "%s was replaced", k.What)
}

// Unchanged expects k's object to exist with the UID and resourceVersion
// it had: neither deleted, nor replaced, nor written.
func (k Kept) Unchanged(g Gomega, c client.Reader) {
	k.Same(g, c)
	g.ExpectWithOffset(1, k.Obj.GetResourceVersion()).To(Equal(k.RV), "%s was written", k.What)
}

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

package intern_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unique"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/intern"
)

// decoded returns a Secret decoded from JSON, as an informer decodes each
// object: none of its strings shared with another's.
func decoded(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	raw, err := json.Marshal(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "tenant-a", UID: types.UID("uid-" + name), ResourceVersion: "12345",
		Labels:          map[string]string{"credo.dev/release": "app", "long": strings.Repeat("v", 65)},
		Annotations:     map[string]string{"credo.dev/digest": "sha256:0"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Name: "app", UID: "u"}},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "credo-trust", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func labelKey(m map[string]string, want string) string {
	for k := range m {
		if k == want {
			return k
		}
	}
	return ""
}

func TestMetaSharesWhatRepeatsAndChangesNothing(t *testing.T) {
	a, b := decoded(t, "app.tenant-ca"), decoded(t, "app.tenant-ca")
	want := a.DeepCopy()
	// The unique package's table holds its copies weakly: a collection
	// between Meta(a) and Meta(b) could drop one. Handles held for the
	// test keep each in the table, as a stream of objects decoded between
	// two collections does.
	var held []unique.Handle[string]
	for _, s := range []string{"tenant-a", "app.tenant-ca", "credo.dev/release", "app", "credo.dev/digest", "sha256:0",
		"helm.toolkit.fluxcd.io/v2", "HelmRelease", "credo-trust", "v1"} {
		held = append(held, unique.Make(s))
	}
	defer runtime.KeepAlive(held)
	if same(a.Namespace, b.Namespace) {
		t.Fatal("two decoded objects already share their namespace: the test proves nothing")
	}
	intern.Meta(a)
	intern.Meta(b)
	if !equalMeta(a, want) {
		t.Fatalf("interning changed the metadata:\n got %+v\nwant %+v", a.ObjectMeta, want.ObjectMeta)
	}
	shared := map[string][2]string{
		"namespace":          {a.Namespace, b.Namespace},
		"name":               {a.Name, b.Name},
		"label key":          {labelKey(a.Labels, "credo.dev/release"), labelKey(b.Labels, "credo.dev/release")},
		"label value":        {a.Labels["credo.dev/release"], b.Labels["credo.dev/release"]},
		"annotation value":   {a.Annotations["credo.dev/digest"], b.Annotations["credo.dev/digest"]},
		"owner's kind":       {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"owner's name":       {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		"owner's apiVersion": {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"manager":            {a.ManagedFields[0].Manager, b.ManagedFields[0].Manager},
	}
	for what, pair := range shared {
		if !same(pair[0], pair[1]) {
			t.Errorf("the %s is not shared", what)
		}
	}
	// A release's name is shared across kinds: the owner reference's and
	// the label's value are one string.
	if !same(a.OwnerReferences[0].Name, a.Labels["credo.dev/release"]) {
		t.Error("the owner's name and the release label's value are not one string")
	}
	for what, pair := range map[string][2]string{
		"UID":              {string(a.UID), string(b.UID)},
		"resource version": {a.ResourceVersion, b.ResourceVersion},
		"long label value": {a.Labels["long"], b.Labels["long"]},
	} {
		if same(pair[0], pair[1]) {
			t.Errorf("the %s is shared; it should be left alone", what)
		}
	}
}

func equalMeta(a, b *corev1.Secret) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

func TestTransformRunsTheKindsOwnFirstAndPassesTombstones(t *testing.T) {
	var ran bool
	next := func(in any) (any, error) {
		ran = true
		in.(*corev1.Secret).Labels = nil
		return in, nil
	}
	out, err := intern.Transform(next)(decoded(t, "x"))
	if err != nil || !ran || out.(*corev1.Secret).Labels != nil {
		t.Fatalf("the kind's own transform did not run first: ran %v, labels %v, err %v", ran, out.(*corev1.Secret).Labels, err)
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/x"}
	if out, err := intern.Transform(nil)(tomb); err != nil || out != tomb {
		t.Fatalf("a tombstone did not pass unchanged: %v, %v", out, err)
	}
}

func TestCacheWrapsEveryTransform(t *testing.T) {
	var calls int
	own := func(in any) (any, error) { calls++; return in, nil }
	o := cache.Options{
		DefaultTransform: own,
		ByObject:         map[client.Object]cache.ByObject{&corev1.Secret{}: {Transform: own}, &corev1.ConfigMap{}: {}},
	}
	intern.Cache(&o)
	a, b := decoded(t, "x"), decoded(t, "x")
	_, _ = o.DefaultTransform(a)
	_, _ = o.ByObject[secretKey(o)].Transform(b)
	if calls != 2 || !same(a.Namespace, b.Namespace) {
		t.Fatalf("the transforms were not wrapped: %d calls, namespace shared %v", calls, same(a.Namespace, b.Namespace))
	}
	for obj, by := range o.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok && by.Transform != nil {
			t.Fatal("a kind without a transform of its own was given one: it would no longer get the default")
		}
	}
}

func secretKey(o cache.Options) client.Object {
	for obj := range o.ByObject {
		if _, ok := obj.(*corev1.Secret); ok {
			return obj
		}
	}
	return nil
}

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

package shard

import (
	"context"
	"testing"

	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func mustShard(t *testing.T, selector string) Shard {
	t.Helper()
	s, err := New(fluxcontroller.WatchOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func labelled(l map[string]string) *metav1.ObjectMeta { return &metav1.ObjectMeta{Labels: l} }

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		selector string
		sharded  bool
		keys     []string
		wantErr  bool
	}{
		{name: "no selector is the unsharded shard", selector: "", keys: []string{Key}},
		{name: "one shard of the Flux convention", selector: Key + "=shard1", sharded: true, keys: []string{Key}},
		{name: "the main shard takes what no shard key names", selector: "!" + Key, sharded: true, keys: []string{Key}},
		{name: "other keys of the selector are copied too", selector: Key + " in (shard1,shard2),tier=gold", sharded: true, keys: []string{Key, "tier"}},
		{name: "an invalid selector is refused", selector: "a=b=c", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s, err := New(fluxcontroller.WatchOptions{LabelSelector: tt.selector})
			if tt.wantErr {
				g.Expect(err).To(MatchError(ContainSubstring("--watch-label-selector")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Sharded()).To(Equal(tt.sharded))
			g.Expect(s.Keys()).To(Equal(tt.keys))
		})
	}
}

func TestServes(t *testing.T) {
	tests := []struct {
		name     string
		selector string
		labels   map[string]string
		want     bool
	}{
		{name: "unsharded serves an unlabelled object", selector: "", labels: nil, want: true},
		{name: "unsharded serves a labelled object", selector: "", labels: map[string]string{Key: "shard1"}, want: true},
		{name: "shard1 serves its own", selector: Key + "=shard1", labels: map[string]string{Key: "shard1"}, want: true},
		{name: "shard1 does not serve shard2's", selector: Key + "=shard1", labels: map[string]string{Key: "shard2"}, want: false},
		{name: "shard1 does not serve an unlabelled object", selector: Key + "=shard1", labels: nil, want: false},
		{name: "the main shard serves an unlabelled object", selector: "!" + Key, labels: nil, want: true},
		{name: "the main shard does not serve shard1's", selector: "!" + Key, labels: map[string]string{Key: "shard1"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(mustShard(t, tt.selector).Serves(labelled(tt.labels))).To(Equal(tt.want))
		})
	}
}

func TestStamp(t *testing.T) {
	tests := []struct {
		name        string
		selector    string
		obj, owner  map[string]string
		want        map[string]string
		wantChanged bool
	}{
		{
			name: "copies the owner's shard key and keeps other labels", selector: Key + "=shard1",
			obj: map[string]string{"app": "db"}, owner: map[string]string{Key: "shard1", "team": "x"},
			want: map[string]string{"app": "db", Key: "shard1"}, wantChanged: true,
		},
		{
			name: "moves the key to the owner's new shard", selector: Key + "=shard1",
			obj: map[string]string{Key: "shard1"}, owner: map[string]string{Key: "shard2"},
			want: map[string]string{Key: "shard2"}, wantChanged: true,
		},
		{
			name: "removes a key the owner no longer has", selector: "!" + Key,
			obj: map[string]string{Key: "shard1", "app": "db"}, owner: map[string]string{},
			want: map[string]string{"app": "db"}, wantChanged: true,
		},
		{
			name: "changes nothing when in step", selector: Key + "=shard1",
			obj: map[string]string{Key: "shard1"}, owner: map[string]string{Key: "shard1"},
			want: map[string]string{Key: "shard1"}, wantChanged: false,
		},
		{
			name: "copies every key of the selector", selector: Key + "=shard1,tier=gold",
			obj: nil, owner: map[string]string{Key: "shard1", "tier": "gold", "other": "x"},
			want: map[string]string{Key: "shard1", "tier": "gold"}, wantChanged: true,
		},
		{
			name: "unsharded still copies the Flux shard key", selector: "",
			obj: nil, owner: map[string]string{Key: "shard3"},
			want: map[string]string{Key: "shard3"}, wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := labelled(tt.obj)
			g.Expect(mustShard(t, tt.selector).Stamp(obj, labelled(tt.owner))).To(Equal(tt.wantChanged))
			if len(tt.want) == 0 {
				g.Expect(obj.Labels).To(BeEmpty())
				return
			}
			g.Expect(obj.Labels).To(Equal(tt.want))
		})
	}
}

func TestByObject(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Shard{}.ByObject(&corev1.ConfigMap{})).To(BeNil(), "an unsharded cache is not restricted")
	s := mustShard(t, Key+"=shard1")
	cm := &corev1.ConfigMap{}
	by := s.ByObject(cm)
	g.Expect(by).To(HaveLen(1))
	g.Expect(by[cm].Label.String()).To(Equal(Key + "=shard1"))
}

func TestFollowAndElsewhere(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: "ns", Labels: map[string]string{Key: "shard2"}}}
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "anchor", Namespace: "ns", Labels: map[string]string{Key: "shard1", "app": "db"}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(owner, dep).Build()
	shard1 := mustShard(t, Key+"=shard1")
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")

	m, err := shard1.Elsewhere(ctx, c, gvk, client.ObjectKeyFromObject(owner))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).NotTo(BeNil(), "shard2's object is elsewhere for shard1")
	m, err = mustShard(t, Key+"=shard2").Elsewhere(ctx, c, gvk, client.ObjectKeyFromObject(owner))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).To(BeNil(), "shard2 serves it")
	m, err = shard1.Elsewhere(ctx, c, gvk, client.ObjectKey{Namespace: "ns", Name: "gone"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).To(BeNil(), "a missing object is nowhere")

	moved, err := shard1.Follow(ctx, c, dep, owner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved).To(BeTrue())
	var got corev1.ConfigMap
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(dep), &got)).To(Succeed())
	g.Expect(got.Labels).To(Equal(map[string]string{Key: "shard2", "app": "db"}))
	moved, err = shard1.Follow(ctx, c, &got, owner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved).To(BeFalse(), "nothing to move once in step")
}

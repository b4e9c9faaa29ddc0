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

// Package platform holds stand-ins for the platform's own controllers,
// written for credo's tests from what the platform documents of them
// (docs/design/cozystack-platform.md): never the platform's code, which is
// not a served module. Each behaves as the original does where credo meets
// it, and counts what it did, so a test can tell that credo and the
// platform never wrote over each other.
package platform

import (
	"bytes"
	"context"
	"crypto/x509"
	stdpem "encoding/pem"
	"fmt"
	"regexp"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/tenantprojection"
)

// TenantProjectionFieldOwner is the stand-in's field manager, as the
// platform's controller writes under its binary's name.
const TenantProjectionFieldOwner = "cozystack-controller"

// TenantCALabel is the label the platform stamps on every projection.
const TenantCALabel = tenantprojection.Group + "/tenant-ca"

// TenantProjectionController is a STAND-IN for the platform's cacert
// controller (cozystack's internal/controller/cacert): for each
// TenantProjection with a release label it projects the CACert source into
// <release>.tenant-ca, re-encoded, labelled with TenantCALabel and
// CopyLabel, annotated with SourceAnnotation and SelectorsAnnotation, and
// owner-referenced to the sentinel (controller: true). A Secret there that
// is not its own (Opaque and owner-referenced to the sentinel by name) is
// a collision: never written, counted, and Ready=False
// ProjectionCollision. Its own projection's drift is repaired with a plain
// Update that merges labels and annotations and replaces data and owner
// references. It polls instead of watching: a stand-in, not a controller.
type TenantProjectionController struct {
	Client client.Client
	// Namespace limits it to one namespace.
	Namespace string

	mu                       sync.Mutex
	creates, updates, denied int
}

// Counts are what the stand-in did: projections created and updated, and
// collisions met.
func (c *TenantProjectionController) Counts() (creates, updates, collisions int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creates, c.updates, c.denied
}

// Run reconciles every sentinel every 100 ms until ctx is done.
func (c *TenantProjectionController) Run(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		l := tenantprojection.NewList()
		if err := c.Client.List(ctx, l, client.InNamespace(c.Namespace)); err == nil {
			for i := range l.Items {
				c.reconcile(ctx, tenantprojection.Decode(&l.Items[i]))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *TenantProjectionController) reconcile(ctx context.Context, s tenantprojection.Sentinel) {
	key := client.ObjectKey{Namespace: s.Namespace, Name: s.Name}
	ready := func(ok bool, reason, msg string) {
		st := metav1.ConditionFalse
		if ok {
			st = metav1.ConditionTrue
		}
		_ = tenantprojection.SetReady(ctx, c.Client, c.Client, key, st, reason, msg, TenantProjectionFieldOwner)
	}
	if s.Release == "" || len(s.Sources) != 1 {
		ready(false, tenantprojection.NoReleaseReason, "no release label or not one CACert entry")
		return
	}
	src := s.Sources[0]
	var source corev1.Secret
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: src.SecretName}, &source); err != nil {
		ready(false, tenantprojection.SourceNotFoundReason, "source Secret not found")
		return
	}
	chain, err := rebuild(source.Data[src.Key])
	if err != nil {
		ready(false, tenantprojection.SourceRejectedReason, err.Error())
		return
	}
	name := s.Release + ".tenant-ca"
	ref := s.OwnerReference()
	var cur corev1.Secret
	err = c.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &cur)
	switch {
	case apierrors.IsNotFound(err):
		created := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: s.Namespace,
				Labels:          map[string]string{TenantCALabel: "true", tenantprojection.CopyLabel: "true"},
				Annotations:     map[string]string{tenantprojection.SourceAnnotation: s.Namespace + "/" + src.SecretName, tenantprojection.SelectorsAnnotation: ""},
				OwnerReferences: []metav1.OwnerReference{ref},
			},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"ca.crt": chain},
		}
		if c.Client.Create(ctx, created, client.FieldOwner(TenantProjectionFieldOwner)) == nil {
			c.count(&c.creates)
		}
	case err != nil:
		return
	case !ours(&cur, s.Name):
		c.count(&c.denied)
		ready(false, tenantprojection.ProjectionCollisionReason, "a Secret not created by the CA extraction controller sits at "+name)
		return
	case !current(&cur, chain, s, src.SecretName):
		next := cur.DeepCopy()
		if next.Labels == nil {
			next.Labels = map[string]string{}
		}
		if next.Annotations == nil {
			next.Annotations = map[string]string{}
		}
		next.Labels[TenantCALabel], next.Labels[tenantprojection.CopyLabel] = "true", "true"
		next.Annotations[tenantprojection.SourceAnnotation] = s.Namespace + "/" + src.SecretName
		next.Annotations[tenantprojection.SelectorsAnnotation] = ""
		next.Data = map[string][]byte{"ca.crt": chain}
		next.OwnerReferences = []metav1.OwnerReference{ref}
		if c.Client.Update(ctx, next, client.FieldOwner(TenantProjectionFieldOwner)) == nil {
			c.count(&c.updates)
		}
	}
	ready(true, tenantprojection.ProjectedReason, "projected")
}

func (c *TenantProjectionController) count(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// ours is the platform's test of its own projection: Opaque, and an owner
// reference to the sentinel of that name (not its UID).
func ours(s *corev1.Secret, sentinel string) bool {
	if s.Type != corev1.SecretTypeOpaque {
		return false
	}
	ref, ok := tenantprojection.PlatformOwner(s)
	return ok && ref.Name == sentinel
}

// current is the platform's no-op test: data, both labels, the source
// annotation and exactly the one owner reference.
func current(s *corev1.Secret, chain []byte, sentinel tenantprojection.Sentinel, source string) bool {
	return bytes.Equal(s.Data["ca.crt"], chain) && len(s.Data) == 1 &&
		s.Labels[TenantCALabel] == "true" && s.Labels[tenantprojection.CopyLabel] == "true" &&
		s.Annotations[tenantprojection.SourceAnnotation] == sentinel.Namespace+"/"+source &&
		len(s.OwnerReferences) == 1 && s.OwnerReferences[0].UID == sentinel.OwnerReference().UID
}

var privateKey = regexp.MustCompile(`(?i)-----BEGIN [A-Z0-9 ]*PRIVATE KEY`)

// rebuild is the platform's guard and re-encoding: no private key, only
// CERTIFICATE blocks that parse, each re-encoded without headers.
func rebuild(v []byte) ([]byte, error) {
	if privateKey.Match(v) {
		return nil, fmt.Errorf("the source holds a private key")
	}
	var out []byte
	rest := bytes.TrimSpace(v)
	for len(rest) > 0 {
		var b *stdpem.Block
		b, rest = stdpem.Decode(rest)
		if b == nil || b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("not only CERTIFICATE blocks")
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, err
		}
		out = append(out, stdpem.EncodeToMemory(&stdpem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})...)
		rest = bytes.TrimSpace(rest)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no certificate")
	}
	return out, nil
}

// Sentinel is a TenantProjection as a chart written for the platform
// renders it for release in ns: named <release>-ca, one CACert entry naming
// source, labelled by helm-controller with the release's name.
func Sentinel(ns, release, source string) *unstructured.Unstructured {
	u := tenantprojection.New()
	u.SetNamespace(ns)
	u.SetName(release + "-ca")
	u.SetLabels(map[string]string{tenantprojection.ReleaseLabel: release, "helm.toolkit.fluxcd.io/namespace": ns})
	u.Object["spec"] = map[string]any{"projections": []any{map[string]any{"type": tenantprojection.TypeCACert, "sourceSecretName": source}}}
	return u
}

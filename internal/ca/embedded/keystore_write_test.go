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
	"errors"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A write of the Secret that fails ambiguously (a timeout, a 5xx, a
// cancelled context) may have been stored: the key generated for it is
// destroyed only once the Secret, read again, names another CA and the
// write can no longer land. A refused write destroys it at once. Whatever
// happened, the install is never left with a Secret whose key the store
// has lost: another replica signs with it.
func TestAFailedWriteDestroysTheNewKeyOnlyWhenNoSecretNamesIt(t *testing.T) {
	timeout := apierrors.NewTimeoutError("the write took too long (test)", 1)
	gr := schema.GroupResource{Resource: "secrets"}
	for _, tc := range []struct {
		name string
		// create fails the Secret's creation; otherwise a rotation's update.
		create bool
		// stored: the API server stored the write before the error.
		stored bool
		// movedOn: another replica writes the Secret before the error.
		movedOn bool
		// readBackFails: reads of the Secret fail after the error.
		readBackFails bool
		err           error
		wantErr       bool
		wantKept      bool
	}{
		{name: "a Secret created despite a timeout keeps its key", create: true, stored: true, err: timeout, wantKept: true},
		{name: "a rotation stored despite a 5xx keeps the new key", stored: true,
			err: apierrors.NewInternalError(errors.New("etcd leader changed (test)")), wantKept: true},
		{name: "a rotation stored before the context was cancelled keeps the new key", stored: true, err: context.Canceled, wantKept: true},
		{name: "a rotation whose Secret cannot be read back keeps the new key", err: context.DeadlineExceeded,
			readBackFails: true, wantErr: true, wantKept: true},
		{name: "a rotation whose Secret is unchanged may still land and keeps the new key", err: timeout, wantErr: true, wantKept: true},
		{name: "a rotation overtaken by another replica's write destroys the new key", err: timeout, movedOn: true, wantErr: true},
		{name: "a creation overtaken by another replica's destroys the new key", create: true, err: timeout, movedOn: true, wantErr: true},
		{name: "a refused rotation destroys the new key", err: apierrors.NewForbidden(gr, DefaultSecretName, errors.New("denied (test)")),
			wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			keys := newMemKeys()
			opts := NewOptions()
			opts.Namespace = "credo-system"
			opts.Keys = keys
			var armed, readsFail atomic.Bool
			var failedID []byte
			// fail fails the armed write with tc.err, having stored it or not.
			fail := func(inner client.WithWatch, obj client.Object, write func() error) error {
				if !armed.CompareAndSwap(true, false) {
					return write()
				}
				failedID = bundleCerts(t, obj.(*corev1.Secret).Data[corev1.TLSCertKey])[0].SubjectKeyId
				if tc.stored {
					g.Expect(write()).To(Succeed())
				}
				if tc.movedOn {
					other, err := New(opts, inner, inner, nil)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(other.Rotate(ctx)).To(Succeed())
				}
				readsFail.Store(tc.readBackFails)
				return tc.err
			}
			inner := fake.NewClientBuilder().Build()
			c := interceptor.NewClient(inner, interceptor.Funcs{
				Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, o ...client.CreateOption) error {
					return fail(cl, obj, func() error { return cl.Create(ctx, obj, o...) })
				},
				Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, o ...client.UpdateOption) error {
					return fail(cl, obj, func() error { return cl.Update(ctx, obj, o...) })
				},
				Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
					if readsFail.Load() {
						return errors.New("the API server is unreachable (test)")
					}
					return cl.Get(ctx, key, obj, o...)
				},
			})
			authority, err := New(opts, c, c, nil)
			g.Expect(err).NotTo(HaveOccurred())
			if !tc.create {
				g.Expect(authority.Reconcile(ctx)).To(Succeed())
			}
			armed.Store(true)
			if tc.create {
				err = authority.Reconcile(ctx)
			} else {
				err = authority.Rotate(ctx)
			}
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(failedID).NotTo(BeNil(), "the write failed")
			if tc.wantKept {
				g.Expect(keys.ids()).To(ContainElement(hex.EncodeToString(failedID)))
				g.Expect(keys.destroyed).To(BeEmpty())
			} else {
				g.Expect(keys.ids()).NotTo(ContainElement(hex.EncodeToString(failedID)))
				g.Expect(keys.destroyed).To(Equal([]string{hex.EncodeToString(failedID)}))
			}
			if tc.readBackFails {
				g.Expect(env.Logs.String()).To(ContainSubstring(hex.EncodeToString(failedID)), "the kept key's id is logged")
			}

			// Another replica reads the Secret as it is and signs with its key.
			readsFail.Store(false)
			replica, err := New(opts, inner, inner, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(replica.Reconcile(ctx)).To(Succeed())
			_, err = replica.Sign(ctx, newRequest(t, time.Hour))
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

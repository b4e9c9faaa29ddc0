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

package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StartControllerManager starts kube-controller-manager (as Start does) on
// an Environment started with Options.NoControllerManager, for a caller that
// installs CRDs first: its garbage collector discovers resource types at
// start and then only every 30 seconds.
func (e *Environment) StartControllerManager(ctx context.Context) error {
	if e.kcm != nil {
		return fmt.Errorf("kube-controller-manager is already running")
	}
	assets, err := AssetsDir()
	if err != nil {
		return err
	}
	return e.startControllerManager(ctx, filepath.Join(assets, "kube-controller-manager"))
}

// startControllerManager runs kube-controller-manager with the garbage
// collector, the namespace controller and the clusterrole-aggregation
// controller (which folds roles labelled aggregate-to-view/edit/admin, as
// credo ships, into the built-in view, edit and admin roles) as a
// system:masters user, and waits until its garbage collector has synced and
// deletes dependents.
func (e *Environment) startControllerManager(ctx context.Context, binary string) error {
	kubeconfig, err := e.WriteKubeconfig("kube-controller-manager", []string{"system:masters"}, "kube-controller-manager.kubeconfig")
	if err != nil {
		return err
	}
	e.kcm, err = e.StartProcess("kube-controller-manager", binary, nil,
		"--kubeconfig="+kubeconfig,
		"--controllers=garbagecollector,namespace,clusterrole-aggregation",
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--concurrent-gc-syncs=5",
	)
	if err != nil {
		return err
	}
	return e.waitForGarbageCollector(ctx, 2*time.Minute)
}

// waitForGarbageCollector creates a throwaway owner and dependent in the
// default namespace, deletes the owner, and waits until the dependent is
// gone: the proof that the garbage collector's graph is built.
func (e *Environment) waitForGarbageCollector(ctx context.Context, timeout time.Duration) error {
	name := "credo-gc-probe-" + rand.String(6)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault}}
	if err := e.Client.Create(ctx, owner); err != nil {
		return fmt.Errorf("creating GC probe owner: %w", err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name + "-dependent", Namespace: metav1.NamespaceDefault,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if err := e.Client.Create(ctx, dependent); err != nil {
		return fmt.Errorf("creating GC probe dependent: %w", err)
	}
	if err := e.Client.Delete(ctx, owner); err != nil {
		return fmt.Errorf("deleting GC probe owner: %w", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := e.kcm.FailIfExited(); err != nil {
			return false, err
		}
		err := e.Client.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-controller-manager's garbage collector (log: %s): %w", e.kcm.LogPath(), err)
	}
	return nil
}

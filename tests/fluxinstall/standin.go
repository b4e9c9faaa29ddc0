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

// Package fluxinstall is what the tests that install a release through
// Flux share: the stand-in for kubelet and the deployment controller that
// runs a Deployment's binary as a process (RunDeployment), and the test
// overlays of config/samples/flux (RenderSample, AccessAPI). tests/release
// and tests/upgrade use it.
package fluxinstall

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/ports"
)

// The control plane has no kubelet, container runtime or deployment
// controller: a Deployment never rolls out by itself. RunDeployment stands
// in for them, and only for them: it runs the binary of the Deployment's
// container from binDir (a release's directory of binaries for this
// machine's platform: the bytes the image carries) with the container's
// args and env, as the Deployment's ServiceAccount, and once the process
// answers its readiness probe writes the status the deployment controller
// would. What cannot hold outside a pod is rewritten, and only that:
//   - listen addresses (":8080") become free loopback ports;
//   - --enable-leader-election is dropped: outside a pod there is no
//     namespace file for controller-runtime to find the lease's namespace;
//   - --events-addr, a cluster DNS name of notification-controller, becomes
//     the address of the real notification-controller on loopback;
//   - extra flags (the access API's loopback port and cert dir) are added,
//     after the container's: the last of a flag given twice wins.
func RunDeployment(ctx context.Context, env *controlplane.Environment, binDir string, d *appsv1.Deployment, eventsURL string, extra ...string) (*controlplane.Process, error) {
	c := d.Spec.Template.Spec.Containers[0]
	vars := map[string]string{}
	var environ []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			v = d.Namespace
		}
		vars[e.Name] = v
		environ = append(environ, e.Name+"="+v)
	}
	var args []string
	var health string
	for _, a := range c.Args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		name, value, _ := strings.Cut(a, "=")
		switch {
		case name == "--enable-leader-election":
			continue
		case name == "--events-addr":
			a = name + "=" + eventsURL
		case strings.HasSuffix(name, "-addr") && strings.HasPrefix(value, ":"):
			addr, err := ports.Addr()
			if err != nil {
				return nil, err
			}
			a = name + "=" + addr
			if name == "--health-addr" {
				health = addr
			}
		}
		args = append(args, a)
	}
	if health == "" || len(c.Command) == 0 {
		return nil, fmt.Errorf("deployment %s: no command or --health-addr", d.Name)
	}
	user, groups := controlplane.ServiceAccountUser(d.Namespace, d.Spec.Template.Spec.ServiceAccountName)
	kubeconfig, err := env.WriteKubeconfig(user, groups, d.Name+".kubeconfig")
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(binDir, filepath.Base(c.Command[0]))
	p, err := env.StartProcess(d.Name, binary, append(environ, "KUBECONFIG="+kubeconfig), append(args, extra...)...)
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(ctx, "http://"+health+"/readyz", time.Minute); err != nil {
		_ = p.Stop(time.Second)
		return nil, err
	}
	return p, markRolledOut(ctx, env, d)
}

// markRolledOut writes the status the deployment controller writes once
// every replica of the current generation is ready and available.
func markRolledOut(ctx context.Context, env *controlplane.Environment, d *appsv1.Deployment) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		replicas := ptr.Deref(d.Spec.Replicas, 1)
		now := metav1.Now()
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation,
			Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
					LastUpdateTime: now, LastTransitionTime: now},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
					LastUpdateTime: now, LastTransitionTime: now},
			},
		}
		return env.Client.Status().Update(ctx, d, client.FieldOwner("deployment-controller-stand-in"))
	})
}

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

// Command incluster is an in-cluster client for tests/node: with
// rest.InClusterConfig (KUBERNETES_SERVICE_HOST/PORT, the ServiceAccount
// token and ca.crt kubelet mounts), as credo's controllers connect, it
// prints the API server's version, the pods of its namespace (which its
// ServiceAccount may list) and the outcome of listing namespaces (which it
// may not). It exits non-zero on any error but a Forbidden list.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// namespaceFile is where kubelet mounts the pod's namespace.
const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func main() {
	if err := run(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster config: %w", err)
	}
	fmt.Printf("host: %s\nca: %s\n", cfg.Host, cfg.CAFile)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("GET /version: %w", err)
	}
	fmt.Printf("version: %s\n", v.GitVersion)
	ns, err := os.ReadFile(namespaceFile)
	if err != nil {
		return err
	}
	pods, err := cs.CoreV1().Pods(string(ns)).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods in %s: %w", ns, err)
	}
	fmt.Printf("pods in %s: %d\n", ns, len(pods.Items))
	_, err = cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		fmt.Printf("list namespaces: Forbidden: %v\n", err)
	case err != nil:
		return fmt.Errorf("listing namespaces: %w", err)
	default:
		fmt.Println("list namespaces: allowed")
	}
	return nil
}

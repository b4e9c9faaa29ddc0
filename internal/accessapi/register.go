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

package accessapi

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// APIServiceName is the name of the APIService of access.credo.dev/v1alpha1.
var APIServiceName = accessv1.GroupVersion.Version + "." + accessv1.GroupVersion.Group

// Registration describes how kube-apiserver reaches a server that runs
// outside the cluster network (the in-process server of the integration
// suites; `make dev` and the e2e suite apply config/apiservice instead):
// through a Service of type ExternalName, which kube-apiserver resolves to
// ExternalName:Port.
type Registration struct {
	// ServiceName and ServiceNamespace name the Service; defaults
	// DefaultServiceName and DefaultServiceNamespace.
	ServiceName      string
	ServiceNamespace string
	// ExternalName is the host the server listens on; default "localhost".
	ExternalName string
	// Port is the server's port.
	Port int32
	// CABundle is the PEM of the CA of the server's serving certificate.
	CABundle []byte
	// Timeout bounds the wait for the APIService to be Available; default a minute.
	Timeout time.Duration
}

func registrationClient(cfg *rest.Config) (client.Client, error) {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	return client.New(cfg, client.Options{Scheme: s})
}

// Register creates or updates the ExternalName Service and the APIService
// v1alpha1.access.credo.dev (caBundle checked, never insecureSkipTLSVerify),
// then waits until kube-apiserver reports the APIService Available.
func Register(ctx context.Context, cfg *rest.Config, r Registration) error {
	if r.ServiceName == "" {
		r.ServiceName = DefaultServiceName
	}
	if r.ServiceNamespace == "" {
		r.ServiceNamespace = DefaultServiceNamespace
	}
	if r.ExternalName == "" {
		r.ExternalName = "localhost"
	}
	if r.Timeout == 0 {
		r.Timeout = time.Minute
	}
	if len(r.CABundle) == 0 || r.Port == 0 {
		return fmt.Errorf("registering the access API needs its port and CA bundle")
	}
	c, err := registrationClient(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ServiceNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", r.ServiceNamespace, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: r.ServiceName, Namespace: r.ServiceNamespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, svc, func() error {
		svc.Spec.Type = corev1.ServiceTypeExternalName
		svc.Spec.ExternalName = r.ExternalName
		svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: r.Port}}
		return nil
	}); err != nil {
		return fmt.Errorf("writing Service %s/%s: %w", r.ServiceNamespace, r.ServiceName, err)
	}
	as := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: APIServiceName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, as, func() error {
		port := r.Port
		as.Spec = apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: r.ServiceNamespace, Name: r.ServiceName, Port: &port},
			Group:                accessv1.GroupVersion.Group,
			Version:              accessv1.GroupVersion.Version,
			CABundle:             r.CABundle,
			GroupPriorityMinimum: 1000,
			VersionPriority:      15,
		}
		return nil
	}); err != nil {
		return fmt.Errorf("writing APIService %s: %w", APIServiceName, err)
	}
	return WaitAvailable(ctx, cfg, r.Timeout)
}

// WaitAvailable waits until kube-apiserver reports the APIService
// v1alpha1.access.credo.dev Available and lists the group version in its
// aggregated OpenAPI, each within timeout: then a request through
// kube-apiserver (kubectl credo mint, kubectl create -f mint.yaml) reaches
// the access API server. However the APIService was installed (Register,
// or config/apiservice applied).
func WaitAvailable(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	c, err := registrationClient(cfg)
	if err != nil {
		return err
	}
	as := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: APIServiceName}}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(as), as); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range as.Status.Conditions {
			if cond.Type == apiregistrationv1.Available {
				last = cond.Reason + ": " + cond.Message
				return cond.Status == apiregistrationv1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for APIService %s to be Available (last: %s): %w", APIServiceName, last, err)
	}
	return waitForOpenAPI(ctx, cfg, timeout)
}

// waitForOpenAPI waits until kube-apiserver's aggregated OpenAPI v3 lists
// the group version, a few seconds after the APIService is Available:
// kubectl validates a manifest against it (or asks for fieldValidation,
// which it finds there) before sending it.
func waitForOpenAPI(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	path := "apis/" + accessv1.GroupVersion.String()
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return false, nil
		}
		_, ok := paths[path]
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-apiserver's OpenAPI v3 to list %s: %w", path, err)
	}
	return nil
}

// GrantDelegatedAuth binds subject to what an aggregated API server needs
// to delegate authentication and authorization to kube-apiserver: the
// system:auth-delegator ClusterRole (SubjectAccessReview; the TokenReview it
// also grants goes unused, as the server authenticates only what
// kube-apiserver proxies) and the extension-apiserver-authentication-reader
// Role in kube-system (the request-header configuration). config/apiservice holds the
// same bindings for the controller's ServiceAccount.
func GrantDelegatedAuth(ctx context.Context, cfg *rest.Config, name string, subject rbacv1.Subject) error {
	c, err := registrationClient(cfg)
	if err != nil {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + ":system:auth-delegator"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, crb, func() error {
		crb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"}
		crb.Subjects = []rbacv1.Subject{subject}
		return nil
	}); err != nil {
		return fmt.Errorf("binding system:auth-delegator: %w", err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + ":extension-apiserver-authentication-reader", Namespace: metav1.NamespaceSystem}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, rb, func() error {
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}
		rb.Subjects = []rbacv1.Subject{subject}
		return nil
	}); err != nil {
		return fmt.Errorf("binding extension-apiserver-authentication-reader: %w", err)
	}
	return nil
}

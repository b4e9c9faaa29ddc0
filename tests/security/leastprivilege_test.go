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

package security

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
)

// The identities config/manager runs the other two controllers as (the
// trust-controller's, trustControllerUser, is the suite's).
var (
	credentialControllerUser, credentialControllerGroups = controlplane.ServiceAccountUser(platformNamespace, "credo-credential-controller")
	enrollmentControllerUser, enrollmentControllerGroups = controlplane.ServiceAccountUser(platformNamespace, "credo-enrollment-controller")
)

// identity is a controller's ServiceAccount, as kube-apiserver sees it.
type identity struct {
	name, user string
	groups     []string
}

var (
	trustController      = identity{"trust-controller", trustControllerUser, trustControllerGroups}
	credentialController = identity{"credential-controller", credentialControllerUser, credentialControllerGroups}
	enrollmentController = identity{"enrollment-controller", enrollmentControllerUser, enrollmentControllerGroups}
	controllers          = []identity{trustController, credentialController, enrollmentController}
)

// access is one request a controller makes, or must never be able to make.
type access struct {
	verb, group, resource, subresource, name string
	// namespace "" asks for every namespace (or a cluster-scoped resource).
	namespace string
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.name != "" {
		r += " " + a.name
	}
	ns := a.namespace
	if ns == "" {
		ns = "*"
	}
	return fmt.Sprintf("%s %s in %s", a.verb, r, ns)
}

// tenantNS is any tenant's namespace: nothing in it is the controllers'.
const tenantNS = "tenant-any"

const (
	core       = ""
	trustG     = "trust.credo.dev"
	credG      = "credentials.credo.dev"
	enrollG    = "enrollment.credo.dev"
	helmG      = "helm.toolkit.fluxcd.io"
	sourceG    = "source.toolkit.fluxcd.io"
	rbacG      = "rbac.authorization.k8s.io"
	authzG     = "authorization.k8s.io"
	admissionG = "admissionregistration.k8s.io"
	aggregator = "apiregistration.k8s.io"
	accessAPI  = "v1alpha1.access.credo.dev"
)

func ra(verb, group, resource, namespace string) access {
	return access{verb: verb, group: group, resource: resource, namespace: namespace}
}

func (a access) sub(s string) access   { a.subresource = s; return a }
func (a access) named(n string) access { a.name = n; return a }

// leastPrivilege is, per controller, what it must be able to do (the
// requests its code makes) and what it must not, keyed by a sentence.
var leastPrivilege = map[string]struct {
	who       identity
	must, not []access
}{
	"the trust-controller projects CA certificates and deletes no Secret": {
		who: trustController,
		must: []access{
			ra("list", core, "secrets", ""), ra("watch", core, "secrets", ""), ra("get", core, "secrets", tenantNS),
			ra("create", core, "secrets", tenantNS), ra("patch", core, "secrets", tenantNS), ra("update", core, "secrets", tenantNS),
			ra("list", core, "namespaces", ""), ra("watch", helmG, "helmreleases", ""),
			// The chart name of a release's chartRef.
			ra("watch", sourceG, "helmcharts", ""), ra("watch", sourceG, "ocirepositories", ""),
			ra("create", trustG, "trustanchors", tenantNS), ra("patch", trustG, "trustanchors", tenantNS),
			ra("patch", trustG, "trustanchors", tenantNS).sub("status"), ra("patch", trustG, "trustsources", "").sub("status"),
			ra("create", core, "events", tenantNS), ra("update", "coordination.k8s.io", "leases", platformNamespace),
		},
		not: []access{
			ra("delete", core, "secrets", tenantNS), ra("delete", core, "secrets", platformNamespace), ra("delete", core, "secrets", ""),
			ra("deletecollection", core, "secrets", tenantNS),
			ra("get", credG, "credentialaccounts", tenantNS), ra("list", credG, "credentialaccounts", ""),
			ra("delete", trustG, "trustanchors", tenantNS), ra("update", trustG, "trustsources", ""),
			ra("patch", helmG, "helmreleases", tenantNS), ra("get", core, "configmaps", tenantNS),
			ra("create", enrollG, "jointokens", tenantNS), ra("get", enrollG, "workloads", tenantNS),
			ra("create", "coordination.k8s.io", "leases", tenantNS),
			ra("patch", sourceG, "ocirepositories", tenantNS), ra("get", sourceG, "gitrepositories", tenantNS),
		},
	},
	"the credential-controller keeps account Secrets and serves the access API, and touches no trust anchor or workload": {
		who: credentialController,
		must: []access{
			ra("watch", core, "secrets", ""), ra("get", core, "secrets", tenantNS), ra("create", core, "secrets", tenantNS),
			ra("patch", core, "secrets", tenantNS), ra("update", core, "secrets", tenantNS), ra("delete", core, "secrets", tenantNS),
			ra("delete", core, "secrets", platformNamespace),
			ra("watch", credG, "credentialaccounts", ""), ra("create", credG, "credentialaccounts", tenantNS),
			ra("patch", credG, "credentialaccounts", tenantNS), ra("delete", credG, "credentialaccounts", tenantNS),
			ra("patch", credG, "credentialaccounts", tenantNS).sub("status"), ra("patch", credG, "accountsources", "").sub("status"),
			ra("patch", helmG, "helmreleases", tenantNS),
			ra("watch", sourceG, "helmcharts", ""), ra("watch", sourceG, "ocirepositories", ""),
			ra("watch", "postgresql.cnpg.io", "clusters", ""), ra("watch", "k8s.mariadb.com", "users", ""),
			// The namespace UID a kept platform password is bound to, and
			// the namespaces the sweep finds gone; it writes none.
			ra("list", core, "namespaces", ""), ra("watch", core, "namespaces", ""),
			ra("create", enrollG, "jointokens", tenantNS), ra("get", enrollG, "enrollmentpolicies", tenantNS),
			ra("patch", aggregator, "apiservices", "").named(accessAPI),
			ra("create", authzG, "subjectaccessreviews", ""),
			// The exposure check of platform plaintexts reads the bindings
			// whose subjects it asks about; it writes none.
			ra("list", rbacG, "rolebindings", tenantNS), ra("list", rbacG, "clusterrolebindings", ""),
			ra("get", core, "configmaps", "kube-system").named("extension-apiserver-authentication"),
			ra("update", "coordination.k8s.io", "leases", platformNamespace),
		},
		not: []access{
			ra("get", trustG, "trustanchors", tenantNS), ra("create", trustG, "trustanchors", tenantNS),
			ra("patch", trustG, "trustanchors", tenantNS).sub("status"), ra("list", trustG, "trustsources", ""),
			ra("create", enrollG, "workloads", tenantNS), ra("patch", enrollG, "workloads", tenantNS).sub("status"),
			ra("update", enrollG, "workloads", tenantNS).sub("status"), ra("update", enrollG, "jointokens", tenantNS).sub("status"),
			ra("patch", aggregator, "apiservices", "").named("v1beta1.metrics.k8s.io"), ra("create", aggregator, "apiservices", ""),
			ra("get", core, "configmaps", tenantNS),
			ra("update", credG, "credentialaccounts", tenantNS), // it patches, never replaces
			ra("create", rbacG, "rolebindings", tenantNS), ra("delete", rbacG, "rolebindings", tenantNS),
			ra("update", sourceG, "helmcharts", tenantNS),
			ra("delete", core, "namespaces", ""), ra("update", core, "namespaces", ""),
			// The Applied condition reads the operators' objects, never writes them.
			ra("patch", "postgresql.cnpg.io", "clusters", tenantNS), ra("update", "k8s.mariadb.com", "users", tenantNS).sub("status"),
		},
	},
	"the enrollment-controller keeps its CA in its own namespace and reads no other Secret": {
		who: enrollmentController,
		must: []access{
			ra("get", core, "secrets", platformNamespace), ra("create", core, "secrets", platformNamespace),
			ra("update", core, "secrets", platformNamespace),
			// The CA's TrustAnchor, declared in its own namespace (embedded.Anchor).
			ra("get", trustG, "trustanchors", platformNamespace), ra("list", trustG, "trustanchors", platformNamespace),
			ra("create", trustG, "trustanchors", platformNamespace), ra("patch", trustG, "trustanchors", platformNamespace),
			ra("delete", trustG, "trustanchors", platformNamespace),
			ra("create", enrollG, "workloads", tenantNS), ra("delete", enrollG, "workloads", tenantNS),
			// spec.denied, when a policy's onDuplicate is Deny.
			ra("update", enrollG, "workloads", tenantNS),
			ra("update", enrollG, "workloads", tenantNS).sub("status"), ra("patch", enrollG, "workloads", tenantNS).sub("status"),
			ra("update", enrollG, "jointokens", tenantNS).sub("status"), ra("patch", enrollG, "enrollmentpolicies", tenantNS).sub("status"),
			ra("watch", enrollG, "jointokens", ""), ra("create", "cert-manager.io", "certificaterequests", platformNamespace),
			ra("create", core, "events", tenantNS), ra("update", "coordination.k8s.io", "leases", platformNamespace),
			// Whether credo-workload-denials admitted a denial's by (status.deniedBy).
			ra("get", admissionG, "validatingadmissionpolicies", "").named("credo-workload-denials"),
			ra("get", admissionG, "validatingadmissionpolicybindings", "").named("credo-workload-denials"),
			// Who may look up a workload (POST /v1/lookup), and who a
			// caller's Kubernetes token names.
			ra("create", authzG, "subjectaccessreviews", ""), ra("create", "authentication.k8s.io", "tokenreviews", ""),
		},
		not: []access{
			ra("get", core, "secrets", tenantNS), ra("list", core, "secrets", tenantNS), ra("watch", core, "secrets", ""),
			ra("get", core, "secrets", ""), ra("create", core, "secrets", tenantNS), ra("delete", core, "secrets", platformNamespace),
			ra("list", core, "secrets", platformNamespace),
			ra("create", enrollG, "jointokens", tenantNS), ra("update", enrollG, "enrollmentpolicies", tenantNS),
			ra("patch", enrollG, "workloads", tenantNS),
			ra("get", credG, "credentialaccounts", tenantNS), ra("get", trustG, "trustanchors", tenantNS),
			ra("create", trustG, "trustanchors", tenantNS), ra("list", trustG, "trustanchors", ""),
			ra("patch", trustG, "trustanchors", platformNamespace).sub("status"), ra("update", trustG, "trustanchors", platformNamespace),
			ra("get", helmG, "helmreleases", tenantNS), ra("get", core, "configmaps", tenantNS),
			ra("list", admissionG, "validatingadmissionpolicies", ""), ra("get", admissionG, "validatingadmissionpolicies", "").named("credo-trust-sources"),
			ra("update", admissionG, "validatingadmissionpolicies", "").named("credo-workload-denials"),
			ra("delete", admissionG, "validatingadmissionpolicybindings", "").named("credo-workload-denials"),
		},
	},
}

// What no controller may ever do: grant itself more (escalate, bind,
// impersonate, a binding, a token, a pod that mounts another
// ServiceAccount), whatever the namespace.
var neverGranted = []access{
	ra("escalate", rbacG, "clusterroles", ""), ra("escalate", rbacG, "roles", platformNamespace),
	ra("bind", rbacG, "clusterroles", ""), ra("bind", rbacG, "roles", platformNamespace),
	ra("create", rbacG, "clusterrolebindings", ""), ra("create", rbacG, "rolebindings", platformNamespace),
	ra("update", rbacG, "clusterroles", ""), ra("create", rbacG, "roles", platformNamespace),
	ra("impersonate", core, "users", ""), ra("impersonate", core, "groups", ""),
	ra("impersonate", core, "serviceaccounts", platformNamespace),
	ra("create", core, "serviceaccounts", platformNamespace).sub("token"),
	ra("create", core, "pods", platformNamespace), ra("create", core, "pods", tenantNS).sub("exec"),
	ra("*", "*", "*", ""),
}

// can asks kube-apiserver, by SubjectAccessReview, whether who may make
// the request a.
func can(t *testing.T, who identity, a access) bool {
	t.Helper()
	return allowedAs(t, who.user, who.groups, authorizationv1.ResourceAttributes{
		Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name,
	})
}

// Each controller's ServiceAccount, bound by what config/rbac and
// config/apiservice ship (applied by TestMain), may make every request its
// code makes and none of those the table forbids.
func TestEachControllerHasLeastPrivilege(t *testing.T) {
	for name, tc := range leastPrivilege {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			for _, a := range tc.must {
				g.Expect(can(t, tc.who, a)).To(BeTrue(), "%s must be allowed to %s", tc.who.name, a)
			}
			for _, a := range tc.not {
				g.Expect(can(t, tc.who, a)).To(BeFalse(), "%s must not be allowed to %s", tc.who.name, a)
			}
		})
	}
}

// No controller may grant itself or anyone more than it has.
func TestNoControllerCanEscalate(t *testing.T) {
	g := NewWithT(t)
	for _, who := range controllers {
		for _, a := range neverGranted {
			g.Expect(can(t, who, a)).To(BeFalse(), "%s must not be allowed to %s", who.name, a)
		}
	}
}

// The trust-controller cannot delete a Secret it did not write, asked for
// real: a tenant's Secret, and its own projection's namespace alike.
func TestTheTrustControllerCannotDeleteASecret(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tenant-data", Namespace: ns}, StringData: map[string]string{"k": "v"}}
	g.Expect(env.Client.Create(context.Background(), s)).To(Succeed())
	trust := userClient(t, trustControllerUser, trustControllerGroups...)
	err := trust.Delete(context.Background(), s)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "deleting a tenant's Secret as the trust-controller: %v", err)
	g.Expect(apierrors.IsForbidden(trust.DeleteAllOf(context.Background(), &corev1.Secret{}, client.InNamespace(ns)))).To(BeTrue())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), &corev1.Secret{})).To(Succeed(), "the Secret is still there")
}

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

package controlplane_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credo-dev/credo/tests/controlplane"
)

// An InCluster Environment serves the names in-cluster clients dial (the
// kubernetes Service's ClusterIP and DNS names) from a CA of its own,
// listens beyond 127.0.0.1, admits pods with a projected ServiceAccount
// token volume, and authenticates the tokens it issues. The default
// Environment keeps envtest's certificate, for localhost alone.
func TestInClusterServesServiceNamesAndServiceAccountTokens(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	in, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir(), NoControllerManager: true, InCluster: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(in.Stop()).To(Succeed()) }()

	caPEM, err := os.ReadFile(in.ServingCAFile)
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(caPEM)).To(BeTrue())
	u, err := url.Parse(in.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	leaf := servingCert(t, u.Host)
	opts := x509.VerifyOptions{Roots: roots}
	for _, name := range []string{"10.0.0.1", "127.0.0.1", "kubernetes", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		opts.DNSName = name
		_, err := leaf.Verify(opts)
		g.Expect(err).NotTo(HaveOccurred(), "the serving certificate for %s", name)
	}
	defaultURL, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(servingCert(t, defaultURL.Host).VerifyHostname("10.0.0.1")).
		To(HaveOccurred(), "the default Environment's certificate is envtest's")

	// Bound to every address: it answers on this machine's own addresses
	// (the kubernetes Service's endpoint is one of them).
	for _, a := range hostIPs() {
		g.Expect(servingCert(t, net.JoinHostPort(a, u.Port())).Raw).To(Equal(leaf.Raw), "kube-apiserver on %s", a)
	}

	cs, err := kubernetes.NewForConfig(in.Config)
	g.Expect(err).NotTo(HaveOccurred())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "incluster"}}
	g.Expect(in.Client.Create(ctx, ns)).To(Succeed())
	for _, name := range []string{"default", "app"} {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name},
		Spec:       corev1.PodSpec{ServiceAccountName: "app", Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
	g.Expect(in.Client.Create(ctx, pod)).To(Succeed())
	g.Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Projected", Not(BeNil()))), "the ServiceAccount admission plugin's token volume")

	tr, err := cs.CoreV1().ServiceAccounts(ns.Name).CreateToken(ctx, "app", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	saCfg := &rest.Config{Host: in.Config.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: in.ServingCAFile}}
	saCS, err := kubernetes.NewForConfig(saCfg)
	g.Expect(err).NotTo(HaveOccurred())
	review, err := saCS.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:incluster:app"))
}

// servingCert is the certificate the server at addr presents.
func servingCert(t *testing.T, addr string) *x509.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test verifies it
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// hostIPs are this machine's global unicast IPv4 addresses.
func hostIPs() []string {
	addrs, _ := net.InterfaceAddrs()
	var ips []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() && n.IP.To4() != nil {
			ips = append(ips, n.IP.String())
		}
	}
	return ips
}

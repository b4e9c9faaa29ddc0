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
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/credo-dev/credo/tests/testpki"
)

// ServiceClusterIPRange is the Service range envtest gives kube-apiserver
// (--service-cluster-ip-range) unless Options.APIServerFlags sets one.
const ServiceClusterIPRange = "10.0.0.0/24"

// ServiceAccountIssuer is the ServiceAccount token issuer of an InCluster
// Environment, kubeadm's.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// inClusterNames are the DNS names in-cluster clients reach kube-apiserver
// by, through the kubernetes Service.
var inClusterNames = []string{
	"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
}

// configureInCluster makes kube-apiserver reachable by pods the way
// in-cluster clients reach it: bound to every address (the kubernetes
// Service leads to the advertised address), serving a certificate from a
// CA of our own (ServingCAFile, which Config trusts) that names the
// kubernetes Service's ClusterIP and DNS names, the ServiceAccount
// admission plugin on (envtest disables it) so pods get a projected token,
// and tokens signed with a key of ours (ServiceAccountKeyFile) for
// kube-controller-manager.
//
// envtest generates its serving certificate, its CA and ServiceAccount
// keys only when its certificate directory holds no apiserver.crt: the
// files written here replace all three.
func (e *Environment) configureInCluster(args *envtest.Arguments, serviceRange string) error {
	if serviceRange == "" {
		serviceRange = ServiceClusterIPRange
	}
	serviceIP, err := firstAddress(serviceRange)
	if err != nil {
		return err
	}
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1), serviceIP}, hostAddresses()...)
	ca, err := testpki.NewCA("credo-test-apiserver-ca")
	if err != nil {
		return fmt.Errorf("creating the API server's CA: %w", err)
	}
	serving, err := ca.NewLeaf(testpki.Subject(pkix.Name{CommonName: "kube-apiserver"}),
		testpki.ExtKeyUsage(x509.ExtKeyUsageServerAuth),
		testpki.Template(func(c *x509.Certificate) {
			c.DNSNames = inClusterNames
			c.IPAddresses = ips
		}))
	if err != nil {
		return fmt.Errorf("creating the API server's serving certificate: %w", err)
	}
	servingKey, err := serving.KeyPEM()
	if err != nil {
		return err
	}
	sa, err := testpki.NewKey()
	if err != nil {
		return fmt.Errorf("creating the ServiceAccount signing key: %w", err)
	}
	saKey, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(sa.Public())
	if err != nil {
		return err
	}

	certDir := filepath.Join(e.Dir, "kube-apiserver")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	e.ServingCAFile = filepath.Join(e.Dir, "apiserver-ca.crt")
	e.ServiceAccountKeyFile = filepath.Join(e.Dir, "service-account.key")
	saPubFile := filepath.Join(e.Dir, "service-account.pub")
	for path, data := range map[string][]byte{
		e.ServingCAFile:                         ca.CertPEM(),
		filepath.Join(certDir, "apiserver.crt"): serving.CertPEM(),
		filepath.Join(certDir, "apiserver.key"): servingKey,
		e.ServiceAccountKeyFile:                 pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saKey}),
		saPubFile:                               pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	apiserver := e.env.ControlPlane.GetAPIServer()
	apiserver.CertDir = certDir
	apiserver.SecureServing.CA = ca.CertPEM()

	args.Set("bind-address", "0.0.0.0")
	args.Disable("disable-admission-plugins")
	args.Set("service-account-issuer", ServiceAccountIssuer)
	args.Set("service-account-key-file", saPubFile)
	args.Set("service-account-signing-key-file", e.ServiceAccountKeyFile)
	return nil
}

// firstAddress is the first address of cidr: the kubernetes Service's
// ClusterIP when cidr is the Service range.
func firstAddress(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("service range %q: %w", cidr, err)
	}
	ip := make(net.IP, len(n.IP))
	copy(ip, n.IP)
	for i := len(ip) - 1; i >= 0; i-- {
		ip[i]++
		if ip[i] != 0 {
			break
		}
	}
	return ip, nil
}

// hostAddresses are this machine's global unicast addresses, one of which
// kube-apiserver advertises as the kubernetes Service's endpoint.
func hostAddresses() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var ips []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
			ips = append(ips, n.IP)
		}
	}
	return ips
}

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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// FrontProxyClientName is the common name of the front-proxy client
// certificate kube-apiserver presents to aggregated API servers.
const FrontProxyClientName = "front-proxy-client"

// DefaultAuditPolicy records requests and responses of access.credo.dev and
// the metadata of everything else.
const DefaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  resources:
  - group: access.credo.dev
- level: Metadata
`

// configureAggregation generates a front-proxy CA and a client certificate
// signed by it into Dir, and passes kube-apiserver the flags of its
// aggregation layer.
func (e *Environment) configureAggregation(args *envtest.Arguments) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the front-proxy CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("creating the front-proxy CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	clientKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the front-proxy client key: %w", err)
	}
	clientTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: FrontProxyClientName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	clientDER, err := x509.CreateCertificate(rand.Reader, clientTmpl, caCert, &clientKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("creating the front-proxy client certificate: %w", err)
	}
	clientKeyDER, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		return err
	}
	caFile := filepath.Join(e.Dir, "front-proxy-ca.crt")
	certFile := filepath.Join(e.Dir, "front-proxy-client.crt")
	keyFile := filepath.Join(e.Dir, "front-proxy-client.key")
	for path, block := range map[string]*pem.Block{
		caFile:   {Type: "CERTIFICATE", Bytes: caDER},
		certFile: {Type: "CERTIFICATE", Bytes: clientDER},
		keyFile:  {Type: "EC PRIVATE KEY", Bytes: clientKeyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	args.Set("requestheader-client-ca-file", caFile)
	args.Set("requestheader-allowed-names", FrontProxyClientName)
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("proxy-client-cert-file", certFile)
	args.Set("proxy-client-key-file", keyFile)
	args.Set("enable-aggregator-routing", "false")
	return nil
}

// configureAudit writes the audit policy into Dir and has kube-apiserver
// log every audited request to AuditLogPath.
func (e *Environment) configureAudit(args *envtest.Arguments, policy string) error {
	if policy == "" {
		policy = DefaultAuditPolicy
	}
	policyFile := filepath.Join(e.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policyFile, []byte(policy), 0o600); err != nil {
		return fmt.Errorf("writing the audit policy: %w", err)
	}
	e.AuditLogPath = filepath.Join(e.Dir, "audit.log")
	args.Set("audit-policy-file", policyFile)
	args.Set("audit-log-path", e.AuditLogPath)
	args.Set("audit-log-maxsize", "0")
	return nil
}

// UserConfig adds a user with a client certificate for the given groups and
// returns a rest.Config authenticating as it (without rate limits, so tests
// can load the API server). Without system:masters the user can do only
// what RBAC grants it.
func (e *Environment) UserConfig(user string, groups []string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", user, err)
	}
	cfg := rest.CopyConfig(u.Config())
	cfg.QPS, cfg.Burst = -1, 0
	return cfg, nil
}

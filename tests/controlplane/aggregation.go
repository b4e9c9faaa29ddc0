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
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/credo-dev/credo/tests/testpki"
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
	ca, err := testpki.NewCA("front-proxy-ca", testpki.NotAfter(time.Now().Add(24*time.Hour)))
	if err != nil {
		return fmt.Errorf("creating the front-proxy CA: %w", err)
	}
	client, err := ca.NewLeaf(testpki.Subject(pkix.Name{CommonName: FrontProxyClientName}),
		testpki.ExtKeyUsage(x509.ExtKeyUsageClientAuth))
	if err != nil {
		return fmt.Errorf("creating the front-proxy client certificate: %w", err)
	}
	clientKey, err := client.KeyPEM()
	if err != nil {
		return err
	}
	caFile := filepath.Join(e.Dir, "front-proxy-ca.crt")
	certFile := filepath.Join(e.Dir, "front-proxy-client.crt")
	keyFile := filepath.Join(e.Dir, "front-proxy-client.key")
	for path, data := range map[string][]byte{
		caFile:   ca.CertPEM(),
		certFile: client.CertPEM(),
		keyFile:  clientKey,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
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

// UserClient returns a client with Scheme authenticated as user with
// groups (see UserConfig).
func (e *Environment) UserClient(user string, groups []string) (client.Client, error) {
	cfg, err := e.UserConfig(user, groups)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: e.Scheme})
}

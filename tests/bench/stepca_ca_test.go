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

package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"k8s.io/apimachinery/pkg/util/wait"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// stepProvisioner is the name of step-ca's one JWK provisioner: the issuer
// of every one-time token.
const stepProvisioner = "bench"

// stepCA is a running step-ca: its process, its base URL, the roots that
// verify it, and the JWK provisioner's key that signs one-time tokens.
type stepCA struct {
	proc  *controlplane.Process
	base  string
	roots *x509.CertPool
	// key signs the one-time tokens; kid is its JWK thumbprint, the key ID
	// the provisioner is found by.
	key *ecdsa.PrivateKey
	kid string
}

// startStepCA writes a CA for step-ca into a temporary directory (a root,
// an intermediate whose key step-ca signs with, unencrypted, and one JWK
// provisioner), starts binary on a loopback port and waits until it
// answers /health. The process stops when b ends.
func startStepCA(b *testing.B, binary string) *stepCA {
	b.Helper()
	dir := b.TempDir()
	root := testpki.Authority(b, "credo bench step-ca root")
	inter, err := root.NewIntermediate("credo bench step-ca intermediate")
	must(b, err)
	files := map[string][]byte{
		"root_ca.crt":         root.CertPEM(),
		"intermediate_ca.crt": inter.CertPEM(),
		"intermediate_ca_key": testpki.KeyPEM(b, inter),
	}
	for name, data := range files {
		must(b, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}

	ca := &stepCA{key: testpki.Key(b), roots: x509.NewCertPool()}
	ca.roots.AddCert(root.Cert)
	pub := jose.JSONWebKey{Key: &ca.key.PublicKey, Algorithm: string(jose.ES256), Use: "sig"}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	must(b, err)
	ca.kid = base64.RawURLEncoding.EncodeToString(thumb)
	pub.KeyID = ca.kid

	addr := testenv.FreeAddr(b)
	ca.base = "https://" + addr
	config, err := json.MarshalIndent(stepConfig(dir, addr, pub), "", "  ")
	must(b, err)
	caJSON := filepath.Join(dir, "ca.json")
	must(b, os.WriteFile(caJSON, config, 0o600))

	ca.proc, err = controlplane.StartProcessIn(dir, "step-ca", binary, []string{"GOMAXPROCS=2"}, caJSON)
	must(b, err)
	b.Cleanup(func() { _ = ca.proc.Stop(10 * time.Second) })
	must(b, ca.waitHealthy())
	return ca
}

// stepConfig is step-ca's ca.json: the files in dir, a badger (v2, pure Go)
// database there, address on loopback, and one JWK provisioner whose
// certificates live credo's default certificate lifetime. Leaf templates
// and TLS options are step-ca's defaults.
func stepConfig(dir, addr string, pub jose.JSONWebKey) map[string]any {
	ttl := enrollv1.DefaultCertificateTTL.String()
	return map[string]any{
		"root":     filepath.Join(dir, "root_ca.crt"),
		"crt":      filepath.Join(dir, "intermediate_ca.crt"),
		"key":      filepath.Join(dir, "intermediate_ca_key"),
		"address":  addr,
		"dnsNames": []string{"127.0.0.1", "localhost"},
		"logger":   map[string]any{"format": "text"},
		"db":       map[string]any{"type": "badgerv2", "dataSource": filepath.Join(dir, "db")},
		"authority": map[string]any{
			"claims": map[string]any{"defaultTLSCertDuration": ttl, "maxTLSCertDuration": ttl},
			"provisioners": []any{
				map[string]any{"type": "JWK", "name": stepProvisioner, "key": pub},
			},
		},
	}
}

// waitHealthy waits until step-ca answers /health, failing early when it
// exits. Its log then holds no token yet, so the error may carry its tail.
func (ca *stepCA) waitHealthy() error {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.roots, MinVersion: tls.VersionTLS12}}}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := ca.proc.FailIfExited(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ca.base+"/health", nil)
		if err != nil {
			return false, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for step-ca at %s: %w\n%s", ca.base, err, ca.proc.Tail(20))
	}
	return nil
}

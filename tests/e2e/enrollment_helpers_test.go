//go:build e2e

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

package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
)

func binPath(name string) string { return filepath.Join(controlplane.RepoRoot(), "bin", name) }

// createToken mints a join token with the kubectl plugin, as a user would.
func createToken(t *testing.T, e *devenv.Environment, ns, policy string) string {
	t.Helper()
	var out []byte
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := exec.Command(binPath("kubectl-credo"), "token", "create", policy, "-n", ns, "-o", "json", "--kubeconfig", e.Kubeconfig)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var err error
		if out, err = cmd.Output(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl credo token create: %v: %s", err, stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	var st accessv1.JoinTokenRequestStatus
	if err := json.Unmarshal(out, &st); err != nil || st.Token == "" {
		t.Fatalf("kubectl credo token create printed no token (%v)", err)
	}
	return st.Token
}

// agent is a credo-agent process and its state directory.
type agent struct {
	name  string
	dir   string
	proc  *controlplane.Process
	extra []string
	// server is the enrollment URL the agent is given; the environment's when empty.
	server string
}

func newAgent(t *testing.T, name, token, caFile string, extra ...string) *agent {
	t.Helper()
	dir := t.TempDir()
	a := &agent{name: name, dir: dir, extra: extra}
	if token != "" {
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a.extra = append([]string{"--ca-file=" + caFile}, a.extra...)
	return a
}

// start runs the agent; withToken passes the token file.
func (a *agent) start(t *testing.T, e *devenv.Environment, withToken bool) {
	t.Helper()
	server := a.server
	if server == "" {
		server = e.EnrollmentURL
	}
	args := append([]string{"--server=" + server, "--state-dir=" + filepath.Join(a.dir, "state"),
		"--hostname=" + a.name + ".vm.example.org", "--log-level=debug"}, a.extra...)
	if withToken {
		args = append(args, "--token-file="+filepath.Join(a.dir, "token"))
	}
	p, err := e.StartProcess(a.name, binPath("credo-agent"), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	a.proc = p
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
}

func (a *agent) log(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(a.proc.LogPath())
	return string(b)
}

// cert returns the agent's certificate and when the file was written, or nil.
func (a *agent) cert() (*x509.Certificate, time.Time) {
	path := filepath.Join(a.dir, "state", "cert.pem")
	fi, err := os.Stat(path)
	if err != nil {
		return nil, time.Time{}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, time.Time{}
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, time.Time{}
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, time.Time{}
	}
	return c, fi.ModTime()
}

func (a *agent) bundle(t *testing.T) []*x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(a.dir, "state", "bundle.pem"))
	if err != nil {
		return nil
	}
	return parsePEMCerts(b)
}

func parsePEMCerts(b []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		if c, err := x509.ParseCertificate(blk.Bytes); err == nil {
			out = append(out, c)
		}
	}
}

// waitCert waits until the agent's certificate differs from prev (nil: any).
func (a *agent) waitCert(t *testing.T, prev *x509.Certificate, within time.Duration) (*x509.Certificate, time.Time) {
	t.Helper()
	return a.waitCertWhere(t, within, func(c *x509.Certificate) bool {
		return prev == nil || c.SerialNumber.Cmp(prev.SerialNumber) != 0
	}, ": no new certificate within "+within.String())
}

// waitCertWhere waits until the agent has a certificate ok accepts, and
// fails if the agent exits first or none comes within; what follows the
// agent's name in the failure message of the latter.
func (a *agent) waitCertWhere(t *testing.T, within time.Duration, ok func(*x509.Certificate) bool, what string) (*x509.Certificate, time.Time) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c, at := a.cert()
		if c != nil && ok(c) {
			return c, at
		}
		if exited, err := a.proc.Exited(); exited {
			t.Fatalf("%s exited (%v):\n%s", a.name, err, a.log(t))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%s:\n%s", a.name, what, a.log(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitExit waits for the agent to exit and returns its exit code.
func (a *agent) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if ok, err := a.proc.Exited(); ok {
			if err == nil {
				return 0
			}
			var ee *exec.ExitError
			if asExit(err, &ee) {
				return ee.ExitCode()
			}
			t.Fatalf("%s: %v", a.name, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not exit within %s:\n%s", a.name, within, a.log(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func asExit(err error, target **exec.ExitError) bool {
	return errors.As(err, target)
}

// anchorFile writes the enrollment CA as published by the trust-anchor
// machinery (the projection of the install release) and returns its path.
func anchorFile(t *testing.T, minCerts int) (string, []*x509.Certificate) {
	t.Helper()
	name := devenv.InstallRelease + ".tenant-ca"
	var certs []*x509.Certificate
	var data []byte
	deadline := time.Now().Add(60 * time.Second)
	for {
		var s corev1.Secret
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: name}, &s)
		if err == nil {
			data = s.Data["ca.crt"]
			if certs = parsePEMCerts(data); len(certs) >= minCerts {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the enrollment CA is not published in %s/%s with %d certificate(s): %v", devenv.PlatformNamespace, name, minCerts, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, ok := s0(data); !ok {
		t.Fatal("the published anchor holds something other than certificates")
	}
	path := filepath.Join(t.TempDir(), "enrollment-ca.pem")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, certs
}

// s0 reports whether data holds PEM certificates and nothing else.
func s0(data []byte) (int, bool) {
	n := 0
	for {
		var blk *pem.Block
		blk, data = pem.Decode(data)
		if blk == nil {
			return n, len(bytes.TrimSpace(data)) == 0
		}
		if blk.Type != "CERTIFICATE" {
			return n, false
		}
		n++
	}
}

func verifies(c *x509.Certificate, roots []*x509.Certificate, at time.Time) error {
	pool := x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	_, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

func newEnrollmentPolicy(t *testing.T, ns string, ttl, grace time.Duration) *enrollv1.EnrollmentPolicy {
	t.Helper()
	p := &enrollv1.EnrollmentPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "agents", Namespace: ns},
		Spec: enrollv1.EnrollmentPolicySpec{
			AllowedLabels:  []enrollv1.LabelRule{{Key: "role", Values: []string{"web"}}},
			CertificateTTL: &metav1.Duration{Duration: ttl},
			RenewalGrace:   &metav1.Duration{Duration: grace},
		},
	}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// uuidOf is the workload UUID of c's one URI, whatever its identity form:
// the last path segment.
func uuidOf(c *x509.Certificate) string {
	if len(c.URIs) != 1 {
		return ""
	}
	p := c.URIs[0].Path
	return p[strings.LastIndex(p, "/")+1:]
}

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

package agent

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// harness runs agents against a fakeServer, with their logs kept for scanning.
type harness struct {
	t       *testing.T
	ca      *testCA
	srv     *fakeServer
	caFile  string
	dir     string
	logs    *syncBuffer
	updates chan Update
}

func newHarness(t *testing.T, ttl, grace time.Duration) *harness {
	t.Helper()
	ca := newTestCA(t, "enrollment CA")
	h := &harness{t: t, ca: ca, srv: newFakeServer(t, ca, ttl, grace), caFile: ca.writeFile(t),
		dir: filepath.Join(t.TempDir(), "state"), logs: &syncBuffer{}, updates: make(chan Update, 100)}
	t.Cleanup(func() {
		assertNoSecrets(t, h.logs.String())
		if t.Failed() {
			t.Logf("agent logs:\n%s", h.logs.String())
		}
	})
	return h
}

func (h *harness) config(mutate ...func(*Config)) Config {
	cfg := Config{
		Server:             h.srv.srv.URL,
		CAFile:             h.caFile,
		Token:              testToken,
		StateDir:           h.dir,
		Hostname:           "vm-1",
		Labels:             map[string]string{"role": "db"},
		BundlePollInterval: -1,
		RetryInitial:       50 * time.Millisecond,
		RetryMax:           200 * time.Millisecond,
		Logger:             slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnUpdate: func(u Update) {
			select {
			case h.updates <- u:
			default:
			}
		},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	return cfg
}

// run starts an agent in the background. stop cancels it and returns what Run returned.
func (h *harness) run(cfg Config) (a *Agent, done <-chan error, stop func() error) {
	h.t.Helper()
	a, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errs, finished := make(chan error, 1), make(chan struct{})
	var result error
	go func() {
		result = a.Run(ctx)
		errs <- result
		close(finished)
	}()
	stop = func() error {
		cancel()
		<-finished
		return result
	}
	h.t.Cleanup(func() { _ = stop() })
	return a, errs, stop
}

// waitUpdate returns the next OnUpdate call.
func (h *harness) waitUpdate(timeout time.Duration) Update {
	h.t.Helper()
	select {
	case u := <-h.updates:
		return u
	case <-time.After(timeout):
		h.t.Fatalf("no update within %s; logs:\n%s", timeout, h.logs.String())
		return Update{}
	}
}

// waitUpdateMatching returns the first OnUpdate call that ok accepts.
func (h *harness) waitUpdateMatching(timeout time.Duration, ok func(Update) bool) Update {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if u := h.waitUpdate(time.Until(deadline)); ok(u) {
			return u
		}
	}
}

func (h *harness) readState() state {
	h.t.Helper()
	var st state
	b := must(os.ReadFile(filepath.Join(h.dir, stateFile)))
	if err := json.Unmarshal(b, &st); err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *harness) diskCert() tls.Certificate {
	h.t.Helper()
	return must(tls.LoadX509KeyPair(filepath.Join(h.dir, certFile), filepath.Join(h.dir, keyFile)))
}

// assertNoSecrets fails when logs hold the token's secret or any PEM.
func assertNoSecrets(t *testing.T, logs string) {
	t.Helper()
	_, secret, _ := strings.Cut(testToken, ".")
	for _, bad := range []string{secret, "PRIVATE KEY", "BEGIN CERTIFICATE", "CERTIFICATE REQUEST"} {
		if strings.Contains(logs, bad) {
			t.Errorf("the logs contain %q", bad)
		}
	}
}

func TestEnrollmentWritesKeyCertificateAndBundleWithTheirModes(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	a, _, stop := h.run(h.config())

	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true, Bundle: true}))
	g.Expect(stop()).To(MatchError(context.Canceled))

	modes := map[string]fs.FileMode{keyFile: 0o600, certFile: 0o644, bundleFile: 0o644, stateFile: 0o644}
	entries := must(os.ReadDir(h.dir))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The atomic writes leave no temporary file behind.
	g.Expect(names).To(ConsistOf(keyFile, certFile, bundleFile, stateFile))
	for name, mode := range modes {
		fi := must(os.Stat(filepath.Join(h.dir, name)))
		g.Expect(fi.Mode().Perm()).To(Equal(mode), name)
	}
	g.Expect(must(os.Stat(h.dir)).Mode().Perm()).To(Equal(fs.FileMode(0o700)))

	pair := h.diskCert()
	leaf := pair.Leaf
	st := h.readState()
	g.Expect(leaf.URIs).To(HaveLen(1))
	g.Expect(leaf.URIs[0].String()).To(Equal(enrollapi.WorkloadURI(st.UUID).String()))
	g.Expect(leaf.DNSNames).To(BeEmpty())
	g.Expect(leaf.IPAddresses).To(BeEmpty())
	g.Expect(st.RenewalGraceSeconds).To(Equal(int64(3600)))
	g.Expect(must(os.ReadFile(filepath.Join(h.dir, bundleFile)))).To(Equal(h.ca.pem))

	enrolls, csrs, _ := h.srv.snapshot()
	g.Expect(enrolls).To(HaveLen(1))
	g.Expect(enrolls[0].Hostname).To(Equal("vm-1"))
	g.Expect(enrolls[0].Labels).To(Equal(map[string]string{"role": "db"}))
	g.Expect(csrs).To(HaveLen(1))
	csr := csrs[0]
	g.Expect(csr.URIs).To(HaveLen(1))
	g.Expect(csr.URIs[0].String()).To(Equal(enrollapi.WorkloadURI(st.UUID).String()))
	g.Expect(csr.DNSNames).To(BeEmpty())
	g.Expect(csr.IPAddresses).To(BeEmpty())
	g.Expect(csr.EmailAddresses).To(BeEmpty())
	g.Expect(csr.Subject.String()).To(BeEmpty())
	g.Expect(csr.PublicKey).To(Equal(leaf.PublicKey))

	// TLSConfig presents the certificate on disk.
	cc := must(a.TLSConfig("").GetClientCertificate(&tls.CertificateRequestInfo{}))
	g.Expect(cc.Leaf.Raw).To(Equal(leaf.Raw))
	g.Expect(h.logs.String()).To(ContainSubstring(`msg="enrolled as credo://workload/` + st.UUID + `"`))
}

func TestAValidCertificateOnDiskIsNotEnrolledAgain(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	_, _, stop := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	g.Expect(stop()).To(MatchError(context.Canceled))
	first := h.diskCert()

	a, done, stop := h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Eventually(a.identity.Load).ShouldNot(BeNil())
	g.Consistently(done, 300*time.Millisecond).ShouldNot(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))

	enrolls, _, renewals := h.srv.snapshot()
	g.Expect(enrolls).To(HaveLen(1))
	g.Expect(renewals).To(BeEmpty())
	g.Expect(h.diskCert().Leaf.Raw).To(Equal(first.Leaf.Raw))
	g.Expect(a.identity.Load().leaf.Raw).To(Equal(first.Leaf.Raw))
}

// offsetClock is the system clock moved by d.
type offsetClock struct{ d time.Duration }

func (c offsetClock) Now() time.Time                         { return time.Now().Add(c.d) }
func (c offsetClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func TestBeyondTheGraceWithoutATokenRunStopsForReenrollment(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	_, _, stop := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	g.Expect(stop()).To(MatchError(context.Canceled))
	uuid := h.readState().UUID

	late := offsetClock{d: 2*time.Hour + time.Minute}
	a := must(New(h.config(func(c *Config) { c.Token, c.Clock = "", late })))
	err := a.Run(context.Background())
	g.Expect(errors.Is(err, ErrReenrollmentRequired)).To(BeTrue(), "%v", err)
	var apiErr *enrollapi.Error
	g.Expect(errors.As(err, &apiErr)).To(BeTrue())
	g.Expect(apiErr.Reason).To(Equal(enrollapi.ReasonRenewalGraceOver))
	g.Expect(apiErr.Message).To(ContainSubstring(uuid))
	enrolls, _, renewals := h.srv.snapshot()
	g.Expect(enrolls).To(HaveLen(1))
	g.Expect(renewals).To(BeEmpty())

	// With a token, the agent enrolls anew: a new identity and a new key.
	h.srv.set(func(s *fakeServer) { s.ttl = 5 * time.Hour })
	_, _, stop = h.run(h.config(func(c *Config) { c.Clock = late }))
	g.Expect(h.waitUpdate(10 * time.Second).Certificate).To(BeTrue())
	g.Expect(stop()).To(MatchError(context.Canceled))
	enrolls, _, _ = h.srv.snapshot()
	g.Expect(enrolls).To(HaveLen(2))
	g.Expect(h.readState().UUID).NotTo(Equal(uuid))
}

func TestNoCertificateAndNoTokenIsAnError(t *testing.T) {
	h := newHarness(t, time.Hour, time.Hour)
	a := must(New(h.config(func(c *Config) { c.Token = "" })))
	NewWithT(t).Expect(a.Run(context.Background())).To(MatchError(ErrTokenRequired))
}

func TestARefusedTokenNeedsANewTokenAndWritesNothing(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	tokenFile := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(tokenFile, []byte("tok1.wrong-secret\n"), 0o600)).To(Succeed())
	a := must(New(h.config(func(c *Config) { c.Token, c.TokenFile = "", tokenFile })))
	err := a.Run(context.Background())
	g.Expect(errors.Is(err, ErrReenrollmentRequired)).To(BeTrue(), "%v", err)
	var se *StatusError
	g.Expect(errors.As(err, &se)).To(BeTrue())
	g.Expect(se.StatusCode).To(Equal(403))
	g.Expect(se.API.Reason).To(Equal(enrollapi.ReasonTokenInvalid))
	g.Expect(err.Error()).NotTo(ContainSubstring("wrong-secret"))
	g.Expect(h.logs.String()).NotTo(ContainSubstring("wrong-secret"))
	g.Expect(must(os.ReadDir(h.dir))).To(BeEmpty())
}

func TestAMalformedTokenIsNotQuoted(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	for _, tok := range []string{"nodotXYZ", ".XYZpart", "idXYZ.", "id.XY Zpart"} {
		a := must(New(h.config(func(c *Config) { c.Token = tok })))
		err := a.Run(context.Background())
		g.Expect(err).To(MatchError(ContainSubstring("malformed")), tok)
		g.Expect(err.Error()).NotTo(ContainSubstring("XY"), tok)
	}
	enrolls, _, _ := h.srv.snapshot()
	g.Expect(enrolls).To(BeEmpty())
}

func TestNewChecksTheConfig(t *testing.T) {
	h := newHarness(t, time.Hour, time.Hour)
	for name, mutate := range map[string]func(*Config){
		"plain http server":        func(c *Config) { c.Server = "http://127.0.0.1:1" },
		"no state directory":       func(c *Config) { c.StateDir = "" },
		"no CA file":               func(c *Config) { c.CAFile = "" },
		"token as string and file": func(c *Config) { c.TokenFile = "/dev/null" },
		"CA file without a certificate": func(c *Config) {
			c.CAFile = filepath.Join(t.TempDir(), "empty.pem")
			_ = os.WriteFile(c.CAFile, []byte("not PEM"), 0o644)
		},
	} {
		_, err := New(h.config(mutate))
		NewWithT(t).Expect(err).To(HaveOccurred(), name)
	}
}

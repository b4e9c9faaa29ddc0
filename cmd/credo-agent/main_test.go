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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/version"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

const secret = "zq9-join-secret-part"

// server answers every enrollment with status and reason, and writes its CA file.
func server(t *testing.T, status int, reason string) (url, caFile string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(&enrollapi.Error{Reason: reason, Message: "refused by the test"})
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL, caFile
}

func tokenFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte("tok1."+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runFor(ctx context.Context, args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

// --version prints one line on stdout and exits 0, whatever else the
// command line lacks (no --server, no --ca-file).
func TestVersionPrintsTheBuildAndExitsZero(t *testing.T) {
	g := NewWithT(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--version"}, &stdout, &stderr)
	g.Expect(code).To(Equal(exitOK), stderr.String())
	g.Expect(stderr.String()).To(BeEmpty())
	g.Expect(stdout.String()).To(Equal(version.Get().Line("credo-agent") + "\n"))
}

func TestBadFlagsExitTwo(t *testing.T) {
	url, ca := server(t, http.StatusServiceUnavailable, enrollapi.ReasonSigningUnavailable)
	state := t.TempDir()
	ok := []string{"--server", url, "--ca-file", ca, "--state-dir", state}
	for name, args := range map[string][]string{
		"an unknown flag":              append(ok, "--nope"),
		"no server":                    {"--ca-file", ca, "--state-dir", state},
		"no CA file":                   {"--server", url, "--state-dir", state},
		"a plain http server":          {"--server", "http://127.0.0.1:1", "--ca-file", ca, "--state-dir", state},
		"a label without a value sign": append(ok, "--label", "role"),
		"a label given twice":          append(ok, "--label", "a=1", "--label", "a=2"),
		"a token and a token file":     append(ok, "--token", "a.b", "--token-file", "/dev/null"),
		"an unknown log level":         append(ok, "--log-level", "loud"),
		"a negative poll interval":     append(ok, "--bundle-poll-interval", "-1s"),
		"a CA file that is missing":    {"--server", url, "--ca-file", filepath.Join(state, "none.pem"), "--state-dir", state},
	} {
		code, out := runFor(context.Background(), args...)
		NewWithT(t).Expect(code).To(Equal(exitUsage), "%s: %s", name, out)
	}
}

func TestNoCertificateAndNoTokenExitsTwo(t *testing.T) {
	g := NewWithT(t)
	url, ca := server(t, http.StatusServiceUnavailable, enrollapi.ReasonSigningUnavailable)
	code, out := runFor(context.Background(), "--server", url, "--ca-file", ca, "--state-dir", t.TempDir())
	g.Expect(code).To(Equal(exitUsage))
	g.Expect(out).To(ContainSubstring("--token-file"))
}

func TestARefusedTokenExitsThreeAndSaysHowToGetANewOne(t *testing.T) {
	g := NewWithT(t)
	url, ca := server(t, http.StatusForbidden, enrollapi.ReasonTokenExpired)
	code, out := runFor(context.Background(), "--server", url, "--ca-file", ca, "--state-dir", t.TempDir(),
		"--token-file", tokenFile(t), "--label", "role=db")
	g.Expect(code).To(Equal(exitReenrollment), out)
	g.Expect(out).To(ContainSubstring("kubectl credo token create <policy>"))
	g.Expect(out).To(ContainSubstring(enrollapi.ReasonTokenExpired))
	g.Expect(out).NotTo(ContainSubstring(secret))
}

func TestOtherRefusalsExitOne(t *testing.T) {
	g := NewWithT(t)
	url, ca := server(t, http.StatusForbidden, enrollapi.ReasonLabelsNotAllowed)
	code, out := runFor(context.Background(), "--server", url, "--ca-file", ca, "--state-dir", t.TempDir(),
		"--token-file", tokenFile(t), "--label", "role=db")
	g.Expect(code).To(Equal(exitError), out)
	g.Expect(out).To(ContainSubstring(enrollapi.ReasonLabelsNotAllowed))
}

func TestAStoppedAgentExitsZeroAndTheTokenFlagWarns(t *testing.T) {
	g := NewWithT(t)
	url, ca := server(t, http.StatusServiceUnavailable, enrollapi.ReasonSigningUnavailable)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	code, out := runFor(ctx, "--server", url, "--ca-file", ca, "--state-dir", t.TempDir(), "--token", "tok1."+secret)
	g.Expect(code).To(Equal(exitOK), out)
	g.Expect(out).To(ContainSubstring("prefer --token-file"))
	g.Expect(out).To(ContainSubstring("registering the workload failed; retrying"))
	g.Expect(out).NotTo(ContainSubstring(secret))
}

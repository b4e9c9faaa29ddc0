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
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/tests/testpki"
)

// A service embedding the agent serves with ServerTLSConfig: it presents
// the workload's certificate, and admits only clients whose certificate
// verifies against the bundle (a peer workload), not one from another CA
// and not one without a certificate.
func TestServerTLSConfigPresentsTheWorkloadAndVerifiesPeersAgainstTheBundle(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	a, _, stop := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.Config.ErrorLog = discardLog()
	srv.TLS = a.ServerTLSConfig()
	srv.StartTLS()
	defer srv.Close()
	own := must(a.CurrentCertificate())

	client := func(cert *tls.Certificate) (*http.Response, error) {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, //nolint:gosec // the server's certificate is checked below
			VerifyConnection: func(cs tls.ConnectionState) error {
				if !cs.PeerCertificates[0].Equal(own.Leaf) {
					return errors.New("the server presented another certificate")
				}
				return nil
			}}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		return (&http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}).Get(srv.URL)
	}
	peer := testpki.Leaf(t, h.ca.ca, testpki.Subject(pkix.Name{CommonName: "peer"}), testpki.ExtKeyUsage(x509.ExtKeyUsageClientAuth)).TLS()
	resp := must(client(&peer)) //nolint:bodyclose // closed on the next line
	defer func() { _ = resp.Body.Close() }()
	g.Expect(string(must(io.ReadAll(resp.Body)))).To(Equal("peer"))

	stranger := newTestCA(t, "another CA")
	foreign := testpki.Leaf(t, stranger.ca, testpki.ExtKeyUsage(x509.ExtKeyUsageClientAuth)).TLS()
	for name, cert := range map[string]*tls.Certificate{"a certificate of another CA": &foreign, "no certificate": nil} {
		_, err := client(cert) //nolint:bodyclose // the handshake fails: no body
		g.Expect(err).To(HaveOccurred(), name)
	}
	g.Expect(stop()).To(MatchError(context.Canceled))
}

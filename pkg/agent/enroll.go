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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// enroll registers the workload with the token, then asks for the
// certificate of the identity assigned, with a new key.
func (a *Agent) enroll(ctx context.Context, token string) error {
	hostname, err := a.hostname()
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the private key: %w", err)
	}

	var reg enrollapi.EnrollResponse
	enrollReq := &enrollapi.EnrollRequest{Token: token, Hostname: hostname, Labels: a.cfg.Labels}
	if err := a.retry(ctx, time.Time{}, "registering the workload", transientAtEnrollment, func() error {
		return a.client.postJSON(ctx, enrollapi.PathWorkloads, enrollReq, &reg)
	}); err != nil {
		return enrollmentError(ctx, err)
	}
	uri, err := checkRegistration(&reg)
	if err != nil {
		return err
	}
	a.log.Info("registered", "uri", uri.String(), "namespace", reg.Namespace, "hostname", hostname)

	csrPEM, err := certificateRequest(key, uri)
	if err != nil {
		return err
	}
	var resp enrollapi.CertificateResponse
	certReq := &enrollapi.CertificateRequest{Token: token, CSR: string(csrPEM), Host: a.host()}
	if err := a.retry(ctx, time.Time{}, "requesting the certificate", transientAtEnrollment, func() error {
		return a.client.postJSON(ctx, enrollapi.PathCertificate(reg.UUID), certReq, &resp)
	}); err != nil {
		return enrollmentError(ctx, err)
	}
	id, tr, err := a.accept(&resp, reg.UUID, uri, key)
	if err != nil {
		return err
	}
	u, err := a.save(id, true, tr)
	if err != nil {
		return err
	}
	a.log.Info("enrolled as "+uri.String(), "namespace", reg.Namespace, "serial", id.leaf.SerialNumber.Text(16),
		"notAfter", id.leaf.NotAfter, "nextRenewal", id.renewAt)
	a.notify(u)
	return nil
}

// enrollmentError says whether a refused enrollment needs a new token.
func enrollmentError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *enrollapi.Error
	if errors.As(err, &apiErr) {
		switch apiErr.Reason {
		case enrollapi.ReasonTokenInvalid, enrollapi.ReasonTokenExpired, enrollapi.ReasonTokenRevoked:
			return fmt.Errorf("%w: %w", ErrReenrollmentRequired, err)
		}
		if apiErr.NeedsReenrollment() {
			return fmt.Errorf("%w: %w", ErrReenrollmentRequired, err)
		}
	}
	return fmt.Errorf("enrollment refused: %w", err)
}

// checkRegistration returns the URI of the identity assigned: the one the
// server names, in the install's identity form, which must end in the UUID
// assigned (credo://workload/<uuid> when a server names none).
func checkRegistration(reg *enrollapi.EnrollResponse) (*url.URL, error) {
	if !enrollapi.ValidWorkloadID(reg.UUID) {
		return nil, fmt.Errorf("the enrollment server assigned an unusable identity %q", reg.UUID)
	}
	if reg.URI == "" {
		return enrollapi.WorkloadURI(reg.UUID), nil
	}
	uri, err := workloadURI(reg.URI, reg.UUID)
	if err != nil {
		return nil, fmt.Errorf("the enrollment server assigned %s but names its URI %q: %w", reg.UUID, reg.URI, err)
	}
	return uri, nil
}

// workloadURI parses a workload URI the server named for uuid.
func workloadURI(s, uuid string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	id, err := enrollapi.WorkloadIDOf(u)
	if err != nil {
		return nil, err
	}
	if id != uuid {
		return nil, fmt.Errorf("it names workload %s", id)
	}
	return u, nil
}

// certificateRequest returns a PEM CSR whose only SAN is uri, with an empty subject.
func certificateRequest(key crypto.Signer, uri *url.URL) ([]byte, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{URIs: []*url.URL{uri}}, key)
	if err != nil {
		return nil, fmt.Errorf("creating the certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// accept checks a certificate signed for a request for uri and returns it
// with the bundle that came with it.
func (a *Agent) accept(resp *enrollapi.CertificateResponse, uuid string, uri *url.URL, key crypto.Signer) (*identity, *trust, error) {
	if resp.UUID != "" && resp.UUID != uuid {
		return nil, nil, fmt.Errorf("the enrollment server answered for workload %q, not %q", resp.UUID, uuid)
	}
	if resp.URI != "" && resp.URI != uri.String() {
		return nil, nil, fmt.Errorf("the enrollment server answered for %q, not %s", resp.URI, uri)
	}
	certs, err := parseCertificates([]byte(resp.Certificate))
	if err != nil {
		return nil, nil, fmt.Errorf("the certificate received: %w", err)
	}
	leaf, intermediates := certs[0], certs[1:]
	if resp.Chain != "" {
		chain, err := parseCertificates([]byte(resp.Chain))
		if err != nil {
			return nil, nil, fmt.Errorf("the chain received: %w", err)
		}
		intermediates = append(intermediates, chain...)
	}
	bundle, err := parseCertificates([]byte(resp.Bundle))
	if err != nil {
		return nil, nil, fmt.Errorf("the bundle received: %w", err)
	}
	tr := a.newTrust(encodeCertificates(bundle), bundle)
	if err := checkCertificate(leaf, intermediates, tr.bundle, key.Public(), uri, a.clock.Now()); err != nil {
		return nil, nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, c := range intermediates {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	grace := time.Duration(max(resp.RenewalGraceSeconds, 0)) * time.Second
	id := a.newIdentity(uuid, cert, key, grace)
	id.labels, id.hostname = resp.Labels, resp.Hostname
	return id, tr, nil
}

// checkCertificate verifies that leaf is the workload's certificate: its
// key is pub, its only SAN is uri, the workload URI asked for, it chains to
// the bundle for client authentication, and it has not expired.
func checkCertificate(leaf *x509.Certificate, intermediates []*x509.Certificate, bundle *x509.CertPool,
	pub crypto.PublicKey, uri *url.URL, now time.Time) error {
	if k, ok := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !k.Equal(pub) {
		return errors.New("the certificate received is not for the agent's key")
	}
	want := uri.String()
	if len(leaf.URIs) != 1 || leaf.URIs[0].String() != want ||
		len(leaf.DNSNames) > 0 || len(leaf.IPAddresses) > 0 || len(leaf.EmailAddresses) > 0 {
		return fmt.Errorf("the certificate received does not name exactly %s and nothing else", want)
	}
	if !now.Before(leaf.NotAfter) {
		return fmt.Errorf("the certificate received expired at %s", leaf.NotAfter.Format(time.RFC3339))
	}
	opts := x509.VerifyOptions{
		Roots:         bundle,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		// A clock behind the server's more than the backdating allows must
		// not reject a good certificate: verify within its validity.
		CurrentTime: now,
	}
	if now.Before(leaf.NotBefore) {
		opts.CurrentTime = leaf.NotBefore
	}
	for _, c := range intermediates {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return fmt.Errorf("the certificate received does not chain to the bundle received: %w", err)
	}
	return nil
}

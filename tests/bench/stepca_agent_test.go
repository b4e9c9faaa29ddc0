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
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/credo-dev/credo/tests/enrolldriver"
)

// stepAgent is a client of step-ca as a credo agent is of credo: it gets a
// certificate for a fresh key with a one-time token, then renews it with
// the certificate itself. As enrolldriver's agents do, it signs on one
// kept-alive connection and renews on a new connection each time.
type stepAgent struct {
	ca     *stepCA
	signer jose.Signer
	// signing is the kept-alive client of sign.
	signing *http.Client
	// cert is the current certificate and its key; nil before sign.
	cert *tls.Certificate
}

func newStepAgent(ca *stepCA) (*stepAgent, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: ca.key, KeyID: ca.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.roots, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 4}
	return &stepAgent{ca: ca, signer: signer, signing: &http.Client{Timeout: time.Minute, Transport: tr}}, nil
}

// sign asks for a certificate naming uri (its one URI SAN) for a fresh
// P-256 key, as `step ca certificate` does, and keeps it.
func (a *stepAgent) sign(uri *url.URL) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{URIs: []*url.URL{uri}}, key)
	if err != nil {
		return err
	}
	ott, err := a.token(uri.String())
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{
		"csr": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr})),
		"ott": ott,
	})
	if err != nil {
		return err
	}
	leaf, err := a.post("sign", "/1.0/sign", body, nil, uri)
	if err != nil {
		return err
	}
	a.cert = &tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	return nil
}

// renew renews the current certificate, presenting it over mTLS with no
// request body, and keeps the new one.
func (a *stepAgent) renew() error {
	leaf, err := a.post("renewal", "/1.0/renew", nil, a.cert, a.cert.Leaf.URIs[0])
	if err != nil {
		return err
	}
	a.cert = &tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: a.cert.PrivateKey, Leaf: leaf}
	return nil
}

// token is a one-time token of the JWK provisioner for a certificate
// naming sub: step-ca checks its signature by the key whose ID is kid, its
// issuer, its audience (the sign URL, compared without the port), its
// times, and that its jti was never used; sans must match the CSR's names.
func (a *stepAgent) token(sub string) (string, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	now := time.Now()
	claims := struct {
		jwt.Claims
		SANs []string `json:"sans"`
	}{
		Claims: jwt.Claims{
			Issuer: stepProvisioner, Subject: sub, Audience: jwt.Audience{a.ca.base + "/1.0/sign"},
			NotBefore: jwt.NewNumericDate(now), IssuedAt: jwt.NewNumericDate(now),
			Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute)), ID: hex.EncodeToString(id),
		},
		SANs: []string{sub},
	}
	return jwt.Signed(a.signer).Claims(claims).Serialize()
}

// post posts body to step-ca's path: with cert, on a new connection
// presenting it; without, on the agent's kept-alive connection; and returns the certificate it answers with, which must name
// uri. Any other answer is an *enrolldriver.Refusal carrying step-ca's
// message.
func (a *stepAgent) post(step, path string, body []byte, cert *tls.Certificate, uri *url.URL) (*x509.Certificate, error) {
	c := a.signing
	if cert != nil {
		cfg := &tls.Config{RootCAs: a.ca.roots, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*cert}}
		c = &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	}
	resp, err := c.Post(a.ca.base+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var answer struct {
		Certificate string `json:"crt"`
		Message     string `json:"message"`
	}
	_ = json.Unmarshal(data, &answer)
	if resp.StatusCode/100 != 2 {
		return nil, &enrolldriver.Refusal{Step: step, Status: resp.StatusCode, Reason: answer.Message}
	}
	blk, _ := pem.Decode([]byte(answer.Certificate))
	if blk == nil {
		return nil, errors.New(step + ": no certificate in the answer")
	}
	leaf, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", step, err)
	}
	if len(leaf.URIs) != 1 || leaf.URIs[0].String() != uri.String() {
		return nil, fmt.Errorf("%s: the certificate names %v, not %s", step, leaf.URIs, uri)
	}
	return leaf, nil
}

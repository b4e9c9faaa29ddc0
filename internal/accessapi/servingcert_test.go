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

package accessapi_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"sync"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/accessapi"
)

func TestReplicasShareOneGeneratedServingCert(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := env.Client
	hosts := []string{"credo-access.credo-system.svc", "localhost"}

	var wg sync.WaitGroup
	certs := make([]*accessapi.ServingCert, 5)
	errs := make([]error, 5)
	for i := range certs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			certs[i], errs[i] = accessapi.EnsureServingCert(ctx, c, "default", "shared-serving-cert", hosts)
		}()
	}
	wg.Wait()
	for i := range certs {
		g.Expect(errs[i]).NotTo(HaveOccurred())
		g.Expect(certs[i].CAPEM).To(Equal(certs[0].CAPEM), "every replica serves with the same CA")
		g.Expect(certs[i].CertPEM).To(Equal(certs[0].CertPEM))
	}

	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(certs[0].CAPEM)).To(BeTrue())
	block, _ := pem.Decode(certs[0].CertPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "credo-access.credo-system.svc"})
	g.Expect(err).NotTo(HaveOccurred())
}

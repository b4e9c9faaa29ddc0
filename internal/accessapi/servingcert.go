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

package accessapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=get;patch,resourceNames=v1alpha1.access.credo.dev
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts,verbs=get

// ServingCert is the access API's serving certificate, shared by every
// replica through one Secret so that the APIService's caBundle is the same
// whichever replica answers.
type ServingCert struct {
	CertPEM, KeyPEM, CAPEM []byte
}

// servingCertValidity is how long a generated serving certificate lasts.
const servingCertValidity = 5 * 365 * 24 * time.Hour

// EnsureServingCert returns the serving certificate kept in the Secret
// namespace/name, creating a self-signed CA and a certificate for hosts
// when the Secret does not exist. The first replica to create the Secret
// wins; the others read it. No cert-manager is needed.
func EnsureServingCert(ctx context.Context, c client.Client, namespace, name string, hosts []string) (*ServingCert, error) {
	var s corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		sc, genErr := generateServingCert(hosts)
		if genErr != nil {
			return nil, genErr
		}
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: sc.CertPEM, corev1.TLSPrivateKeyKey: sc.KeyPEM, "ca.crt": sc.CAPEM},
		}
		err = c.Create(ctx, &s)
		if err == nil {
			return sc, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the serving certificate Secret %s/%s: %w", namespace, name, err)
		}
		err = c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the serving certificate Secret %s/%s: %w", namespace, name, err)
	}
	sc := &ServingCert{CertPEM: s.Data[corev1.TLSCertKey], KeyPEM: s.Data[corev1.TLSPrivateKeyKey], CAPEM: s.Data["ca.crt"]}
	if len(sc.CertPEM) == 0 || len(sc.KeyPEM) == 0 || len(sc.CAPEM) == 0 {
		return nil, fmt.Errorf("the serving certificate Secret %s/%s lacks tls.crt, tls.key or ca.crt", namespace, name)
	}
	return sc, nil
}

// WriteTo writes <pair>.crt (the certificate then the CA) and <pair>.key
// into dir, where the server's SecureServing options read them.
func (sc *ServingCert) WriteTo(dir, pair string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	chain := append(append([]byte{}, sc.CertPEM...), sc.CAPEM...)
	if err := os.WriteFile(filepath.Join(dir, pair+".crt"), chain, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, pair+".key"), sc.KeyPEM, 0o600)
}

// InjectCABundle sets the APIService's caBundle to ca, the controller's
// own CA injection (cert-manager's cainjector is the alternative).
func InjectCABundle(ctx context.Context, c client.Client, ca []byte) error {
	var svc apiregistrationv1.APIService
	if err := c.Get(ctx, client.ObjectKey{Name: APIServiceName}, &svc); err != nil {
		return fmt.Errorf("reading APIService %s: %w", APIServiceName, err)
	}
	if string(svc.Spec.CABundle) == string(ca) {
		return nil
	}
	before := svc.DeepCopy()
	svc.Spec.CABundle = ca
	if err := c.Patch(ctx, &svc, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("injecting the caBundle into APIService %s: %w", APIServiceName, err)
	}
	return nil
}

func generateServingCert(hosts []string) (*ServingCert, error) {
	if len(hosts) == 0 {
		return nil, errors.New("no host names for the serving certificate")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "credo-access-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(servingCertValidity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(servingCertValidity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &ServingCert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		CAPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

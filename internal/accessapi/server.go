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
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/compatibility"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credopem "github.com/credo-dev/credo/internal/pem"
)

// Server is the access.credo.dev aggregated API server. It persists
// nothing and holds no state but its certificate: every replica serves.
type Server struct {
	generic  *genericapiserver.GenericAPIServer
	caBundle []byte
	ip       net.IP
	port     int
}

// New builds the server: it generates the serving certificate when needed
// and installs mints and revocations backed by ops. It does not listen yet.
func New(opts *Options, ops *Operations) (*Server, error) {
	if ops == nil {
		return nil, errors.New("the access API needs its operations")
	}
	o := *opts
	if o.Listener != nil {
		if tcp, ok := o.Listener.Addr().(*net.TCPAddr); ok {
			o.SecurePort = tcp.Port
			o.BindAddress = tcp.IP
		}
	}
	certDir := o.CertDir
	if certDir == "" {
		dir, err := os.MkdirTemp("", "credo-access-api-")
		if err != nil {
			return nil, fmt.Errorf("creating the certificate directory: %w", err)
		}
		certDir = dir
	}
	ro := o.recommended(certDir)
	svc := o.ServiceName + "." + o.ServiceNamespace + ".svc"
	if err := ro.SecureServing.MaybeDefaultWithSelfSignedCerts(svc,
		[]string{svc, svc + ".cluster.local", "localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}); err != nil {
		return nil, fmt.Errorf("generating the serving certificate: %w", err)
	}
	if errs := ro.Validate(); len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}

	config := genericapiserver.NewRecommendedConfig(Codecs)
	config.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	namer := definitionNamer()
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(Scheme))
	config.OpenAPIConfig.Info.Title = "credo access"
	config.OpenAPIConfig.GetDefinitionName = namer
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(Scheme))
	config.OpenAPIV3Config.Info.Title = "credo access"
	config.OpenAPIV3Config.GetDefinitionName = namer
	// DefaultOpenAPIV3Config resolved the definitions with the scheme's
	// namer; resolve them again with ours.
	config.OpenAPIV3Config.Definitions = nil
	if err := ro.ApplyTo(config); err != nil {
		return nil, fmt.Errorf("configuring the access API server: %w", err)
	}
	// On stop: /readyz fails at once, the server serves ShutdownDelay more,
	// then closes its listener and waits for the requests in flight.
	config.ShutdownDelayDuration = o.ShutdownDelay
	// A replica whose credentials kube-apiserver refuses (its pod deleted)
	// answers 503 with Retry-After where it would answer 500.
	answerRefusedCredentials(&config.Config)
	if err := restrictToProxied(&config.Config, ro.Authorization.AlwaysAllowPaths); err != nil {
		return nil, fmt.Errorf("configuring the access API server: %w", err)
	}

	generic, err := config.Complete().New("credo-access-api", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating the access API server: %w", err)
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(accessv1.GroupVersion.Group, Scheme, metav1.ParameterCodec, Codecs)
	group.VersionedResourcesStorageMap[accessv1.GroupVersion.Version] = map[string]rest.Storage{
		"mints":       NewMintREST(ops),
		"revocations": NewRevocationREST(ops),
		// Join tokens of enrollment.credo.dev policies, minted like passwords.
		"jointokenrequests": NewJoinTokenREST(ops.Client, ops.Now),
		// The account view, and mint and revoke naming the account in the URL
		// (and so in kube-apiserver's audit log).
		"accounts":            NewAccountREST(ops),
		"accounts/mint":       NewAccountMintREST(ops),
		"accounts/revocation": NewAccountRevocationREST(ops),
	}
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("installing access.credo.dev: %w", err)
	}

	ca, err := caBundle(filepath.Join(certDir, o.CertPairName+".crt"))
	if err != nil {
		return nil, err
	}
	return &Server{generic: generic, caBundle: ca, ip: o.BindAddress, port: o.SecurePort}, nil
}

// CABundle returns the PEM of the CA that signed the serving certificate:
// the APIService's caBundle.
func (s *Server) CABundle() []byte { return s.caBundle }

// Address is the address and port the server listens on.
func (s *Server) Address() (net.IP, int) { return s.ip, s.port }

// Run serves until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	return s.generic.PrepareRun().RunWithContext(ctx)
}

// Run builds the server and serves until ctx is done.
func Run(ctx context.Context, opts *Options, ops *Operations) error {
	s, err := New(opts, ops)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// CABundleFromCertDir returns the CA of the serving certificate a server
// started with CertDir dir (and the default pair name) generated or was given,
// for an APIService's caBundle when the server runs as another process.
func CABundleFromCertDir(dir string) ([]byte, error) {
	return caBundle(filepath.Join(dir, NewOptions().CertPairName+".crt"))
}

// caBundle reads a certificate chain and returns its CA certificates; a
// chain without one is returned whole.
func caBundle(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the serving certificate: %w", err)
	}
	// The file is the server's own: blocks other than certificates are
	// passed over, not refused.
	certs, err := credopem.CertificatesAmong(data)
	if err != nil {
		return nil, fmt.Errorf("parsing the serving certificate: %w", err)
	}
	var cas []byte
	for _, cert := range certs {
		if cert.IsCA {
			cas = append(cas, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})...)
		}
	}
	if len(cas) == 0 {
		return data, nil
	}
	return cas, nil
}

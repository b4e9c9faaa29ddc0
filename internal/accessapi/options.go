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
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
)

// Defaults of the access API's Service: kube-apiserver reaches the server
// at <ServiceName>.<ServiceNamespace>.svc, the name its serving
// certificate must hold.
const (
	DefaultServiceName      = "credo-access"
	DefaultServiceNamespace = "credo-system"
	DefaultSecurePort       = 9443
)

// Options configure the access API server. BindFlags registers them under
// the access-api- prefix, beside the manager's flags.
type Options struct {
	// SecurePort is the HTTPS port; 0 turns the server off. Default 9443.
	SecurePort int
	// BindAddress is the address to listen on; default 0.0.0.0.
	BindAddress net.IP
	// CertDir holds <CertPairName>.crt and .key. When they do not exist a
	// self-signed CA and serving certificate are generated into it. Empty: a
	// new temporary directory.
	CertDir string
	// CertPairName is the base name of the certificate files; default "apiserver".
	CertPairName string
	// Kubeconfig is used to read kube-apiserver's request-header
	// configuration (the extension-apiserver-authentication ConfigMap), for
	// delegated authorization (SubjectAccessReview) and the core API. Empty:
	// the in-cluster config.
	Kubeconfig string
	// ServiceName and ServiceNamespace name the Service kube-apiserver
	// reaches the server through; the generated certificate is for
	// <ServiceName>.<ServiceNamespace>.svc.
	ServiceName      string
	ServiceNamespace string
	// Listener, when set, is used instead of listening on BindAddress and
	// SecurePort (tests bind 127.0.0.1:0).
	Listener net.Listener
	// ServingSecret is the Secret, in ServiceNamespace, holding the
	// self-signed serving certificate every replica shares; created when
	// absent. Empty: CertDir as given (e.g. mounted from cert-manager).
	ServingSecret string
	// InjectCA keeps the APIService's caBundle set to the CA of the shared
	// serving certificate (off when cert-manager's cainjector does it).
	InjectCA bool
	// ShutdownDelay is how long the server keeps serving once it is told to
	// stop, its readiness already failing, so that the Service's endpoints
	// and kube-proxy stop sending it requests before it closes its listener;
	// then it lets the requests in flight finish. Default 5s.
	ShutdownDelay time.Duration
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		SecurePort:       DefaultSecurePort,
		BindAddress:      net.IPv4zero,
		CertPairName:     "apiserver",
		ServiceName:      DefaultServiceName,
		ServiceNamespace: DefaultServiceNamespace,
		ServingSecret:    DefaultServingSecret,
		InjectCA:         true,
		ShutdownDelay:    DefaultShutdownDelay,
	}
}

// DefaultShutdownDelay is Options.ShutdownDelay's default: time for the
// EndpointSlice controller and kube-proxy (about a second each on a quiet
// cluster) to take a terminating replica out of the Service.
const DefaultShutdownDelay = 5 * time.Second

// DefaultServingSecret is the Secret of the shared serving certificate.
const DefaultServingSecret = "credo-access-serving-cert"

// BindFlags registers the options on fs. Call it on NewOptions' result so
// the defaults show.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.SecurePort, "access-api-secure-port", o.SecurePort,
		"The HTTPS port of the access.credo.dev aggregated API server; 0 turns it off.")
	fs.IPVar(&o.BindAddress, "access-api-bind-address", o.BindAddress,
		"The address the access.credo.dev aggregated API server listens on.")
	fs.StringVar(&o.CertDir, "access-api-cert-dir", o.CertDir,
		"The directory of the access API's serving certificate (<pair-name>.crt, <pair-name>.key); "+
			"a self-signed one is generated there when absent. Empty: a temporary directory.")
	fs.StringVar(&o.CertPairName, "access-api-cert-pair-name", o.CertPairName,
		"The base name of the access API's certificate files in --access-api-cert-dir (\"tls\" for a cert-manager Secret).")
	fs.StringVar(&o.Kubeconfig, "access-api-kubeconfig", o.Kubeconfig,
		"The kubeconfig for the access API's delegated authentication and authorization; empty: the in-cluster config, or outside a cluster the first file of $KUBECONFIG.")
	fs.StringVar(&o.ServiceName, "access-api-service-name", o.ServiceName,
		"The name of the Service the access APIService points at (the serving certificate is for <name>.<namespace>.svc).")
	fs.StringVar(&o.ServiceNamespace, "access-api-service-namespace", o.ServiceNamespace,
		"The namespace of the Service the access APIService points at.")
	fs.StringVar(&o.ServingSecret, "access-api-serving-secret", o.ServingSecret,
		"The Secret, in --access-api-service-namespace, holding the access API's self-signed serving certificate shared by all replicas; created when absent. Empty: use --access-api-cert-dir as given (e.g. mounted from cert-manager).")
	fs.BoolVar(&o.InjectCA, "access-api-inject-ca", o.InjectCA,
		"Keep the APIService's caBundle set to the CA of the shared serving certificate (disable when cert-manager's cainjector does it).")
	fs.DurationVar(&o.ShutdownDelay, "access-api-shutdown-delay", o.ShutdownDelay,
		"How long the access API keeps serving after SIGTERM, not ready, before it closes its listener and lets the requests in flight finish: "+
			"time for the Service to stop routing to this replica. Keep the pod's terminationGracePeriodSeconds above it plus the longest mint.")
}

// Enabled reports whether the server is to run.
func (o *Options) Enabled() bool { return o.SecurePort > 0 || o.Listener != nil }

// kubeconfig is Kubeconfig; when empty and outside a cluster (a controller
// run locally, `make dev`), the first file of $KUBECONFIG, which the
// manager uses too; else "" for the in-cluster config.
func (o *Options) kubeconfig() string {
	if o.Kubeconfig != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return o.Kubeconfig
	}
	if paths := filepath.SplitList(os.Getenv("KUBECONFIG")); len(paths) > 0 {
		return paths[0]
	}
	return ""
}

// recommended builds the generic server's options: delegated authentication
// (narrowed by New to the requests kube-apiserver proxies, see proxiedOnly)
// and authorization, no etcd, no admission, no audit of its own
// (kube-apiserver audits), no profiling, no priority and fairness.
func (o *Options) recommended(certDir string) *genericoptions.RecommendedOptions {
	ro := genericoptions.NewRecommendedOptions("", nil)
	ro.Etcd = nil
	ro.Admission = nil
	ro.Audit = nil
	ro.EgressSelector = nil
	ro.Traces = nil

	ro.SecureServing.BindPort = o.SecurePort
	ro.SecureServing.BindAddress = o.BindAddress
	ro.SecureServing.Listener = o.Listener
	ro.SecureServing.ServerCert.CertDirectory = certDir
	ro.SecureServing.ServerCert.PairName = o.CertPairName

	kubeconfig := o.kubeconfig()
	ro.Authentication.RemoteKubeConfigFile = kubeconfig
	// Without the request-header configuration no request can be
	// recognised as proxied: fail rather than start.
	ro.Authentication.TolerateInClusterLookupFailure = false
	ro.Authorization.RemoteKubeConfigFile = kubeconfig
	ro.CoreAPI.CoreAPIKubeconfigPath = kubeconfig

	ro.Features.EnableProfiling = false
	ro.Features.EnableContentionProfiling = false
	ro.Features.EnablePriorityAndFairness = false
	return ro
}

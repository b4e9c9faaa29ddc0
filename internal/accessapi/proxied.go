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
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	unionauth "k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"
)

// UnproxiedMessage is the message of the 401 the access API answers to
// every request kube-apiserver did not proxy to it.
const UnproxiedMessage = "the access API serves only requests that kube-apiserver proxies to it, " +
	"so that kube-apiserver authenticates, authorizes and audits each one: send the request to kube-apiserver " +
	"(kubectl credo mint <account>, or kubectl create on access.credo.dev/v1alpha1), not to this server's port"

// notProxied is the reason logged when the front proxy's authenticator
// refuses a request without an error: it carried no front-proxy client
// certificate, or no user header.
const notProxied = "no front-proxy client certificate with a user header"

// proxiedOnly restricts the server to what kube-apiserver proxies: a
// request is authenticated only by kube-apiserver's front-proxy client
// certificate, verified against the request-header client CA (and its
// allowed names) kube-apiserver publishes in
// kube-system/extension-apiserver-authentication, and the X-Remote-* headers
// it sets; the headers are never read without that certificate. Bearer
// tokens (TokenReview) and the cluster's own client certificates, which the
// generic server's delegated authentication also accepts, are refused: a
// request carrying them reached the port directly and would be in no
// audit log. Only the paths in anonymousPaths (the health checks) are
// served without credentials. The generic server's loopback client (which
// nothing here uses: no admission, no priority and fairness) is refused
// too.
type proxiedOnly struct {
	frontProxy     authenticator.Request
	anonymousPaths sets.Set[string]
}

// restrictToProxied replaces the authenticator config's delegated
// authentication set up (front proxy, client certificates, bearer tokens,
// anonymous) with proxiedOnly, and has the handler chain answer a refused
// request with UnproxiedMessage. anonymousPaths are the paths served
// without credentials: the authorizer's always-allowed paths.
func restrictToProxied(config *genericapiserver.Config, anonymousPaths []string) error {
	rh := config.Authentication.RequestHeaderConfig
	if rh == nil {
		return errors.New("kube-apiserver publishes no request-header client CA in kube-system/extension-apiserver-authentication " +
			"(--requestheader-client-ca-file): the access API serves only requests kube-apiserver proxies, and could not recognise them")
	}
	frontProxy, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{RequestHeaderConfig: rh}.New()
	if err != nil {
		return err
	}
	p := &proxiedOnly{frontProxy: frontProxy, anonymousPaths: sets.New(anonymousPaths...)}
	config.Authentication.Authenticator = p.authenticator()
	build := config.BuildHandlerChainFunc
	config.BuildHandlerChainFunc = func(handler http.Handler, c *genericapiserver.Config) http.Handler {
		return p.filter(build(handler, c), c)
	}
	return nil
}

type frontProxyResponseKey struct{}

// filter authenticates the request with the front proxy before anything
// else and hands the result to the generic chain's authentication (see
// authenticator) through the request's context; a request it cannot
// authenticate is answered 401 with UnproxiedMessage, unless its path is
// served anonymously.
func (p *proxiedOnly) filter(handler http.Handler, c *genericapiserver.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		resp, ok, err := p.frontProxy.AuthenticateRequest(req)
		if ok && resp != nil {
			handler.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), frontProxyResponseKey{}, resp)))
			return
		}
		if p.anonymousPaths.Has(req.URL.Path) {
			handler.ServeHTTP(w, req)
			return
		}
		// The verification error names certificates, never a credential.
		klog.V(2).InfoS("Refused a request kube-apiserver did not proxy", "remote", req.RemoteAddr, "method", req.Method,
			"path", req.URL.Path, "reason", errString(err))
		// As the generic server's own 401: no HTTP/2 connection is kept open
		// for an unauthenticated client.
		if req.ProtoMajor == 2 {
			w.Header().Set("Connection", "close")
		}
		responsewriters.ErrorNegotiated(apierrors.NewUnauthorized(UnproxiedMessage), c.Serializer, schema.GroupVersion{}, w, req)
	})
}

// authenticator is the generic chain's authenticator: the front proxy's
// answer filter found, or, on the anonymous paths only, the anonymous user.
// A request that did not pass through filter authenticates as nobody.
func (p *proxiedOnly) authenticator() authenticator.Request {
	fromFilter := authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok := req.Context().Value(frontProxyResponseKey{}).(*authenticator.Response)
		return resp, ok && resp != nil, nil
	})
	if p.anonymousPaths.Len() == 0 {
		// anonymous.NewAuthenticator without conditions admits every path.
		return fromFilter
	}
	var conditions []apiserver.AnonymousAuthCondition
	for _, path := range sets.List(p.anonymousPaths) {
		conditions = append(conditions, apiserver.AnonymousAuthCondition{Path: path})
	}
	return unionauth.NewFailOnError(fromFilter, anonymous.NewAuthenticator(conditions))
}

func errString(err error) string {
	if err == nil {
		return notProxied
	}
	return err.Error()
}

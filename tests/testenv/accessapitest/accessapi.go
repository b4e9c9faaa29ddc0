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

// Package accessapitest serves the access API in-process for the tests
// that need it, apart from testenv so that testenv does not import the
// access API (and, through it, internal/account, whose own tests use
// testenv).
package accessapitest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/controlplane"
)

// AccessAPI is the access API server running in-process.
type AccessAPI struct {
	// URL is the server's own address, which only kube-apiserver should reach.
	URL string
	// CA is the CA bundle of the server's certificate.
	CA []byte
}

// StartAccessAPI serves access.credo.dev in-process on a free loopback port
// until ctx ends, built by accessapi.New as cmd/credential-controller
// builds it, authenticated as user, who holds only the delegated-auth
// bindings, and registers it with kube-apiserver as its APIService.
func StartAccessAPI(ctx context.Context, cp *controlplane.Environment, user string, ops *accessapi.Operations) (*AccessAPI, error) {
	kubeconfig, err := cp.WriteKubeconfig(user, nil, "access-api.kubeconfig")
	if err != nil {
		return nil, err
	}
	if err := accessapi.GrantDelegatedAuth(ctx, cp.Config, user,
		rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	opts := accessapi.NewOptions()
	opts.Listener = ln
	opts.Kubeconfig = kubeconfig
	opts.CertDir = filepath.Join(cp.Dir, "access-api-certs")
	srv, err := accessapi.New(opts, ops)
	if err != nil {
		return nil, fmt.Errorf("creating the access API server: %w", err)
	}
	go func() {
		if err := srv.Run(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "access API server: %v\n", err)
		}
	}()
	regCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := accessapi.Register(regCtx, cp.Config, accessapi.Registration{
		Port:     int32(ln.Addr().(*net.TCPAddr).Port),
		CABundle: srv.CABundle(),
	}); err != nil {
		return nil, fmt.Errorf("registering the access API: %w", err)
	}
	return &AccessAPI{URL: "https://" + ln.Addr().String(), CA: srv.CABundle()}, nil
}

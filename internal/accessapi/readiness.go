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
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Readiness is the access API's part of the controller's readiness
// (/readyz on the health port, which the pod's readiness probe reads), so
// that a replica is in the Service kube-apiserver proxies to only while its
// access API can serve:
//
//   - waiting for the delegated-auth bindings of config/apiservice: ready.
//     The API is not installed yet, and Flux applies config/apiservice only
//     once the Deployment is Ready: not ready would hold both back for good.
//   - built, not listening yet: not ready.
//   - listening: the server's own /readyz over loopback, which fails as soon
//     as it is told to stop (Options.ShutdownDelay) and while it has not
//     synced what it reads.
type Readiness struct {
	mu     sync.Mutex
	url    string // "" while waiting for the bindings
	client *http.Client
}

// NewReadiness returns a Readiness waiting for the delegated-auth bindings.
func NewReadiness() *Readiness {
	return &Readiness{client: &http.Client{
		// Below the readiness probe's timeoutSeconds (3).
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			// A probe of this process's own listener on loopback, which
			// reads only the status: the certificate is for the Service's
			// name and is checked by kube-apiserver, not here.
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
			DisableKeepAlives: true,
		},
	}}
}

// starting records that the server is built and about to listen on
// address:port.
func (r *Readiness) starting(address net.IP, port int) {
	host := "127.0.0.1"
	if address != nil && !address.IsUnspecified() {
		host = address.String()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.url = "https://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/readyz"
}

// Check is a controller-runtime healthz.Checker.
func (r *Readiness) Check(req *http.Request) error {
	r.mu.Lock()
	url := r.url
	r.mu.Unlock()
	if url == "" {
		return nil // waiting for the bindings
	}
	ctx := context.Background()
	if req != nil {
		ctx = req.Context()
	}
	probe, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := r.client.Do(probe)
	if err != nil {
		return fmt.Errorf("the access API does not answer: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return errors.New("the access API is not ready: " + resp.Status + ": " + string(body))
	}
	return nil
}

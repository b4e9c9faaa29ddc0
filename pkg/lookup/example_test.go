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

package lookup_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/credo-dev/credo/pkg/agent"
	"github.com/credo-dev/credo/pkg/lookup"
)

// A relying service that embeds the agent: it serves HTTPS with its own
// workload certificate, admits only peers whose workload certificate
// verifies against the credo bundle, and of those only the ones the
// registry labels role=frontend now. The platform (or the namespace's
// admin) lets the service's policy look the peers up:
//
//	kubectl create rolebinding orders-look-up --clusterrole=credo-workload-lookup \
//	  --group=credo:policy:tenant-demo:orders -n tenant-demo
func Example() {
	ag, err := agent.New(agent.Config{
		Server:    "https://enroll.example.org:9443",
		CAFile:    "/etc/credo/enrollment-ca.pem",
		TokenFile: "/etc/credo/token",
		StateDir:  "/var/lib/orders/credo",
	})
	if err != nil {
		log.Fatal(err)
	}
	go func() { log.Fatal(ag.Run(context.Background())) }()

	caFile, err := os.ReadFile("/etc/credo/enrollment-ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caFile)
	registry, err := lookup.New(lookup.Options{
		Endpoint:          "https://enroll.example.org:9443",
		Roots:             roots,
		ClientCertificate: ag.CurrentCertificate,
	})
	if err != nil {
		log.Fatal(err)
	}
	orders := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, _ := lookup.PeerFrom(r.Context())
		fmt.Fprintf(w, "orders for %s (%s)\n", peer.UUID, peer.Hostname)
	})
	mux := http.NewServeMux()
	mux.Handle("/orders", registry.RequireLabel("role", "frontend")(orders))
	srv := &http.Server{Addr: ":8443", Handler: mux, TLSConfig: ag.ServerTLSConfig(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServeTLS("", ""))
}

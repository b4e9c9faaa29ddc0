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

package main

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

const caUsage = `usage: kubectl credo ca <release> [-n namespace] > ca.crt

Print the CA certificates of a release from its TrustAnchor: what a client needs to verify the engine.`

// ca prints the CA certificates of a release, from its TrustAnchor's
// status.caBundle: the certificates the trust-controller projects, read
// with no Secret read (the built-in view role may).
//
//	kubectl credo ca pg -n tenant-demo > ca.crt
func ca(args []string, stdout io.Writer) error {
	cmd := newCommand("ca", caUsage)
	return cmd.run(args, stdout, oneArg, func(ctx context.Context, c client.Client, ns string) error {
		release := cmd.fs.Arg(0)
		var ta trustv1.TrustAnchor
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: release}, &ta); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("no TrustAnchor %q in %s: the CA of release %s is not published (kubectl get trustanchors -n %s)", release, ns, release, ns)
			}
			return fmt.Errorf("reading TrustAnchor %s/%s: %w", ns, release, err)
		}
		if ta.Status.CABundle == "" {
			_, msg := readyOf(ta.Status.Conditions)
			if msg == "" || msg == "-" {
				msg = "no status yet"
			}
			return fmt.Errorf("TrustAnchor %s/%s has not projected a certificate yet: %s", ns, release, msg)
		}
		_, err := io.WriteString(stdout, ta.Status.CABundle)
		return err
	})
}

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
	"errors"
	"fmt"
	"io"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// timeout bounds a verb's calls to the cluster.
const timeout = 30 * time.Second

// cluster is what the commands that talk to kube-apiserver share: the
// user's kubeconfig, any auth method kubectl supports.
type cluster struct {
	flags    *genericclioptions.ConfigFlags
	warnings warnings
}

func (c *cluster) client() (client.Client, string, error) {
	cfg, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.WarningHandlerWithContext = &c.warnings
	ns, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("resolving the namespace: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(authenticationv1.AddToScheme(scheme))
	utilruntime.Must(accessv1.AddToScheme(scheme))
	utilruntime.Must(enrollv1.AddToScheme(scheme))
	utilruntime.Must(trustv1.AddToScheme(scheme))
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", err
	}
	return cl, ns, nil
}

// namespaceFromContext is true when -n names no namespace: the verb acts
// in the current context's.
func (c *cluster) namespaceFromContext() bool { return *c.flags.Namespace == "" }

// argCount is how many arguments a verb takes after its flags: from min
// to max.
type argCount struct{ min, max int }

var (
	noArg       = argCount{0, 0}
	oneArg      = argCount{1, 1}
	optionalArg = argCount{0, 1}
)

// clusterVerb is a verb's work on the cluster: c talks to it, ns is the
// namespace (-n, else the current context's), ctx bounds the calls.
type clusterVerb func(ctx context.Context, c client.Client, ns string) error

// run is the opening every verb that talks to the cluster shares, then the
// verb. It parses args (-h or --help prints the help, and the verb stops
// there), answers a count of arguments out of want with the usage, runs
// the verb's checks, which refuse before anything contacts the cluster,
// and runs verb with a client, the namespace and a context bounded by
// timeout.
//
//	cmd := newCommand("ca", caUsage)
//	return cmd.run(args, stdout, oneArg, func(ctx context.Context, c client.Client, ns string) error {
//		release := cmd.fs.Arg(0)
//		...
//	})
func (c *command) run(args []string, stdout io.Writer, want argCount, verb clusterVerb) error {
	cl := c.cluster()
	if help, err := c.parse(args, stdout); help || err != nil {
		return err
	}
	if n := c.fs.NArg(); n < want.min || n > want.max {
		return errors.New(c.usage)
	}
	for _, check := range c.checks {
		if err := check(); err != nil {
			return err
		}
	}
	kc, ns, err := cl.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return verb(ctx, kc, ns)
}

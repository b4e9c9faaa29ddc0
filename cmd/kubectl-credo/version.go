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

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// versionFlags choose the account Secret's resourceVersion a mint or a
// revocation expects. By default it is the version the account view shows
// just before the request: a mint or revocation someone else made in
// between (whose password they may already be using) makes this one fail
// with 409 Conflict rather than silently supersede it.
type versionFlags struct {
	verb            string
	resourceVersion string
	force           bool
	// read is the version read from the account view, if any.
	read string
}

func bindVersionFlags(fs *pflag.FlagSet, verb string) *versionFlags {
	v := &versionFlags{verb: verb}
	fs.StringVar(&v.resourceVersion, "resource-version", "",
		"fail with 409 unless the account Secret is at this resourceVersion (default: the version the account view shows just before the request)")
	fs.BoolVar(&v.force, "force", false,
		verb+" whatever happened since you last looked: send no expected version and do not read the account view")
	return v
}

// expected returns the version to send: --resource-version, none with
// --force, else the account view's .status.secretResourceVersion (empty
// while the Secret does not exist or is not credo's: the server then
// refuses the request and says why).
func (v *versionFlags) expected(ctx context.Context, c client.Client, ns, name string) (string, error) {
	switch {
	case v.force && v.resourceVersion != "":
		return "", errors.New("--force and --resource-version exclude each other: --force sends no expected version")
	case v.force:
		return "", nil
	case v.resourceVersion != "":
		return v.resourceVersion, nil
	}
	var a accessv1.Account
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &a); err != nil {
		if apierrors.IsForbidden(err) {
			return "", fmt.Errorf("reading account %s/%s for the version to expect: %w; this needs get on accounts.access.credo.dev "+
				"(credo-mint, credo-revoke and credo-access-view grant it): pass --resource-version, or --force to %s without one", ns, name, err, v.verb)
		}
		return "", fmt.Errorf("reading account %s/%s for the version to expect: %w", ns, name, err)
	}
	v.read = a.Status.SecretResourceVersion
	return v.read, nil
}

// explain adds to a conflict on the version read from the account view
// what happened, when the account has changed since: someone else minted or
// revoked in between.
func (v *versionFlags) explain(ctx context.Context, c client.Client, ns, name string, err error) error {
	if v.read == "" || !apierrors.IsConflict(err) {
		return err
	}
	var a accessv1.Account
	if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &a) != nil || a.Status.SecretResourceVersion == v.read {
		return err
	}
	return fmt.Errorf("%w; the account Secret went from resourceVersion %s to %s after it was read: someone else minted or revoked "+
		"in between and may be using the result (kubectl credo get %s -n %s shows who); run the command again to %s after them, or pass --force",
		err, v.read, a.Status.SecretResourceVersion, name, ns, v.verb)
}

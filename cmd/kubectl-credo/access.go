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
	"sort"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

const mintUsage = `usage: kubectl credo mint <account> [-n namespace] [-o json|yaml|env] [--resource-version <version> | --force]

Mint a new password for a tenant account and print it once; credo keeps only its verifier.`

// mint creates a Mint and prints the password once.
func mint(args []string, stdout io.Writer) error {
	cmd := newCommand("mint", mintUsage)
	output := bindOutput(cmd, stdout, "password")
	version := bindVersionFlags(cmd.fs, "mint")
	return cmd.run(args, stdout, oneArg, func(ctx context.Context, c client.Client, ns string) error {
		m := &accessv1.Mint{}
		if err := (accountRequest{"mint", "minting", m, &m.Spec}).post(ctx, c, ns, version, cmd.fs.Arg(0)); err != nil {
			return err
		}
		return printMint(stdout, *output, m, cmd.cluster().warnings.texts)
	})
}

// printMint prints the minted password in the output asked for; the
// server's warnings (already on stderr) close the human output.
func printMint(w io.Writer, output string, m *accessv1.Mint, warned []string) error {
	st := m.Status
	human := fmt.Sprintf("username: %s\npassword: %s\nsecret:   %s (resourceVersion %s)\n\nThe password is shown once; credo keeps only its verifier.\n%s",
		st.Username, st.Password, st.SecretName, st.ResourceVersion, warningLines(warned))
	env := fmt.Sprintf("CREDO_USERNAME=%s\nCREDO_PASSWORD=%s\n", shellQuote(st.Username), shellQuote(st.Password))
	return printOnce(w, output, st, human, env)
}

const revokeUsage = `usage: kubectl credo revoke <account> [-n namespace] [--resource-version <version> | --force]

Replace an account's password by the verifier of a value nobody keeps: nobody can log in until the next mint.`

// revoke creates a Revocation.
func revoke(args []string, stdout io.Writer) error {
	cmd := newCommand("revoke", revokeUsage)
	version := bindVersionFlags(cmd.fs, "revoke")
	return cmd.run(args, stdout, oneArg, func(ctx context.Context, c client.Client, ns string) error {
		r := &accessv1.Revocation{}
		if err := (accountRequest{"revocation", "revoking", r, &r.Spec}).post(ctx, c, ns, version, cmd.fs.Arg(0)); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "revoked %s: Secret %s is at resourceVersion %s; nobody can log in until the next mint\n%s",
			cmd.fs.Arg(0), r.Status.SecretName, r.Status.ResourceVersion, warningLines(cmd.cluster().warnings.texts))
		return err
	})
}

// accountRequest is a mint or a revocation as mint and revoke post it.
type accountRequest struct {
	// subresource is the account's subresource posted to: mint, revocation.
	subresource string
	// doing names the request in errors: minting, revoking.
	doing string
	// object is the Mint or Revocation posted, which receives the answer;
	// spec is its spec.
	object client.Object
	spec   *accessv1.AccountRequestSpec
}

// post posts the request to the subresource of account (POST
// .../accounts/<account>/mint: the account is in the URL, so
// kube-apiserver's audit log names it), expecting the account Secret's
// version that version asks for; a 409 is explained.
func (r accountRequest) post(ctx context.Context, c client.Client, ns string, version *versionFlags, account string) error {
	rv, err := version.expected(ctx, c, ns, account)
	if err != nil {
		return err
	}
	*r.spec = accessv1.AccountRequestSpec{Account: account, ResourceVersion: rv}
	if err := c.SubResource(r.subresource).Create(ctx, accountRef(ns, account), r.object); err != nil {
		err = canIHint(err, ns, "create accounts.access.credo.dev --subresource="+r.subresource)
		return version.explain(ctx, c, ns, account, fmt.Errorf("%s %s/%s: %w", r.doing, ns, account, err))
	}
	return nil
}

// canIHint adds to a refusal the kubectl auth can-i check of the right it
// needs: the subresources take --subresource, and "accounts/mint" asks
// about an account named mint.
func canIHint(err error, ns, check string) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	return fmt.Errorf("%w (check the right with: kubectl auth can-i %s -n %s)", err, check, ns)
}

// accountRef is the Account a mint or revocation subresource is posted to.
func accountRef(namespace, name string) *accessv1.Account {
	return &accessv1.Account{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

const getUsage = `usage: kubectl credo get [account] [-n namespace]

Without an account: summarise the namespace (trust anchors, accounts, workloads, join tokens that
can still enroll). With one: its origin, the account Secret's version and the last operation.`

// get summarises a namespace (trust anchors, accounts, workloads, join
// tokens that can still enroll; see summary.go), or shows one account with
// its origin, the account Secret's resourceVersion and the last operation,
// from the access API's account view: it needs no access to the Secrets.
func get(args []string, stdout io.Writer) error {
	cmd := newCommand("get", getUsage)
	return cmd.run(args, stdout, optionalArg, func(ctx context.Context, c client.Client, ns string) error {
		if cmd.fs.NArg() == 0 {
			failed, err := printSummary(stdout, readSummary(ctx, c, ns), time.Now())
			if err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%w: %d section(s) could not be read", errUnreadable, failed)
			}
			return nil
		}
		var a accessv1.Account
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cmd.fs.Arg(0)}, &a); err != nil {
			return fmt.Errorf("reading account %s/%s: %w", ns, cmd.fs.Arg(0), err)
		}
		return printAccounts(stdout, []accessv1.Account{a})
	})
}

func printAccounts(w io.Writer, items []accessv1.Account) error {
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAME\tRELEASE\tUSERNAME\tOWNER\tORIGIN\tSECRET VERSION\tLAST OPERATION")
	for _, a := range items {
		last := "-"
		if n := len(a.Status.History); n > 0 {
			h := a.Status.History[n-1]
			last = fmt.Sprintf("%s by %s at %s", h.Operation, h.By, h.At.UTC().Format(time.RFC3339))
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Spec.Release, a.Spec.Username, a.Spec.Owner,
			orDash(a.Status.Origin), orDash(a.Status.SecretResourceVersion), last)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

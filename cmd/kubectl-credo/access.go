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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

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

// isTerminal tells whether stdout is a terminal; a variable for tests.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

const mintUsage = `usage: kubectl credo mint <account> [-n namespace] [-o json|yaml|env] [--resource-version <version> | --force]

Mint a new password for a tenant account and print it once; credo keeps only its verifier.`

// mint creates a Mint and prints the password once.
func mint(args []string, stdout io.Writer) error {
	cmd := newCommand("mint", mintUsage)
	fs := cmd.fs
	output := fs.StringP("output", "o", "", "json, yaml or env; required when stdout is not a terminal")
	version := bindVersionFlags(fs, "mint")
	cl := cmd.cluster()
	if help, err := cmd.parse(args, stdout); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(mintUsage)
	}
	if *output == "" && !isTerminal(stdout) {
		return errors.New("stdout is not a terminal: pass -o json, yaml or env to print the password into a pipe or a file on purpose")
	}
	c, ns, err := cl.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rv, err := version.expected(ctx, c, ns, fs.Arg(0))
	if err != nil {
		return err
	}
	m := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: fs.Arg(0), ResourceVersion: rv}}
	// POST .../accounts/<account>/mint: the account is in the URL, so
	// kube-apiserver's audit log names it.
	if err := c.SubResource("mint").Create(ctx, accountRef(ns, fs.Arg(0)), m); err != nil {
		err = canIHint(err, ns, "create accounts.access.credo.dev --subresource=mint")
		return version.explain(ctx, c, ns, fs.Arg(0), fmt.Errorf("minting %s/%s: %w", ns, fs.Arg(0), err))
	}
	return printMint(stdout, *output, m, cl.warnings.texts)
}

// printMint prints the minted password in the output asked for; the
// server's warnings (already on stderr) close the human output.
func printMint(w io.Writer, output string, m *accessv1.Mint, warned []string) error {
	switch output {
	case "":
		_, err := fmt.Fprintf(w, "username: %s\npassword: %s\nsecret:   %s (resourceVersion %s)\n\nThe password is shown once; credo keeps only its verifier.\n%s",
			m.Status.Username, m.Status.Password, m.Status.SecretName, m.Status.ResourceVersion, warningLines(warned))
		return err
	case "json":
		b, err := json.MarshalIndent(m.Status, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(m.Status)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "env":
		_, err := fmt.Fprintf(w, "CREDO_USERNAME=%s\nCREDO_PASSWORD=%s\n", shellQuote(m.Status.Username), shellQuote(m.Status.Password))
		return err
	default:
		return fmt.Errorf("unknown output %q: json, yaml or env", output)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

const revokeUsage = `usage: kubectl credo revoke <account> [-n namespace] [--resource-version <version> | --force]

Replace an account's password by the verifier of a value nobody keeps: nobody can log in until the next mint.`

// revoke creates a Revocation.
func revoke(args []string, stdout io.Writer) error {
	cmd := newCommand("revoke", revokeUsage)
	fs := cmd.fs
	version := bindVersionFlags(fs, "revoke")
	cl := cmd.cluster()
	if help, err := cmd.parse(args, stdout); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(revokeUsage)
	}
	c, ns, err := cl.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rv, err := version.expected(ctx, c, ns, fs.Arg(0))
	if err != nil {
		return err
	}
	r := &accessv1.Revocation{Spec: accessv1.AccountRequestSpec{Account: fs.Arg(0), ResourceVersion: rv}}
	if err := c.SubResource("revocation").Create(ctx, accountRef(ns, fs.Arg(0)), r); err != nil {
		err = canIHint(err, ns, "create accounts.access.credo.dev --subresource=revocation")
		return version.explain(ctx, c, ns, fs.Arg(0), fmt.Errorf("revoking %s/%s: %w", ns, fs.Arg(0), err))
	}
	_, err = fmt.Fprintf(stdout, "revoked %s: Secret %s is at resourceVersion %s; nobody can log in until the next mint\n%s",
		fs.Arg(0), r.Status.SecretName, r.Status.ResourceVersion, warningLines(cl.warnings.texts))
	return err
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
	fs := cmd.fs
	cl := cmd.cluster()
	if help, err := cmd.parse(args, stdout); help || err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return errors.New(getUsage)
	}
	c, ns, err := cl.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if fs.NArg() == 0 {
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
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fs.Arg(0)}, &a); err != nil {
		return fmt.Errorf("reading account %s/%s: %w", ns, fs.Arg(0), err)
	}
	return printAccounts(stdout, []accessv1.Account{a})
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

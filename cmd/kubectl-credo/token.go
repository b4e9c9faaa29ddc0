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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

const tokenUsage = `usage:
  kubectl credo token create <policy> [-n namespace] [--lifetime 24h] [--description text] [-o json|yaml|env]
  kubectl credo token revoke <id> [-n namespace]
  kubectl credo token list [-n namespace] [--policy name]

kubectl credo token <command> --help shows a command's flags.`

const (
	tokenCreateUsage = `usage: kubectl credo token create <policy> [-n namespace] [--lifetime 24h] [--description text] [-o json|yaml|env]

Mint a join token of an EnrollmentPolicy and print it once; credo keeps only a hash of it.`
	tokenRevokeUsage = `usage: kubectl credo token revoke <id> [-n namespace]

Revoke a join token: it enrolls nothing further; workloads it enrolled keep renewing.`
	tokenListUsage = `usage: kubectl credo token list [-n namespace] [--policy name]

List the join tokens of a namespace with their state and uses.`
)

// token dispatches the join token commands.
func token(args []string, stdout io.Writer) error {
	return subcommands("token", tokenUsage, args, stdout, map[string]verb{
		"create": tokenCreate, "revoke": tokenRevoke, "list": tokenList,
	})
}

// tokenCreate creates a JoinTokenRequest and prints the token once.
func tokenCreate(args []string, stdout io.Writer) error {
	cmd := newCommand("token create", tokenCreateUsage)
	lifetime := cmd.fs.Duration("lifetime", 0, "the token's lifetime, positive; at most, and by default, the policy's tokenLifetime")
	cmd.check(func() error {
		if cmd.fs.Changed("lifetime") && *lifetime <= 0 {
			return fmt.Errorf("--lifetime %s is not positive: give a positive duration such as 1h, or omit --lifetime for the policy's tokenLifetime", *lifetime)
		}
		return nil
	})
	output := bindOutput(cmd, stdout, "token")
	description := cmd.fs.String("description", "", "recorded in the JoinToken")
	return cmd.run(args, stdout, oneArg, func(ctx context.Context, c client.Client, ns string) error {
		req := &accessv1.JoinTokenRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "token-"},
			Spec:       accessv1.JoinTokenRequestSpec{Policy: cmd.fs.Arg(0), Description: *description},
		}
		if cmd.fs.Changed("lifetime") {
			req.Spec.Lifetime = &metav1.Duration{Duration: *lifetime}
		}
		if err := c.Create(ctx, req); err != nil {
			err = canIHint(err, ns, "create jointokenrequests.access.credo.dev")
			return fmt.Errorf("creating a join token of policy %s/%s: %w", ns, cmd.fs.Arg(0), err)
		}
		if req.Namespace == "" {
			req.Namespace = ns
		}
		return printToken(stdout, *output, req)
	})
}

// printToken prints the token in the output asked for.
func printToken(w io.Writer, output string, req *accessv1.JoinTokenRequest) error {
	st := req.Status
	human := fmt.Sprintf("token:   %s\nid:      %s\nexpires: %s\n\nThe token is shown once; credo keeps only a hash of it. Revoke it with: kubectl credo token revoke %s -n %s\n",
		st.Token, st.ID, st.ExpiresAt.UTC().Format(time.RFC3339), st.ID, req.Namespace)
	env := fmt.Sprintf("CREDO_JOIN_TOKEN=%s\nCREDO_JOIN_TOKEN_ID=%s\n", shellQuote(st.Token), shellQuote(st.ID))
	return printOnce(w, output, st, human, env)
}

// tokenRevoke sets spec.revoked on a JoinToken: it enrolls nothing further.
func tokenRevoke(args []string, stdout io.Writer) error {
	cmd := newCommand("token revoke", tokenRevokeUsage)
	return cmd.run(args, stdout, oneArg, func(ctx context.Context, c client.Client, ns string) error {
		jt := &enrollv1.JoinToken{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cmd.fs.Arg(0)}}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"revoked":true}}`))
		if err := c.Patch(ctx, jt, patch); err != nil {
			return fmt.Errorf("revoking join token %s/%s: %w", ns, cmd.fs.Arg(0), err)
		}
		_, err := fmt.Fprintf(stdout, "join token %s/%s revoked: it enrolls nothing further; workloads it enrolled keep renewing\n", ns, jt.Name)
		return err
	})
}

// tokenList prints the namespace's join tokens and their uses.
func tokenList(args []string, stdout io.Writer) error {
	cmd := newCommand("token list", tokenListUsage)
	policy := cmd.fs.String("policy", "", "only the tokens of this EnrollmentPolicy")
	return cmd.run(args, stdout, noArg, func(ctx context.Context, c client.Client, ns string) error {
		var list enrollv1.JoinTokenList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("listing join tokens in %s: %w", ns, err)
		}
		return printTokens(stdout, list.Items, *policy, time.Now())
	})
}

func printTokens(w io.Writer, items []enrollv1.JoinToken, policy string, now time.Time) error {
	sort.Slice(items, func(i, j int) bool { return items[i].Spec.ExpiresAt.Before(&items[j].Spec.ExpiresAt) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "ID\tPOLICY\tSTATE\tEXPIRES\tUSES\tLAST USED\tLAST WORKLOAD")
	for _, jt := range items {
		if policy != "" && jt.Spec.Policy != policy {
			continue
		}
		state := "Active"
		switch {
		case jt.Spec.Revoked:
			state = "Revoked"
		case !jt.UsableAt(now, 0):
			state = "Expired"
		}
		last := "-"
		if jt.Status.LastUsedAt != nil {
			last = jt.Status.LastUsedAt.UTC().Format(time.RFC3339)
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", jt.Name, jt.Spec.Policy, state,
			jt.Spec.ExpiresAt.UTC().Format(time.RFC3339), jt.Status.Uses, last, orDash(jt.Status.LastWorkload))
	}
	return tw.Flush()
}

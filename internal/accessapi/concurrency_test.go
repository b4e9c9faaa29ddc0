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

package accessapi_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

const concurrentMints = 50

type outcome struct {
	password string
	rv       string
	err      error
}

func mintConcurrently(c func(int) (string, string, error)) []outcome {
	out := make([]outcome, concurrentMints)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range out {
		wg.Go(func() {
			<-start
			p, rv, err := c(i)
			out[i] = outcome{password: p, rv: rv, err: err}
		})
	}
	close(start)
	wg.Wait()
	return out
}

func TestConcurrentMintsWithTheSameExpectedVersionHaveOneWinner(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	c, _ := newMinter(t, ns)

	out := mintConcurrently(func(int) (string, string, error) {
		m, err := mint(ctx, c, ns, "db", s.ResourceVersion)
		return m.Status.Password, m.Status.ResourceVersion, err
	})
	var won, conflicts int
	var winner outcome
	for _, o := range out {
		switch {
		case o.err == nil:
			won++
			winner = o
		case apierrors.IsConflict(o.err):
			conflicts++
		default:
			t.Errorf("unexpected error: %v", o.err)
		}
	}
	g.Expect(won).To(Equal(1), "exactly one mint wins")
	g.Expect(conflicts).To(Equal(concurrentMints - 1))
	stored := secretOf(g, ns, s.Name)
	g.Expect(stored.ResourceVersion).To(Equal(winner.rv))
	g.Expect(matches(verifier.SHA256Hex, string(stored.Data["password"]), winner.password)).To(BeTrue(),
		"the stored verifier is the winner's (values not printed)")
}

func TestConcurrentMintsWithoutVersionStoreTheLastOne(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	c, _ := newMinter(t, ns)

	out := mintConcurrently(func(int) (string, string, error) {
		m, err := mint(ctx, c, ns, "db", "")
		return m.Status.Password, m.Status.ResourceVersion, err
	})
	stored := secretOf(g, ns, s.Name)
	var successes, matching int
	var latest int64
	var latestMatches bool
	for _, o := range out {
		if o.err != nil {
			g.Expect(apierrors.IsConflict(o.err)).To(BeTrue(), "a losing mint gets 409: %v", o.err)
			g.Expect(o.password).To(BeEmpty(), "a failed mint returns no password")
			continue
		}
		successes++
		g.Expect(len(o.password)).To(BeNumerically(">=", 32), "every success returned a password")
		rv, err := strconv.ParseInt(o.rv, 10, 64)
		g.Expect(err).NotTo(HaveOccurred())
		m := matches(verifier.SHA256Hex, string(stored.Data["password"]), o.password)
		if m {
			matching++
		}
		if rv > latest {
			latest, latestMatches = rv, m
		}
	}
	t.Logf("%d of %d concurrent mints succeeded", successes, concurrentMints)
	g.Expect(successes).To(BeNumerically(">=", 1))
	g.Expect(matching).To(Equal(1), "the stored verifier matches exactly one returned password")
	g.Expect(latestMatches).To(BeTrue(), "and it is the one with the highest resourceVersion")
	g.Expect(strconv.FormatInt(latest, 10)).To(Equal(stored.ResourceVersion))
}

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Verb      string                    `json:"verb"`
	User      struct{ Username string } `json:"user"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Name        string `json:"name"`
		Namespace   string `json:"namespace"`
	} `json:"objectRef"`
	ResponseStatus *struct{ Code int } `json:"responseStatus"`
}

// The audit log names every call: user and resource always; the account
// (objectRef.name) and the operation (objectRef.subresource) for the
// subresource form. It holds no password at RequestResponse level.
func TestAuditLogNamesTheCallsAndHoldsNoPassword(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	newAccount(t, ns, "db", "app", verifier.SCRAMSHA256, credv1.OwnerTenant)
	newAccount(t, ns, "cache", "app", verifier.Plain, credv1.OwnerTenant)
	c, user := newMinter(t, ns)
	var passwords []string
	for range 3 {
		m, err := mint(ctx, c, ns, "db", "")
		g.Expect(err).NotTo(HaveOccurred())
		passwords = append(passwords, m.Status.Password)
	}
	_, err := revoke(ctx, c, ns, "db")
	g.Expect(err).NotTo(HaveOccurred())
	// The subresource form, on two accounts (one of them plaintext).
	for _, acct := range []string{"db", "db", "cache"} {
		m, err := mintAccount(ctx, c, ns, acct, "", "")
		g.Expect(err).NotTo(HaveOccurred())
		passwords = append(passwords, m.Status.Password)
	}
	_, err = revokeAccount(ctx, c, ns, "cache")
	g.Expect(err).NotTo(HaveOccurred())

	count := func() map[string]int {
		n := map[string]int{}
		for _, e := range auditEvents(g) {
			if e.ObjectRef.APIGroup == "access.credo.dev" && e.ObjectRef.Namespace == ns &&
				e.User.Username == user && e.Verb == "create" && e.ResponseStatus.Code == 201 {
				// resource[/subresource] name: the name is empty for a collection create.
				key := e.ObjectRef.Resource
				if e.ObjectRef.Subresource != "" {
					key += "/" + e.ObjectRef.Subresource
				}
				n[strings.TrimSpace(key+" "+e.ObjectRef.Name)]++
			}
		}
		return n
	}
	g.Eventually(count, "10s", "100ms").Should(Equal(map[string]int{
		"mints":                     3,
		"revocations":               1,
		"accounts/mint db":          2,
		"accounts/mint cache":       1,
		"accounts/revocation cache": 1,
	}))

	raw, err := os.ReadFile(env.AuditLogPath)
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range passwords {
		g.Expect(strings.Contains(string(raw), p)).To(BeFalse(), "the audit log holds no password (value not printed)")
		g.Expect(strings.Contains(env.Logs.String(), p)).To(BeFalse(), "the logs hold no password (value not printed)")
	}
}

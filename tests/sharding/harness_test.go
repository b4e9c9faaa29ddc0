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

// Package sharding runs two shards of every credo controller, as the real
// binaries, against the local control plane, and reads kube-apiserver's
// audit log to prove that no object is written by both.
package sharding

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/tests/controlplane"
)

// auditPolicy logs every write: the requests on credo's own kinds in full
// (their bodies hold no secret), every other write, Secrets included, as
// metadata only; reads are not logged.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: Request
  resources:
  - group: trust.credo.dev
    resources: ["trustanchors", "trustanchors/status"]
  - group: credentials.credo.dev
    resources: ["credentialaccounts", "credentialaccounts/status", "accountsources/status"]
  - group: enrollment.credo.dev
    resources: ["enrollmentpolicies/status", "workloads", "workloads/status"]
- level: Metadata
`

// controllers are the binaries each shard runs.
var controllers = []string{"trust-controller", "credential-controller", "enrollment-controller"}

// buildControllers builds the controller binaries of this tree.
func buildControllers(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"build", "-o", dir + "/"}
	for _, c := range controllers {
		args = append(args, "./cmd/"+c)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = controlplane.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// grantShardRBAC binds the ClusterRole config/rbac ships to one user per
// shard and returns each user's kubeconfig: the audit log tells the shards
// apart by user, and the shards run with the RBAC they are installed with.
func grantShardRBAC(ctx context.Context, t *testing.T, env *controlplane.Environment, shards ...string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &role); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range shards {
		binding := &rbacv1.ClusterRoleBinding{
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: s}},
		}
		binding.Name = "credo-manager-" + s
		if err := env.Client.Create(ctx, binding); err != nil {
			t.Fatal(err)
		}
		if out[s], err = env.WriteKubeconfig(s, nil, s+".kubeconfig"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// startShard runs the three controllers of one shard, as user shardName,
// with --watch-label-selector=sharding.fluxcd.io/key=<shardName>, and
// waits until each is ready.
func startShard(ctx context.Context, t *testing.T, env *controlplane.Environment, bin, shardName, kubeconfig string) {
	t.Helper()
	for _, c := range controllers {
		health := freeAddr(t)
		args := []string{
			"--metrics-addr=0", "--health-addr=" + health, "--log-level=debug",
			"--watch-label-selector=" + shard.Key + "=" + shardName,
		}
		switch c {
		case "credential-controller":
			args = append(args, "--access-api-secure-port=0", "--platform-namespace="+platformNamespace)
		case "enrollment-controller":
			args = append(args, "--namespace="+platformNamespace, "--enrollment-addr="+freeAddr(t),
				"--pending-workload-timeout="+pendingTimeout.String())
		}
		p, err := env.StartProcess(c+"-"+shardName, filepath.Join(bin, c), []string{"KUBECONFIG=" + kubeconfig}, args...)
		if err != nil {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
			if err := p.FailIfExited(); err != nil {
				return false, err
			}
			resp, err := http.Get("http://" + health + "/readyz") //nolint:gosec // loopback probe of our own process
			if err != nil {
				return false, nil
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("%s of %s not ready (log %s): %v", c, shardName, p.LogPath(), err)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// write is one write request of the audit log.
type write struct {
	User, Verb                                    string
	Group, Resource, Subresource, Namespace, Name string
	Code                                          int
	// Body is the request body, logged for credo's own kinds only.
	Body json.RawMessage
}

func (w write) String() string {
	res := w.Resource
	if w.Subresource != "" {
		res += "/" + w.Subresource
	}
	return fmt.Sprintf("%s %s %s %s/%s (%d)", w.User, w.Verb, res, w.Namespace, w.Name, w.Code)
}

// labelsOnly reports whether the write is a patch of metadata.labels alone:
// a hand-over to another shard.
func (w write) labelsOnly() bool {
	if w.Verb != "patch" || w.Subresource != "" {
		return false
	}
	var body map[string]map[string]json.RawMessage
	if err := json.Unmarshal(w.Body, &body); err != nil || len(body) != 1 {
		return false
	}
	md, ok := body["metadata"]
	return ok && len(md) == 1 && md["labels"] != nil
}

// auditWrites returns the writes the given users made, from line from on,
// and the number of lines read.
func auditWrites(t *testing.T, path string, from int, users ...string) ([]write, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wanted := map[string]bool{}
	for _, u := range users {
		wanted[u] = true
	}
	var out []write
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		if n <= from {
			continue
		}
		var ev struct {
			Stage     string                    `json:"stage"`
			Verb      string                    `json:"verb"`
			User      struct{ Username string } `json:"user"`
			ObjectRef *struct {
				APIGroup, Resource, Subresource, Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus *struct{ Code int } `json:"responseStatus"`
			RequestObject  json.RawMessage     `json:"requestObject"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %d: %v", n, err)
		}
		if ev.Stage != "ResponseComplete" || !wanted[ev.User.Username] || ev.ObjectRef == nil {
			continue
		}
		switch ev.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
		default:
			continue
		}
		w := write{User: ev.User.Username, Verb: ev.Verb, Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name, Body: ev.RequestObject}
		if ev.ResponseStatus != nil {
			w.Code = ev.ResponseStatus.Code
		}
		out = append(out, w)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, n
}

// unitOf is the test unit an object belongs to: its name up to the first
// '-' or '.' (one, one-app, one.tenant-ca, one.app.account, one-wl-1).
func unitOf(name string) string {
	if i := strings.IndexAny(name, "-."); i >= 0 {
		return name[:i]
	}
	return name
}

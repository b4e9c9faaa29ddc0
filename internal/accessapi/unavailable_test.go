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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/verifier"
)

// A replica whose pod was deleted without a grace period (kubectl delete
// --force) serves on for the kubelet's two seconds of grace over the
// connections kube-apiserver holds open, while its ServiceAccount token,
// bound to the pod, is refused. The two tests below give a replica such a
// token, as the real kube-apiserver issues and then refuses it: the
// operations' client built by NewClient and the server by New, as
// cmd/credential-controller builds them.

// replica is a ServiceAccount allowed everything, its pod, and a token
// bound to the pod.
type replica struct {
	pod   *corev1.Pod
	token string
	cfg   *rest.Config
}

func newReplica(t *testing.T, ns string) *replica {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "replica", Namespace: ns}}
	g.Expect(platform.Create(ctx, sa)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	g.Expect(platform.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = platform.Delete(context.Background(), binding) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "replica", Namespace: ns},
		Spec: corev1.PodSpec{
			ServiceAccountName: sa.Name,
			Containers:         []corev1.Container{{Name: "manager", Image: "ghcr.io/credo-dev/credo:latest"}},
		},
	}
	g.Expect(platform.Create(ctx, pod)).To(Succeed())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	g.Expect(platform.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = tr.Status.Token
	return &replica{pod: pod, token: tr.Status.Token, cfg: cfg}
}

// forceDelete deletes the replica's pod with no grace period, as kubectl
// delete --force does.
func (r *replica) forceDelete(g Gomega) {
	g.Expect(platform.Delete(context.Background(), r.pod, client.GracePeriodSeconds(0))).To(Succeed())
}

// An operation's read of kube-apiserver refused: 503 with Retry-After,
// nothing written. The account is read from the cache, as the server
// does, so the refused read is the account Secret's.
func TestAnOperationOfAReplicaWhosePodIsGoneAnswersRetryLater(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	before := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	r := newReplica(t, ns)
	c, err := accessapi.NewClient(r.cfg, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	cache := env.Setup.Manager.GetCache()
	ops := &accessapi.Operations{Client: c, AccountReader: cache, NamespaceAccounts: cache, Keys: keys}
	spec := accessv1.AccountRequestSpec{Account: "db"}

	g.Eventually(func() error {
		_, err := ops.Mint(ctx, ns, spec, "minter")
		return err
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "the replica mints while its pod exists")

	// kube-apiserver may accept the token a moment longer, and mint: the
	// Secret is read before each try, to be compared with after the 503.
	r.forceDelete(g)
	var status apierrors.APIStatus
	var last error
	var tried *corev1.Secret
	g.Eventually(func() bool {
		tried = secretOf(g, ns, before.Name)
		_, last = ops.Mint(ctx, ns, spec, "minter")
		return errors.As(last, &status) && apierrors.IsServiceUnavailable(last)
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), func() string {
		return fmt.Sprintf("once its pod is gone the replica answers 503; the last answer: %v", last)
	})
	s := status.Status()
	g.Expect(s.Details).NotTo(BeNil())
	g.Expect(s.Details.RetryAfterSeconds).To(BeEquivalentTo(1), "with Retry-After, so that client-go sends it again")
	g.Expect(s.Message).To(ContainSubstring("reading Secret " + before.Name))
	g.Expect(strings.Contains(s.Message, r.token)).To(BeFalse(), "the token is never in the answer")
	after := secretOf(g, ns, before.Name)
	g.Expect(bytes.Equal(after.Data["password"], tried.Data["password"])).To(BeTrue(), "no password was written (values not printed)")
	g.Expect(after.Annotations[keys.History]).To(Equal(tried.Annotations[keys.History]), "no mint was recorded")

	// Credentials kube-apiserver accepts and RBAC does not: a fault of the
	// install that no retry mends, still answered 500.
	cfg, err := env.UserConfig("replica-without-rbac", nil)
	g.Expect(err).NotTo(HaveOccurred())
	c, err = accessapi.NewClient(cfg, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = (&accessapi.Operations{Client: c, AccountReader: cache, NamespaceAccounts: cache, Keys: keys}).Mint(ctx, ns, spec, "minter")
	g.Expect(apierrors.IsInternalError(err)).To(BeTrue(), "a Forbidden read is a 500: %v", err)
}

// The server's authorization refused: a request whose decision the
// delegated authorizer has not cached asks kube-apiserver (a
// SubjectAccessReview) with the replica's token; once that is refused, the
// answer on the wire is 503 with a Retry-After header and a Status, not the
// generic chain's 500. The requests reach the server as kube-apiserver
// sends them: its front-proxy certificate and the user in X-Remote-User.
func TestTheServerOfAReplicaWhosePodIsGoneAnswersRetryLater(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	r := newReplica(t, ns)
	kubeconfig := filepath.Join(t.TempDir(), "replica.kubeconfig")
	g.Expect(clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"env": {Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"replica": {Token: r.token}},
		Contexts:       map[string]*clientcmdapi.Context{"replica": {Cluster: "env", AuthInfo: "replica"}},
		CurrentContext: "replica",
	}, kubeconfig)).To(Succeed())
	c, err := accessapi.NewClient(r.cfg, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	opts := accessapi.NewOptions()
	opts.Listener = ln
	opts.Kubeconfig = kubeconfig
	opts.CertDir = t.TempDir()
	opts.ShutdownDelay = 0
	srv, err := accessapi.New(opts, &accessapi.Operations{Client: c, Keys: keys})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the replica's server: %v", err)
		}
	})

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.CABundle())
	frontProxy, err := tls.LoadX509KeyPair(filepath.Join(env.Dir, "front-proxy-client.crt"), filepath.Join(env.Dir, "front-proxy-client.key"))
	g.Expect(err).NotTo(HaveOccurred())
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{frontProxy}, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
	users := 0
	// mint POSTs a Mint as a user the authorizer has not seen, so that its
	// decision is asked of kube-apiserver.
	mint := func() (int, http.Header, []byte, error) {
		users++
		body, _ := json.Marshal(&accessv1.Mint{
			TypeMeta: metav1.TypeMeta{APIVersion: accessv1.GroupVersion.String(), Kind: "Mint"},
			Spec:     accessv1.AccountRequestSpec{Account: "db"},
		})
		req, _ := http.NewRequest(http.MethodPost, "https://"+ln.Addr().String()+"/apis/access.credo.dev/v1alpha1/namespaces/"+ns+"/mints", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("X-Remote-User", fmt.Sprintf("tenant-%d", users))
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b, err
	}

	// While its pod exists, the authorizer asks and is answered: the user
	// may not mint, 403.
	g.Eventually(func() int {
		code, _, _, _ := mint()
		return code
	}, time.Minute, 200*time.Millisecond).Should(Equal(http.StatusForbidden), "the replica's authorizer is answered while its pod exists")

	r.forceDelete(g)
	var header http.Header
	var body []byte
	g.Eventually(func() int {
		var code int
		code, header, body, err = mint()
		return code
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(http.StatusServiceUnavailable), func() string {
		return fmt.Sprintf("once its pod is gone the replica answers 503; the last answer: %s", body)
	})
	g.Expect(header.Get("Retry-After")).To(Equal("1"), "with Retry-After, so that client-go sends it again")
	var status metav1.Status
	g.Expect(json.Unmarshal(body, &status)).To(Succeed(), "a Status, not the chain's plain text: %s", body)
	g.Expect(status.Reason).To(Equal(metav1.StatusReasonServiceUnavailable))
	g.Expect(status.Message).To(ContainSubstring("when asking whether the request is allowed"))
	g.Expect(strings.Contains(string(body), r.token)).To(BeFalse(), "the token is never in the answer")
}

// Only kube-apiserver's own refusal of the replica's credentials counts:
// its 401 "Unauthorized", wrapped or among the union authorizer's errors;
// not a 401 an admission webhook denies with, nor any other failure.
func TestOnlyKubeAPIServersRefusalOfTheReplicasCredentialsCounts(t *testing.T) {
	refused := apierrors.NewUnauthorized("Unauthorized")
	webhook := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnauthorized,
		Reason: metav1.StatusReasonUnauthorized, Message: `admission webhook "policy.example.com" denied the request: not you`}}
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"kube-apiserver's 401":                  {refused, true},
		"wrapped by the operation":              {fmt.Errorf("reading Secret db.app.account: %w", refused), true},
		"among the union authorizer's errors":   {utilerrors.NewAggregate([]error{errors.New("no opinion"), refused}), true},
		"a webhook's 401":                       {webhook, false},
		"a 401 with another message":            {apierrors.NewUnauthorized("the token has expired"), false},
		"forbidden by RBAC":                     {apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "db", errors.New("no")), false},
		"an internal error":                     {apierrors.NewInternalError(errors.New("etcd")), false},
		"not an API error":                      {errors.New("connection refused"), false},
		"the union authorizer's other failures": {utilerrors.NewAggregate([]error{errors.New("timeout")}), false},
		"none":                                  {nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(accessapi.CredentialsRefused(c.err)).To(Equal(c.want))
		})
	}
}

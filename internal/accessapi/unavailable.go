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

package accessapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// retryAfterSeconds is the Retry-After of a 503 answered because
// kube-apiserver refused this replica's credentials.
const retryAfterSeconds = 1

// A replica whose credentials kube-apiserver refuses is, as a rule, on its
// way out: its pod was deleted without a grace period (kubectl delete
// --force), which revokes the pod's ServiceAccount token (within the ten
// seconds kube-apiserver remembers a token it has accepted), while the
// process serves on for the kubelet's two seconds of grace over the
// connections kube-apiserver holds open to it. What it cannot do for a
// request, it answers 503 with Retry-After, having written nothing:
// client-go, and so kubectl, send the request again on their own, and the
// next try reaches a live replica once this one's connection closes. (A
// refusal that lasts, its ServiceAccount deleted, is answered so too, every
// time: the replica's reconcilers and informers log it.) Two places meet
// the refusal: an operation's read or write (internalError), and the
// delegated authorizer's SubjectAccessReview for a request whose decision
// it has not cached (answerRefusedCredentials).

// credentialsRefused reports whether err is kube-apiserver refusing this
// replica's credentials: the 401 its authentication answers ("Unauthorized"),
// and not a 401 an admission webhook chose to deny with, which carries the
// webhook's own message.
func credentialsRefused(err error) bool {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if credentialsRefused(e) {
				return true
			}
		}
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Code == http.StatusUnauthorized && s.Reason == metav1.StatusReasonUnauthorized && s.Message == "Unauthorized"
}

// retryLater is the 503 answered when kube-apiserver refused this
// replica's credentials while doing what.
func retryLater(what string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusServiceUnavailable,
		Reason: metav1.StatusReasonServiceUnavailable,
		Message: fmt.Sprintf("kube-apiserver refused this replica's credentials %s, as when its pod is deleted; "+
			"nothing was written, send the request again", what),
		Details: &metav1.StatusDetails{RetryAfterSeconds: retryAfterSeconds},
	}}
}

// internalError is the answer to a request that failed on a read or write
// of kube-apiserver, or on a step of the operation itself: a 500, or the
// 503 of retryLater when kube-apiserver refused this replica's credentials.
// Nothing was written then: each operation writes once, last.
func internalError(err error) error {
	if credentialsRefused(err) {
		return retryLater(fmt.Sprintf("(%v)", err))
	}
	return apierrors.NewInternalError(err)
}

// answerRefusedCredentials has a request answered with retryLater's 503,
// not the generic chain's 500, when the authorizer could not decide it
// because kube-apiserver refused this replica's credentials: the
// authorizer marks the request, and the chain's 500 for it is replaced.
// The replacement is made outside the chain, so the replica's own request
// log and metrics still count a 500; kube-apiserver's audit log, this
// API's only one, records the 503.
func answerRefusedCredentials(config *genericapiserver.Config) {
	config.Authorization.Authorizer = refusalMarking{config.Authorization.Authorizer}
	build := config.BuildHandlerChainFunc
	config.BuildHandlerChainFunc = func(handler http.Handler, c *genericapiserver.Config) http.Handler {
		chain := build(handler, c)
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			g := &refusalAnswer{ResponseWriter: w, req: req, serializer: c.Serializer}
			chain.ServeHTTP(responsewriter.WrapForHTTP1Or2(g), req.WithContext(context.WithValue(req.Context(), refusalKey{}, &g.refused)))
		})
	}
}

type refusalKey struct{}

// refusalMarking marks the request (its context's refusalKey) when the
// authorizer did not allow it because kube-apiserver refused this
// replica's credentials. ConditionsAwareAuthorize and EvaluateConditions
// are the wrapped authorizer's own, unchanged: the generic chain calls
// Authorize (TestTheServerOfAReplicaWhosePodIsGoneAnswersRetryLater fails
// should it call the others).
type refusalMarking struct{ authorizer.Authorizer }

func (a refusalMarking) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	decision, reason, err := a.Authorizer.Authorize(ctx, attrs)
	if decision != authorizer.DecisionAllow && err != nil && credentialsRefused(err) {
		if refused, ok := ctx.Value(refusalKey{}).(*atomic.Bool); ok {
			refused.Store(true)
		}
	}
	return decision, reason, err
}

// refusalAnswer writes retryLater's 503 in place of the 500 the chain
// answers for a request refusalMarking marked, and drops the 500's body.
type refusalAnswer struct {
	http.ResponseWriter
	req        *http.Request
	serializer runtime.NegotiatedSerializer
	refused    atomic.Bool
	answered   bool
}

func (r *refusalAnswer) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *refusalAnswer) WriteHeader(code int) {
	if r.answered {
		return
	}
	if code == http.StatusInternalServerError && r.refused.Load() {
		r.answered = true
		responsewriters.ErrorNegotiated(retryLater("when asking whether the request is allowed"), r.serializer, schema.GroupVersion{}, r.ResponseWriter, r.req)
		return
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *refusalAnswer) Write(b []byte) (int, error) {
	if r.answered {
		return len(b), nil
	}
	return r.ResponseWriter.Write(b)
}

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

// Package enrollment is the enrollment server: the checks of join tokens
// (internal/jointoken) and of certificate requests, and the HTTPS handlers
// agents call (the wire protocol is pkg/enrollapi). It signs through a
// ca.CertificateAuthority and never knows which one.
package enrollment

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/fluxcd/pkg/runtime/events"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/lookupauthz"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

const (
	// maxBodyBytes bounds a request body.
	maxBodyBytes = 64 << 10
	// DefaultMaxBackdate bounds how far before now a certificate's notBefore
	// is set, for agents whose clock is behind.
	DefaultMaxBackdate = 5 * time.Minute
	eventAction        = "Enroll"
)

// Server answers agents. It runs on every replica: reads come from the
// manager's cache (indexed by name) and every write is conditional, so
// replicas never race to a wrong result. Build it with New.
type Server struct {
	// Reader is the cached reader, with IndexFields registered.
	Reader client.Reader
	// APIReader reads uncached, from the API server: what the cache may
	// not hold yet, and what a conditional write depends on.
	APIReader client.Reader
	// Client writes.
	Client client.Client
	// CA signs; the server never knows which implementation it is.
	CA ca.CertificateAuthority
	// Form is how the install writes workload URIs: every certificate
	// request must name Form.URI(uuid).
	Form enrollapi.IdentityForm
	// Recorder emits events on Workloads and JoinTokens; may be nil.
	Recorder events.Recorder
	// Limiter limits failed token attempts per client address and token
	// id; may be nil.
	Limiter *FailureLimiter
	// Limits bound what a policy may ask for and the pending registrations
	// of a token.
	Limits Limits
	// MaxBackdate bounds notBefore backdating; DefaultMaxBackdate when zero.
	MaxBackdate time.Duration
	// RetryWindow is how long a certificate's request, sent again, is
	// answered with it; no retry is accepted when zero.
	RetryWindow time.Duration
	// Reviews decide who may look up a workload; no lookup is answered
	// when nil.
	Reviews *lookupauthz.Reviewer
	// LookupMaxAge is how long a lookup's answer may be used.
	LookupMaxAge time.Duration
	// Now returns the time; time.Now when nil.
	Now func() time.Time
	// Log never receives a token, CSR or certificate.
	Log logr.Logger

	// refusals bounds the log lines of refused unauthenticated attempts.
	refusals *sampledLog
	// unknown are token ids recently looked up and not found; may be nil.
	unknown *unknownTokens
	// lookups budgets the uncached token lookups of all callers; may be nil.
	lookups *lookupBudget
	// pendingLocks serialize the counting of one token's registrations.
	pendingLocks keyedLocks
	// recent are the registrations the cache may not show yet.
	recent registrations
	// uses are the join tokens' enrollments not written yet.
	uses tokenUses
	// useFlush is how often uses are written.
	useFlush time.Duration
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Handler returns the HTTP handler of the wire protocol.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+enrollapi.PathWorkloads, s.handleEnroll)
	mux.HandleFunc("POST "+enrollapi.PathWorkloads+"/{uuid}/certificate", s.handleCertificate)
	mux.HandleFunc("POST "+enrollapi.PathWorkloads+"/{uuid}/renewal", s.handleRenewal)
	mux.HandleFunc("GET "+enrollapi.PathBundle, s.handleBundle)
	mux.HandleFunc("GET "+enrollapi.PathIdentity, s.handleIdentity)
	mux.HandleFunc("POST "+enrollapi.PathLookup, s.handleLookup)
	return mux
}

// TLSConfig returns the listener's TLS configuration: the server is
// authenticated by getCertificate; a client certificate is requested but
// verified by the renewal handler itself, because an expired certificate
// within the grace may still renew.
func TLSConfig(getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: getCertificate,
		ClientAuth:     tls.RequestClientCert,
	}
}

// Serve listens on addr with TLS until ctx is done.
func (s *Server) Serve(ctx context.Context, addr string, tlsConfig *tls.Config) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return s.ServeListener(ctx, tls.NewListener(ln, tlsConfig))
}

// ServeListener serves on ln, a TLS listener, until ctx is done. Meanwhile
// it writes the join tokens' use counts every Options.TokenUseFlush, and
// once more after the last request was answered.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          nil,
	}
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flusher := make(chan struct{})
	go func() {
		defer close(flusher)
		s.runUseFlusher(flushCtx, s.useFlush)
	}()
	shutdownDone := make(chan struct{})
	go func() {
		defer close(shutdownDone)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		// Serve returns at once; Shutdown waits for the requests in flight.
		<-shutdownDone
		err = nil
	}
	stopFlush()
	<-flusher
	last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s.flushUses(last)
	return err
}

// apiError is an answer other than success: an HTTP status, a stable reason
// and a message safe to show (no token, key or certificate in it).
type apiError struct {
	status int
	reason string
	msg    string
	// retryAfter is the Retry-After of a 429, in seconds; none when zero.
	retryAfter int
	// uri is the workload URI an IdentityChanged refusal names.
	uri string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, reason: enrollapi.ReasonBadRequest, msg: fmt.Sprintf(format, args...)}
}

func unavailable(what string, err error) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, reason: enrollapi.ReasonSigningUnavailable,
		msg: fmt.Sprintf("%s: %v; retry later", what, err)}
}

func (s *Server) fail(w http.ResponseWriter, e *apiError) {
	metrics.EnrollmentRefused(e.reason)
	switch {
	case e.status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
	case e.retryAfter > 0:
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(w, e.status, &enrollapi.Error{Reason: e.reason, Message: e.msg, URI: e.uri})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads one JSON object of at most maxBodyBytes with no unknown field.
func decode(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the request body is not the expected JSON object: %s", jsonProblem(err))
	}
	return nil
}

// jsonProblem describes a decoding error without quoting the body.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at offset %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q has the wrong type", typ.Field)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or truncated"
	default:
		// "json: unknown field \"x\"" names a field, never a value.
		return err.Error()
	}
}

// clientAddr is the address failed token attempts are counted against.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

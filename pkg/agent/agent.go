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

// Package agent enrolls a workload with the credo enrollment server and keeps
// its certificate renewed. It speaks the protocol of package enrollapi and
// depends on nothing but the standard library, so any Go program can embed it:
//
//	a, err := agent.New(agent.Config{
//		Server:    "https://enroll.example.com:8443",
//		CAFile:    "/etc/credo/enrollment-ca.pem",
//		TokenFile: "/etc/credo/join-token",
//		StateDir:  "/var/lib/credo-agent",
//		OnUpdate:  func(agent.Update) { /* reload what reads the files */ },
//	})
//	if err != nil { ... }
//	err = a.Run(ctx) // enrolls if needed, then renews until ctx is done
//	if errors.Is(err, agent.ErrReenrollmentRequired) { ... }
//
// # Files
//
// The state directory (created 0700) holds key.pem (PKCS #8, 0600),
// cert.pem (the leaf then its intermediates, 0644), bundle.pem (the trust
// bundle, 0644), state.json (the UUID and the renewal grace, 0644) and,
// while a renewal is in flight, renewal.json (its request, sent again byte
// for byte by every retry, after a restart too, 0644). Each
// is written atomically: a temporary file in the same directory, fsync,
// rename, fsync of the directory.
//
// # Keys
//
// The private key is generated on the host (ECDSA P-256) and never sent
// anywhere. It is generated at enrollment and reused by every renewal of that
// enrollment, so key.pem and cert.pem on disk always belong together: a
// program reading them between two writes never sees a new key with an old
// certificate. A new enrollment generates a new key.
//
// # Renewal
//
// A certificate valid from NotBefore to NotAfter is renewed at RenewAt:
// NotBefore + lifetime×2/3 + r×lifetime/6 with r drawn uniformly from [0, 1)
// once per certificate, so always in [2/3, 5/6) of the lifetime and before
// NotAfter. Failures that may pass (network errors, 5xx, 429) are retried
// with capped exponential backoff and jitter until NotAfter plus the renewal
// grace the server announced; an expired certificate is still presented
// within the grace. A refusal that needs a new enrollment stops Run with an
// error wrapping ErrReenrollmentRequired and the server's *enrollapi.Error.
//
// # Trust
//
// The enrollment server is verified against the union of the CA file given
// at first contact and the bundle last received, so a CA rotation's overlap
// never locks the agent out. The bundle comes with every certificate and is
// polled from GET /v1/bundle every BundlePollInterval.
package agent

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Defaults of Config.
const (
	DefaultBundlePollInterval = 10 * time.Minute
	DefaultRequestTimeout     = 30 * time.Second
	DefaultRetryInitial       = time.Second
	DefaultRetryMax           = 5 * time.Minute
)

var (
	// ErrReenrollmentRequired is wrapped by the error Run returns when the
	// workload must enroll again with a new join token: the server refused
	// the certificate or the token for good, or the certificate on disk is
	// beyond its renewal grace and no token was given. The error also wraps
	// an *enrollapi.Error carrying the reason.
	ErrReenrollmentRequired = errors.New("re-enrollment with a new join token is required")
	// ErrDenied is wrapped by the error Run returns when the server refused
	// a renewal because the workload is denied (its Workload's
	// spec.denied): an operator locked it out. The error also wraps the
	// *enrollapi.Error whose message carries the denial's reason. The
	// state directory is kept: once the denial is lifted, the agent renews
	// with it again (within the renewal grace), without a token.
	ErrDenied = errors.New("the workload is denied")
	// ErrTokenRequired is returned by Run when there is no usable
	// certificate in the state directory and no join token to enroll with.
	ErrTokenRequired = errors.New("no certificate in the state directory and no join token to enroll with")
)

// Config configures an Agent. Server, CAFile and StateDir are required.
type Config struct {
	// Server is the base URL of the enrollment server; it must be https.
	Server string
	// CAFile is a PEM file of the CAs that verify the enrollment server at
	// first contact. It stays trusted beside the received bundle.
	CAFile string
	// Token is the join token, "<id>.<secret>". Prefer TokenFile: a token
	// given on a command line is visible to every user of the host.
	Token string
	// TokenFile holds the join token. It is read only when enrolling.
	TokenFile string
	// StateDir holds the key, certificate, bundle and state files.
	StateDir string
	// Hostname is recorded in the Workload; os.Hostname() when empty.
	Hostname string
	// Labels the workload asks for; the token's policy must allow each.
	Labels map[string]string
	// BundlePollInterval is how often GET /v1/bundle is polled;
	// DefaultBundlePollInterval when zero, never when negative.
	BundlePollInterval time.Duration
	// RequestTimeout bounds one HTTP exchange; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// RetryInitial and RetryMax bound the backoff between attempts;
	// DefaultRetryInitial and DefaultRetryMax when zero.
	RetryInitial, RetryMax time.Duration
	// Logger receives progress and failures, never a token, key or
	// certificate PEM; slog.Default() when nil.
	Logger *slog.Logger
	// Clock tells the time and waits; the system clock when nil.
	Clock Clock
	// Jitter returns a number drawn uniformly from [0, 1); it spreads
	// renewals and retries. math/rand/v2's Float64 when nil.
	Jitter func() float64
	// OnUpdate, when set, is called after the files changed and TLSConfig
	// reflects them. It runs on the agent's goroutine: it must not block.
	OnUpdate func(Update)
}

// Update says what changed on disk.
type Update struct {
	// Certificate is true when key.pem or cert.pem changed (enrollment or renewal).
	Certificate bool
	// Bundle is true when bundle.pem changed.
	Bundle bool
	// Attributes is true when the workload's labels or hostname, as the
	// registry answered them with the certificate, changed (Attributes
	// returns them): a relabel reaches the agent at its next renewal.
	Attributes bool
}

// Clock is the time source, replaceable in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Agent enrolls a workload and keeps its certificate current. Create it with
// New; TLSConfig may be called from any goroutine, Run from one.
type Agent struct {
	cfg      Config
	server   *url.URL
	log      *slog.Logger
	clock    Clock
	jitter   func() float64
	files    files
	caCerts  []*x509.Certificate // from CAFile, trusted for the server forever
	identity atomic.Pointer[identity]
	trust    atomic.Pointer[trust]
	client   *client
	nextPoll time.Time
}

// New checks cfg, reads the CA file and the bundle on disk, and creates the
// state directory. It contacts nothing.
func New(cfg Config) (*Agent, error) {
	u, err := url.Parse(cfg.Server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the server URL %q must be https://host[:port]", cfg.Server)
	}
	if cfg.Token != "" && cfg.TokenFile != "" {
		return nil, errors.New("give the join token either as a string or as a file, not both")
	}
	if cfg.StateDir == "" {
		return nil, errors.New("a state directory is required")
	}
	if cfg.CAFile == "" {
		return nil, errors.New("a CA file to verify the enrollment server is required")
	}
	caPEM, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA file: %w", err)
	}
	caCerts, err := parseCertificates(caPEM)
	if err != nil {
		return nil, fmt.Errorf("the CA file %s: %w", cfg.CAFile, err)
	}
	applyDefaults(&cfg)
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	a := &Agent{
		cfg:     cfg,
		server:  u,
		log:     cfg.Logger,
		clock:   cfg.Clock,
		jitter:  cfg.Jitter,
		files:   files{dir: cfg.StateDir},
		caCerts: caCerts,
	}
	a.trust.Store(a.newTrust(nil, nil))
	if err := a.loadBundle(); err != nil {
		a.log.Warn("ignoring the bundle on disk", "file", a.files.path(bundleFile), "error", err)
	}
	a.client = newClient(a)
	return a, nil
}

func applyDefaults(cfg *Config) {
	if cfg.BundlePollInterval == 0 {
		cfg.BundlePollInterval = DefaultBundlePollInterval
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.RetryInitial <= 0 {
		cfg.RetryInitial = DefaultRetryInitial
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	cfg.RetryMax = max(cfg.RetryMax, cfg.RetryInitial)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
}

// Run enrolls when there is no usable certificate on disk, then renews until
// ctx is done (it returns ctx.Err()) or the workload must enroll again (the
// error wraps ErrReenrollmentRequired).
func (a *Agent) Run(ctx context.Context) error {
	if err := a.start(ctx); err != nil {
		return err
	}
	return a.renewLoop(ctx)
}

// start uses the certificate on disk when it is valid or within the grace,
// and enrolls otherwise.
func (a *Agent) start(ctx context.Context) error {
	id, st := a.loadIdentity()
	now := a.clock.Now()
	if id != nil && st.ReenrollmentReason == "" {
		switch {
		case now.Before(id.leaf.NotAfter):
			a.identity.Store(id)
			a.log.Info("using the certificate on disk", "uri", id.uri().String(), "notAfter", id.leaf.NotAfter,
				"nextRenewal", id.renewAt)
			return nil
		case now.Before(id.deadline()):
			a.identity.Store(id)
			a.log.Warn("the certificate on disk expired; renewing within the grace", "uri", id.uri().String(),
				"notAfter", id.leaf.NotAfter, "graceEnds", id.deadline())
			return nil
		}
	}
	token, err := a.token()
	if err != nil {
		return err
	}
	if token == "" {
		if id == nil {
			return ErrTokenRequired
		}
		return a.reenrollmentError(id, st)
	}
	if id != nil {
		a.log.Info("enrolling again with the join token given", "previous", id.uri().String())
	}
	return a.enroll(ctx, token)
}

// reenrollmentError explains why the certificate on disk cannot be used.
func (a *Agent) reenrollmentError(id *identity, st state) error {
	apiErr := &enrollapi.Error{Reason: st.ReenrollmentReason, Message: st.ReenrollmentMessage}
	if apiErr.Reason == "" {
		apiErr = &enrollapi.Error{
			Reason: enrollapi.ReasonRenewalGraceOver,
			Message: fmt.Sprintf("the certificate of %s expired at %s and its renewal grace ended at %s",
				id.uri(), id.leaf.NotAfter.Format(time.RFC3339), id.deadline().Format(time.RFC3339)),
		}
	}
	return fmt.Errorf("%w: %w", ErrReenrollmentRequired, apiErr)
}

// token returns the join token, or "" when none was given.
func (a *Agent) token() (string, error) {
	tok := a.cfg.Token
	if a.cfg.TokenFile != "" {
		b, err := os.ReadFile(a.cfg.TokenFile)
		if err != nil {
			return "", fmt.Errorf("reading the token file: %w", err)
		}
		tok = string(b)
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", nil
	}
	id, secret, ok := strings.Cut(tok, enrollapi.TokenSeparator)
	if !ok || id == "" || secret == "" || strings.ContainsAny(tok, " \t\r\n") {
		// Never quote the token, not even a part of it.
		return "", errors.New("the join token is malformed: want <id>.<secret> on one line")
	}
	return tok, nil
}

func (a *Agent) notify(u Update) {
	if a.cfg.OnUpdate != nil && (u.Certificate || u.Bundle || u.Attributes) {
		a.cfg.OnUpdate(u)
	}
}

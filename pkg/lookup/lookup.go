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

// Package lookup is the client of the registry's lookup for relying
// services: given the certificate a peer presented, it asks the
// enrollment server who the peer is and what its labels are now, and holds
// each answer for as long as the server allows (maxAgeSeconds), in a cache
// bounded by entries.
//
// The certificate authenticates a workload; the registry, which holds its
// mutable attributes, says what it may do (seed 001). A relying service
// verifies its peers' certificates against the credo trust bundle in its
// TLS configuration, then authorizes by labels:
//
//	lc, err := lookup.New(lookup.Options{
//		Endpoint:          "https://enroll.example.org:9443",
//		Roots:             bundle,
//		ClientCertificate: func() (*tls.Certificate, error) { ... the service's own workload certificate ... },
//	})
//	mux.Handle("/orders", lc.RequireLabel("role", "frontend")(orders))
//
// It depends on the standard library and pkg/enrollapi only.
package lookup

import (
	"bytes"
	"container/list"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Defaults of Options.
const (
	DefaultMaxEntries = 4096
	DefaultTimeout    = 5 * time.Second
	// maxAnswerBytes bounds an answer read.
	maxAnswerBytes = 64 << 10
)

// Options configure a Client. Endpoint, Roots and one of ClientCertificate
// and Token are required.
type Options struct {
	// Endpoint is the enrollment server's base URL, https.
	Endpoint string
	// Roots verify the enrollment server's certificate.
	Roots *x509.CertPool
	// ServerName is the name the server's certificate must carry; the
	// Endpoint's host when empty.
	ServerName string
	// ClientCertificate returns the relying service's own current workload
	// certificate (pkg/agent keeps it current). It is asked at each new
	// connection.
	ClientCertificate func() (*tls.Certificate, error)
	// Token returns a Kubernetes token issued for the audience
	// enrollapi.LookupAudience, for a service in the cluster without a
	// workload certificate (a projected service account token). It is
	// asked at each lookup.
	Token func() (string, error)
	// MaxEntries bounds the answers held; DefaultMaxEntries when zero.
	MaxEntries int
	// Timeout bounds one lookup; DefaultTimeout when zero.
	Timeout time.Duration
	// Now returns the time; time.Now when nil.
	Now func() time.Time
}

// Peer is what the registry holds of a peer now.
type Peer struct {
	UUID, URI, Namespace, Policy string
	// Hostname and Labels are the workload's now; empty when Denied.
	Hostname string
	Labels   map[string]string
	// AttributesGeneration counts the established changes of labels and
	// hostname.
	AttributesGeneration int64
	// Denied is true when the workload must not be trusted (denied, or
	// found running twice).
	Denied bool
	// Current is true when the certificate asked about is the workload's
	// current one; Replaced, when it is the one the current one replaced.
	Current, Replaced bool
	// NotAfter of the workload's current certificate; zero when unknown.
	NotAfter time.Time
	// Expires is when the answer must be asked again.
	Expires time.Time
}

// Trusted reports whether the peer may be trusted at all: not denied, and
// the certificate asked about is its current one or the one that replaced
// it moments ago.
func (p *Peer) Trusted() bool { return !p.Denied && (p.Current || p.Replaced) }

// Client looks peers up. It is safe for concurrent use. Build it with New.
type Client struct {
	opts     Options
	endpoint string
	http     *http.Client

	mu      sync.Mutex
	entries map[string]*list.Element
	order   *list.List // front: most recently used
}

type entry struct {
	key  string
	peer *Peer
}

// New returns a Client for opts.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("lookup: the endpoint %q is not an https URL", opts.Endpoint)
	}
	if opts.Roots == nil {
		return nil, errors.New("lookup: Roots are needed to verify the enrollment server")
	}
	if (opts.ClientCertificate == nil) == (opts.Token == nil) {
		return nil, errors.New("lookup: give one of ClientCertificate and Token")
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.Roots, ServerName: opts.ServerName}
	if get := opts.ClientCertificate; get != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return get() }
	}
	transport := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	return &Client{
		opts:     opts,
		endpoint: strings.TrimSuffix(opts.Endpoint, "/"),
		http:     &http.Client{Transport: transport, Timeout: opts.Timeout},
		entries:  map[string]*list.Element{},
		order:    list.New(),
	}, nil
}

// Peer looks up the workload whose certificate cert is: its one URI SAN
// and its serial number. cert must have been verified against the credo
// trust bundle (a TLS server does that with ClientCAs and
// tls.RequireAndVerifyClientCert).
func (c *Client) Peer(ctx context.Context, cert *x509.Certificate) (*Peer, error) {
	if cert == nil || len(cert.URIs) != 1 {
		return nil, errors.New("lookup: the certificate does not carry exactly one workload URI")
	}
	return c.Lookup(ctx, cert.URIs[0].String(), fmt.Sprintf("%x", cert.SerialNumber))
}

// FromTLS looks up the peer of a TLS connection whose client certificate
// was verified (VerifiedChains is not empty).
func (c *Client) FromTLS(ctx context.Context, cs *tls.ConnectionState) (*Peer, error) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return nil, ErrNotVerified
	}
	return c.Peer(ctx, cs.PeerCertificates[0])
}

// ErrNotVerified is returned for a connection with no verified client
// certificate: a certificate is an identity only once its chain and its
// key's possession are checked.
var ErrNotVerified = errors.New("lookup: the connection has no verified client certificate")

// Lookup asks what the registry holds of the workload uri, and whether
// serial (lower-case hex; may be empty) is its current certificate. An
// answer held and not expired is returned without asking. A refusal is an
// *enrollapi.Error (ReasonLookupForbidden when the caller may not look the
// peer up, or there is no such peer).
func (c *Client) Lookup(ctx context.Context, uri, serial string) (*Peer, error) {
	key := uri + "\x00" + serial
	if p := c.held(key); p != nil {
		return p, nil
	}
	ans, err := c.ask(ctx, &enrollapi.LookupRequest{URI: uri, Serial: serial})
	var e *enrollapi.Error
	if errors.As(err, &e) && e.Reason == enrollapi.ReasonNotCurrent {
		// The connection was made with the certificate this service's
		// agent has since replaced: a new one presents the current one.
		c.http.CloseIdleConnections()
		ans, err = c.ask(ctx, &enrollapi.LookupRequest{URI: uri, Serial: serial})
	}
	if err != nil {
		return nil, err
	}
	p := peerOf(ans, c.opts.Now())
	if ans.MaxAgeSeconds > 0 {
		c.hold(key, p)
	}
	return p, nil
}

func peerOf(ans *enrollapi.LookupResponse, now time.Time) *Peer {
	p := &Peer{
		UUID: ans.UUID, URI: ans.URI, Namespace: ans.Namespace, Policy: ans.Policy,
		Hostname: ans.Hostname, Labels: ans.Labels, AttributesGeneration: ans.AttributesGeneration,
		Denied: ans.Denied, Current: ans.Current, Replaced: ans.Replaced,
		Expires: now.Add(time.Duration(ans.MaxAgeSeconds) * time.Second),
	}
	if t, err := time.Parse(time.RFC3339, ans.NotAfter); err == nil {
		p.NotAfter = t
	}
	return p
}

func (c *Client) ask(ctx context.Context, in *enrollapi.LookupRequest) (*enrollapi.LookupResponse, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+enrollapi.PathLookup, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.opts.Token != nil {
		token, err := c.opts.Token()
		if err != nil {
			return nil, fmt.Errorf("lookup: reading the token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("lookup: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &enrollapi.Error{}
		if json.Unmarshal(raw, e) != nil || e.Reason == "" {
			e = &enrollapi.Error{Reason: http.StatusText(resp.StatusCode), Message: fmt.Sprintf("the enrollment server answered %d", resp.StatusCode)}
		}
		return nil, e
	}
	var ans enrollapi.LookupResponse
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("lookup: the answer is not a lookup response: %w", err)
	}
	return &ans, nil
}

// held returns the answer held for key while it has not expired.
func (c *Client) held(key string) *Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	en := el.Value.(*entry)
	if !c.opts.Now().Before(en.peer.Expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil
	}
	c.order.MoveToFront(el)
	return en.peer
}

// hold keeps p for key, forgetting the least recently used answer beyond
// MaxEntries.
func (c *Client) hold(key string, p *Peer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value.(*entry).peer = p
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&entry{key: key, peer: p})
	for c.order.Len() > c.opts.MaxEntries {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*entry).key)
	}
}

// Len is the number of answers held (some may have expired).
func (c *Client) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

type peerKey struct{}

// PeerFrom returns the Peer RequireLabel admitted the request as.
func PeerFrom(ctx context.Context) (*Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(*Peer)
	return p, ok
}

// RequireLabel returns middleware that admits a request only from a peer
// whose verified client certificate is a trusted workload's (Peer.Trusted)
// labelled key=value now. Others are answered 403 (401 without a verified
// certificate); a lookup that fails is answered 503. The handler finds
// the peer with PeerFrom.
func (c *Client) RequireLabel(key, value string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := c.FromTLS(r.Context(), r.TLS)
			var e *enrollapi.Error
			switch {
			case errors.Is(err, ErrNotVerified):
				http.Error(w, "a verified workload certificate is needed", http.StatusUnauthorized)
				return
			case errors.As(err, &e) && e.Reason == enrollapi.ReasonLookupForbidden:
				http.Error(w, "this peer may not be looked up", http.StatusForbidden)
				return
			case err != nil:
				http.Error(w, "the registry could not be asked; retry", http.StatusServiceUnavailable)
				return
			}
			if !p.Trusted() {
				http.Error(w, fmt.Sprintf("workload %s is not trusted now: denied, or the certificate is not its current one", p.UUID), http.StatusForbidden)
				return
			}
			if p.Labels[key] != value {
				http.Error(w, fmt.Sprintf("workload %s is not labelled %s=%s", p.UUID, key, value), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey{}, p)))
		})
	}
}

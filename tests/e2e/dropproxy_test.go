//go:build e2e

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

package e2e

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// dropProxy forwards TCP connections to the enrollment listener. Armed, it
// lets the next connection's TLS handshake through and then swallows
// everything the server sends back, until the server has been quiet for a
// second, and closes the connection: the request was served, its answer
// lost. TLS stays end to end; the proxy reads nothing of it. In TLS 1.3 the
// client writes again only once it holds the server's whole first flight,
// so whatever the server sends after the client's second write is past the
// handshake: session tickets and the answer.
type dropProxy struct {
	ln      net.Listener
	target  string
	armed   atomic.Bool
	swallow atomic.Int64
}

func startDropProxy(t *testing.T, target string) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return p
}

func (p *dropProxy) addr() string    { return p.ln.Addr().String() }
func (p *dropProxy) dropNextAnswer() { p.armed.Store(true) }
func (p *dropProxy) dropped() int64  { return p.swallow.Load() }

func (p *dropProxy) handle(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	drop := p.armed.CompareAndSwap(true, false)
	var serverSpoke, clientAgain atomic.Bool
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if serverSpoke.Load() {
					clientAgain.Store(true)
				}
				if _, werr := s.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if tc, ok := s.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
				return
			}
		}
	}()
	if !drop {
		_, _ = io.Copy(c, s)
		return
	}
	buf := make([]byte, 32<<10)
	var swallowed int64
	for {
		_ = s.SetReadDeadline(time.Now().Add(time.Second))
		n, err := s.Read(buf)
		if n > 0 {
			serverSpoke.Store(true)
			if clientAgain.Load() {
				swallowed += int64(n)
			} else if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && swallowed == 0 {
			continue
		}
		if err != nil {
			break
		}
	}
	p.swallow.Add(swallowed)
}

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

package enrollment

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// FileCertificate serves the key pair in certFile and keyFile (mounted from
// cert-manager, say), re-read when either file's modification time changes.
func FileCertificate(certFile, keyFile string) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	var (
		mu      sync.Mutex
		current *tls.Certificate
		stamp   [2]time.Time
	)
	load := func() (*tls.Certificate, error) {
		mu.Lock()
		defer mu.Unlock()
		ci, err := os.Stat(certFile)
		if err != nil {
			return nil, err
		}
		ki, err := os.Stat(keyFile)
		if err != nil {
			return nil, err
		}
		now := [2]time.Time{ci.ModTime(), ki.ModTime()}
		if current != nil && now == stamp {
			return current, nil
		}
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			if current != nil {
				// A half-written pair: keep serving the last good one.
				return current, nil
			}
			return nil, fmt.Errorf("loading the serving key pair: %w", err)
		}
		current, stamp = &pair, now
		return current, nil
	}
	if _, err := load(); err != nil {
		return nil, err
	}
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return load() }, nil
}

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

package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	eventv1beta1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	. "github.com/onsi/gomega"
)

// EventSink is an HTTP endpoint that keeps every Flux event posted to it:
// what notification-controller's event API receives from a controller, and
// what a generic webhook Provider receives from notification-controller.
type EventSink struct {
	mu     sync.Mutex
	events []eventv1beta1.Event
	bodies [][]byte
}

// ServeHTTP accepts a POST of an event's JSON, decoded into the type
// notification-controller decodes.
func (s *EventSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var e eventv1beta1.Event
	if err != nil || r.Method != http.MethodPost || json.Unmarshal(body, &e) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.events = append(s.events, e)
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// Find returns the first event of reason about an object of kind (and
// name, when not empty), or nil.
func (s *EventSink) Find(kind, name, reason string) *eventv1beta1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.events {
		o := s.events[i].InvolvedObject
		if s.events[i].Reason == reason && o.Kind == kind && (name == "" || o.Name == name) {
			e := s.events[i]
			return &e
		}
	}
	return nil
}

// ExpectNoKeyMaterial fails g when any body posted so far holds a PEM
// private key, or any line of the body of one of keys.
func (s *EventSink) ExpectNoKeyMaterial(g Gomega, keys ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, body := range s.bodies {
		g.Expect(bytes.Contains(body, []byte("PRIVATE KEY"))).To(BeFalse(), "no key in any event posted")
		for _, key := range keys {
			lines := strings.Split(strings.TrimSpace(string(key)), "\n")
			for _, line := range lines[1 : len(lines)-1] {
				g.Expect(bytes.Contains(body, []byte(line))).To(BeFalse(), "no line of a key in any event posted")
			}
		}
	}
}

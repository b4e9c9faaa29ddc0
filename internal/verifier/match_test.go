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

package verifier

import "testing"

func TestMatches(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := f.Verifier("app", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			if !Matches(f, "app", "correct horse", stored) {
				t.Error("the verifier of a password does not match it")
			}
			if Matches(f, "app", "wrong horse", stored) {
				t.Error("the verifier of a password matches another one")
			}
			other, err := f.Verifier("app", "another")
			if err != nil {
				t.Fatal(err)
			}
			if Matches(f, "app", "correct horse", other) {
				t.Error("another password's verifier matches")
			}
			if Matches(f, "app", "correct horse", "") {
				t.Error("an empty stored value matches")
			}
		})
	}
}

func TestMatchesSCRAMUsesTheStoredSaltAtTheIterationsCredoWrites(t *testing.T) {
	f, _ := Lookup(SCRAMSHA256)
	salt := []byte("0123456789abcdef")
	if !Matches(f, "", "pw", SCRAMWithSalt("pw", salt, SCRAMIterations)) {
		t.Error("a secret with a given salt does not match its password")
	}
	if Matches(f, "", "pw", SCRAMWithSalt("pw", salt, 10)) {
		t.Error("a secret of another iteration count matches: a stored value may make the check cost any time")
	}
	for _, bad := range []string{
		"SCRAM-SHA-256$0:MDEyMzQ1Njc4OWFiY2RlZg==$x:y",
		"SCRAM-SHA-256$1048576:MDEyMzQ1Njc4OWFiY2RlZg==$x:y",
		"SCRAM-SHA-256$4096:not base64$x:y",
		"md5abcdef",
	} {
		if Matches(f, "", "pw", bad) {
			t.Errorf("malformed %q matches", bad)
		}
	}
}

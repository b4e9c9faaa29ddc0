//go:build pkcs11

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

package pkcs11

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/tests/softhsm"
)

const (
	testToken = "credo-unit"
	// testPIN is the user PIN of testToken: it must never be in an error.
	testPIN   = "pin-7f3a9c21e5"
	testSOPIN = "so-pin-0b8d44"
)

var (
	testModule string
	testDir    string
)

// TestMain sets SoftHSM2 up before the module is loaded: a token
// directory of its own, one token. It fails when SoftHSM2 is missing.
func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if testModule, err = softhsm.Module(); err != nil {
		return 0, err
	}
	if testDir, err = os.MkdirTemp("", "credo-softhsm-"); err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(testDir) }()
	if err := softhsm.Setup(testDir); err != nil {
		return 0, err
	}
	if err := softhsm.InitToken(testToken, testPIN, testSOPIN); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// options name testToken with a PIN file holding pin as written.
func options(t *testing.T, pinFile string) Options {
	t.Helper()
	f := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(f, []byte(pinFile), 0o600); err != nil {
		t.Fatal(err)
	}
	return Options{Module: testModule, TokenLabel: testToken, PINFile: f, KeyLabel: "credo-test-" + hex.EncodeToString([]byte(t.Name()))[:12]}
}

func open(t *testing.T, o Options) *Token {
	t.Helper()
	token, err := Open(o)
	if err != nil {
		t.Fatalf("opening the token: %v", err)
	}
	t.Cleanup(func() { _ = token.Close() })
	return token
}

// A key is generated in the token, private, sensitive and never
// extractable; it signs; another session finds it by its id; destroyed,
// it is gone.
func TestAKeyIsGeneratedInTheTokenAndNeverLeavesIt(t *testing.T) {
	g := NewWithT(t)
	o := options(t, testPIN+"\n")
	token := open(t, o)
	before := time.Now().UTC().Truncate(time.Second)
	key, id, err := token.Generate()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(id).To(HaveLen(idLength))

	infos, err := token.Keys()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(infos).To(HaveLen(1))
	info := infos[0]
	g.Expect(info.ID).To(Equal(id))
	g.Expect(info.Label).To(HavePrefix(o.KeyLabel + "-"))
	at, err := time.Parse(labelTime, strings.TrimPrefix(info.Label, o.KeyLabel+"-"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(at).To(BeTemporally(">=", before))
	g.Expect(info.Private).To(BeTrue(), "CKA_PRIVATE")
	g.Expect(info.Sensitive).To(BeTrue(), "CKA_SENSITIVE")
	g.Expect(info.AlwaysSensitive).To(BeTrue(), "CKA_ALWAYS_SENSITIVE")
	g.Expect(info.Extractable).To(BeFalse(), "CKA_EXTRACTABLE")
	g.Expect(info.NeverExtractable).To(BeTrue(), "CKA_NEVER_EXTRACTABLE")
	ids, err := token.KeyIDs()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ids).To(Equal([][]byte{id}), "the ids the embedded CA compares with its Secret")

	digest := sha256.Sum256([]byte("to be signed"))
	sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
	g.Expect(err).NotTo(HaveOccurred())
	pub, ok := key.Public().(*ecdsa.PublicKey)
	g.Expect(ok).To(BeTrue())
	g.Expect(ecdsa.VerifyASN1(pub, digest[:], sig)).To(BeTrue())

	// Another session (another replica's) finds it by its id alone.
	other := open(t, o)
	found, err := other.Find(id)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).NotTo(BeNil())
	g.Expect(pub.Equal(found.Public())).To(BeTrue())
	missing, err := other.Find(bytes.Repeat([]byte{1}, idLength))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(BeNil(), "an id the token does not hold")

	g.Expect(other.Destroy(id)).To(Succeed())
	g.Expect(other.Destroy(id)).To(Succeed(), "destroying a key already gone is no error")
	gone, err := open(t, o).Find(id)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone).To(BeNil())
	infos, err = token.Keys()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(infos).To(BeEmpty())
}

// A wrong PIN is refused and is in no error; nor is the right one when the
// token is not found. A PIN file's one trailing newline (LF or CRLF) is not
// part of the PIN; an empty file is refused.
func TestThePINIsReadFromItsFileAndNeverShown(t *testing.T) {
	g := NewWithT(t)
	// First, while no session of this process is logged in: the token
	// checks a PIN only at the first login of a process.
	const wrong = "wrong-pin-5e1d"
	_, err := Open(options(t, wrong))
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring(testToken))
	g.Expect(err.Error()).To(ContainSubstring("CKR_PIN_INCORRECT"))
	g.Expect(err.Error()).NotTo(ContainSubstring(wrong))

	open(t, options(t, testPIN+"\r\n"))
	open(t, options(t, testPIN))

	o := options(t, testPIN)
	o.TokenLabel = "no-such-token"
	_, err = Open(o)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).NotTo(ContainSubstring(testPIN))

	_, err = Open(options(t, "\n"))
	g.Expect(err).To(MatchError(ContainSubstring("is empty")))
}

// Options name a whole token or none.
func TestOptionsNameAWholeToken(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Built).To(BeTrue())
	none := Options{KeyLabel: DefaultKeyLabel}
	g.Expect(none.Enabled()).To(BeFalse())
	g.Expect(none.Validate()).To(Succeed())
	partial := Options{Module: testModule, KeyLabel: DefaultKeyLabel}
	g.Expect(partial.Enabled()).To(BeTrue())
	err := partial.Validate()
	g.Expect(err).To(MatchError(ContainSubstring("--" + FlagTokenLabel + " is required")))
	g.Expect(err).To(MatchError(ContainSubstring("--" + FlagPINFile + " is required")))
	_, err = Open(partial)
	g.Expect(err).To(HaveOccurred())
}

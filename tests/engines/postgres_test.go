//go:build engines

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

package engines

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

// postgres is a PostgreSQL 15 cluster started by a test.
type postgres struct {
	dir  string // data directory's parent; also the Unix socket directory
	port int
	env  []string
	sec  *secrets
}

func pgBin(name string) string {
	dir := os.Getenv("PG_BINDIR")
	if dir == "" {
		dir = "/usr/lib/postgresql/15/bin"
	}
	return filepath.Join(dir, name)
}

// startPostgres initialises and starts a cluster: local connections trusted
// (the superuser's Unix socket), host connections on 127.0.0.1 by
// scram-sha-256 only.
func startPostgres(t *testing.T, sec *secrets) *postgres {
	t.Helper()
	dir := serverDir(t)
	p := &postgres{dir: dir, port: testenv.FreePort(t), sec: sec}
	p.env = cleanEnv([]string{"PG"}, "PGCLIENTENCODING=UTF8", "PGCONNECT_TIMEOUT=10",
		"PGSSLMODE=disable", "PGPASSFILE="+filepath.Join(dir, "no-passfile"), "PGAPPNAME=credo-engines")
	data := filepath.Join(dir, "data")
	r := runCmd(p.env, "", true, 2*time.Minute, pgBin("initdb"), "-D", data, "-U", "postgres", "-E", "UTF8",
		"--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions")
	if !r.ok() {
		t.Fatalf("initdb: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	srv := startServer(t, "postgres", filepath.Join(dir, "postgres.log"), syscall.SIGINT,
		pgBin("postgres"), "-D", data, "-k", dir, "-p", strconv.Itoa(p.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "password_encryption=scram-sha-256",
		"-c", "fsync=off",
		// Never write a statement (which may hold a verifier) into the log.
		"-c", "log_min_error_statement=panic",
		"-c", "log_statement=none")
	srv.waitReady(t, time.Minute, func() error {
		r := p.psql("SELECT 1")
		if !r.ok() {
			return fmt.Errorf("%w: %s", r.err, strings.TrimSpace(r.stderr))
		}
		return nil
	})
	return p
}

// psql runs script as the superuser over the Unix socket.
func (p *postgres) psql(script string) result {
	return runCmd(p.env, script, false, time.Minute, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", p.dir, "-p", strconv.Itoa(p.port), "-U", "postgres", "-d", "postgres", "-f", "-")
}

// mustPSQL runs script and returns its rows, failing the test (with scrubbed
// output) on error.
func (p *postgres) mustPSQL(t *testing.T, what, script string) []string {
	t.Helper()
	r := p.psql(script)
	if !r.ok() {
		t.Fatalf("psql (%s): %v\n%s", what, r.err, p.sec.scrub(r.stderr))
	}
	return strings.Split(strings.TrimSpace(r.stdout), "\n")
}

// login connects with libpq (psql) over TCP, authenticating by SCRAM.
func (p *postgres) login(role, password string) result {
	return runCmd(withEnv(p.env, "PGPASSWORD="+password), "", false, time.Minute, "psql", "-X", "-w", "-A", "-t",
		"-h", "127.0.0.1", "-p", strconv.Itoa(p.port), "-U", role, "-d", "postgres", "-c", "SELECT 1")
}

// rolpasswords reads pg_authid.rolpassword of the roles named with prefix.
func (p *postgres) rolpasswords(t *testing.T, prefix string) map[string]string {
	t.Helper()
	rows := p.mustPSQL(t, "read pg_authid",
		fmt.Sprintf("SELECT rolname || '|' || coalesce(rolpassword, '') FROM pg_authid WHERE rolname LIKE '%s%%'", prefix))
	got := map[string]string{}
	for _, row := range rows {
		name, pw, ok := strings.Cut(row, "|")
		if ok {
			got[name] = pw
		}
	}
	return got
}

// saltOf extracts the salt of a SCRAM-SHA-256$4096 secret.
func saltOf(secret string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(secret, "SCRAM-SHA-256$4096:")
	if !ok {
		return nil, false
	}
	b64, _, ok := strings.Cut(rest, "$")
	if !ok {
		return nil, false
	}
	salt, err := base64.StdEncoding.DecodeString(b64)
	return salt, err == nil
}

func TestPostgreSQL(t *testing.T) {
	t.Parallel()
	sec := &secrets{}
	p := startPostgres(t, sec)
	scram, err := verifier.Lookup(verifier.SCRAMSHA256)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cases := credCases(t)

	t.Run("stored-as-is-and-logs-in", func(t *testing.T) {
		g := NewWithT(t)
		want := map[string]string{}
		var script strings.Builder
		for i, c := range cases {
			role := fmt.Sprintf("c%02d", i)
			v, err := scram.Verifier(role, c.password)
			g.Expect(err).NotTo(HaveOccurred(), c.name)
			sec.add(c.password, v)
			want[role] = v
			fmt.Fprintf(&script, "CREATE ROLE %s LOGIN;\nALTER ROLE %s PASSWORD '%s';\n", role, role, v)
		}
		p.mustPSQL(t, "store verifiers", script.String())
		got := p.rolpasswords(t, "c")
		for i, c := range cases {
			role := fmt.Sprintf("c%02d", i)
			// PostgreSQL re-hashes a verifier it does not recognise as if it were
			// a plaintext password, so only a byte-for-byte match proves it was
			// stored as is. Compared as a bool: a mismatch prints no secret.
			g.Expect(got[role] == want[role]).To(BeTrue(), "case %s: pg_authid.rolpassword is not our verifier", c.name)
		}
		role := func(i int) string { return fmt.Sprintf("c%02d", i) }
		right := each(len(cases), func(i int) result { return p.login(role(i), cases[i].password) })
		wrong := each(len(cases), func(i int) result { return p.login(role(i), cases[i].password+"x") })
		// libpq applies SASLprep to the password it is given, as the server does
		// to a plaintext one: a twin prepares to the same string, so it is the
		// same password to PostgreSQL.
		twin := each(len(cases), func(i int) result {
			if cases[i].twin == "" {
				return result{}
			}
			sec.add(cases[i].twin)
			return p.login(role(i), cases[i].twin)
		})
		for i, c := range cases {
			r := right[i]
			g.Expect(r.ok()).To(BeTrue(), "case %s: login with the right password failed: %v %s", c.name, r.err, sec.scrub(r.stderr))
			g.Expect(strings.TrimSpace(r.stdout)).To(Equal("1"), c.name)
			r = wrong[i]
			g.Expect(r.ok()).To(BeFalse(), "case %s: login with a wrong password succeeded", c.name)
			g.Expect(r.stderr).To(ContainSubstring("password authentication failed"), "case %s", c.name)
			r = twin[i]
			g.Expect(r.ok()).To(BeTrue(), "case %s: the SASLprep twin did not log in: %s", c.name, sec.scrub(r.stderr))
		}
	})

	t.Run("malformed-verifier-is-silently-rehashed", func(t *testing.T) {
		// The engine fact behind the byte-for-byte comparison: an unpadded salt
		// makes the value a plaintext password to PostgreSQL, without an error.
		g := NewWithT(t)
		v, err := scram.Verifier("m", "pencil")
		g.Expect(err).NotTo(HaveOccurred())
		malformed := strings.Replace(v, "==$", "$", 1)
		g.Expect(malformed).NotTo(Equal(v))
		sec.add(v, malformed)
		p.mustPSQL(t, "store a malformed verifier", fmt.Sprintf("CREATE ROLE m01 LOGIN PASSWORD '%s';", malformed))
		stored := p.rolpasswords(t, "m01")["m01"]
		g.Expect(stored == malformed).To(BeFalse(), "the malformed verifier was stored as is")
		salt, ok := saltOf(stored)
		g.Expect(ok).To(BeTrue())
		g.Expect(verifier.SCRAMWithSalt(malformed, salt, 4096) == stored).To(BeTrue(),
			"the stored secret is not the malformed string hashed as a password")
		g.Expect(p.login("m01", "pencil").ok()).To(BeFalse())
	})

	t.Run("saslprep-matches-server", func(t *testing.T) {
		testPostgresSASLprep(t, p, cases)
	})
}

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
	"encoding/hex"
	"fmt"
	"os/exec"
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

// mariadb is a MariaDB server started by a test.
type mariadb struct {
	socket string
	port   int
	env    []string
	sec    *secrets
}

func mariadbd() string {
	if p, err := exec.LookPath("mariadbd"); err == nil {
		return p
	}
	return "/usr/sbin/mariadbd"
}

// startMariaDB creates a data directory (root@localhost without a password,
// reachable only through the Unix socket as the OS user root is) and starts
// the server with authentication on: no --skip-grant-tables.
func startMariaDB(t *testing.T, sec *secrets) *mariadb {
	t.Helper()
	dir := serverDir(t)
	data := filepath.Join(dir, "data")
	m := &mariadb{socket: filepath.Join(dir, "mariadb.sock"), port: testenv.FreePort(t), sec: sec}
	m.env = cleanEnv([]string{"MYSQL", "MARIADB"})
	r := runCmd(m.env, "", true, 2*time.Minute, "mariadb-install-db", "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
	if !r.ok() {
		t.Fatalf("mariadb-install-db: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	srv := startServer(t, "mariadbd", filepath.Join(dir, "mariadbd.log"), syscall.SIGTERM,
		mariadbd(), "--no-defaults", "--datadir="+data, "--socket="+m.socket,
		"--port="+strconv.Itoa(m.port), "--bind-address=127.0.0.1", "--skip-name-resolve",
		"--pid-file="+filepath.Join(dir, "mariadbd.pid"), "--innodb-buffer-pool-size=32M",
		"--log-error="+filepath.Join(dir, "mariadbd.log"))
	srv.waitReady(t, 2*time.Minute, func() error {
		r := m.admin("SELECT 1")
		if !r.ok() {
			return fmt.Errorf("%w: %s", r.err, strings.TrimSpace(r.stderr))
		}
		return nil
	})
	return m
}

// admin runs script as root over the Unix socket.
func (m *mariadb) admin(script string) result {
	return runCmd(m.env, script, false, time.Minute, "mariadb", "--no-defaults", "--default-character-set=utf8mb4",
		"--socket="+m.socket, "--user=root", "--batch", "--skip-column-names")
}

func (m *mariadb) mustAdmin(t *testing.T, what, script string) []string {
	t.Helper()
	r := m.admin(script)
	if !r.ok() {
		t.Fatalf("mariadb (%s): %v\n%s", what, r.err, m.sec.scrub(r.stderr))
	}
	return strings.Split(strings.TrimSpace(r.stdout), "\n")
}

// login connects with the mariadb client over TCP to 127.0.0.1; the password
// goes in MYSQL_PWD, byte for byte, and the handshake is
// mysql_native_password.
func (m *mariadb) login(userName, password string) result {
	return runCmd(withEnv(m.env, "MYSQL_PWD="+password), "", false, time.Minute, "mariadb", "--no-defaults",
		"--protocol=TCP", "--host=127.0.0.1", "--port="+strconv.Itoa(m.port), "--user="+userName,
		"--batch", "--skip-column-names", "--execute=SELECT CURRENT_USER()")
}

// rows reads "key<TAB>value" rows into a map.
func rows(lines []string) map[string]string {
	out := map[string]string{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, "\t"); ok {
			out[k] = v
		}
	}
	return out
}

func TestMariaDB(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	sec := &secrets{}
	m := startMariaDB(t, sec)
	native, err := verifier.Lookup(verifier.MySQLNative)
	g.Expect(err).NotTo(HaveOccurred())
	cases := credCases(t)
	name := func(i int) string { return fmt.Sprintf("c%02d", i) }

	want := map[string]string{}
	var script strings.Builder
	for i, c := range cases {
		v, err := native.Verifier(name(i), c.password)
		g.Expect(err).NotTo(HaveOccurred(), c.name)
		sec.add(c.password, v)
		want[name(i)] = v
		// Both spellings MariaDB documents for storing a hash.
		if i%2 == 0 {
			fmt.Fprintf(&script, "CREATE USER '%s'@'%%' IDENTIFIED BY PASSWORD '%s';\n", name(i), v)
		} else {
			fmt.Fprintf(&script, "CREATE USER '%s'@'%%' IDENTIFIED VIA mysql_native_password USING '%s';\n", name(i), v)
		}
	}
	// MariaDB accepts the hash in lower case too; credo emits upper case.
	lower, err := native.Verifier("lc", cases[0].password)
	g.Expect(err).NotTo(HaveOccurred())
	sec.add(strings.ToLower(lower))
	fmt.Fprintf(&script, "CREATE USER 'lc'@'%%' IDENTIFIED BY PASSWORD '%s';\n", strings.ToLower(lower))
	m.mustAdmin(t, "create users", script.String())

	t.Run("stored-as-is", func(t *testing.T) {
		g := NewWithT(t)
		got := rows(m.mustAdmin(t, "read mysql.user",
			"SELECT user, authentication_string FROM mysql.user WHERE user LIKE 'c%'"))
		for i, c := range cases {
			g.Expect(got[name(i)] == want[name(i)]).To(BeTrue(), "case %s: mysql.user holds another value than our verifier", c.name)
		}
	})

	t.Run("server-computes-the-same", func(t *testing.T) {
		// PASSWORD() over the password's bytes (a hex literal: no escaping,
		// no character set conversion) is the engine's own computation.
		g := NewWithT(t)
		var q strings.Builder
		q.WriteString("SELECT * FROM (")
		for i, c := range cases {
			if i > 0 {
				q.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&q, "SELECT '%s', PASSWORD(X'%s')", name(i), hex.EncodeToString([]byte(c.password)))
		}
		q.WriteString(") AS t;")
		got := rows(m.mustAdmin(t, "PASSWORD()", q.String()))
		for i, c := range cases {
			g.Expect(got[name(i)] == want[name(i)]).To(BeTrue(), "case %s: PASSWORD() differs from our verifier", c.name)
		}
	})

	t.Run("logs-in", func(t *testing.T) {
		g := NewWithT(t)
		right := each(len(cases), func(i int) result { return m.login(name(i), cases[i].password) })
		wrong := each(len(cases), func(i int) result { return m.login(name(i), cases[i].password+"x") })
		// No SASLprep here: the hash is over the bytes, so a string PostgreSQL
		// would treat as the same password is a different one to MariaDB.
		twin := each(len(cases), func(i int) result {
			if cases[i].twin == "" {
				return result{err: fmt.Errorf("no twin")}
			}
			sec.add(cases[i].twin)
			return m.login(name(i), cases[i].twin)
		})
		for i, c := range cases {
			r := right[i]
			g.Expect(r.ok()).To(BeTrue(), "case %s: login with the right password failed: %v %s", c.name, r.err, sec.scrub(r.stderr))
			g.Expect(strings.TrimSpace(r.stdout)).To(Equal(name(i)+"@%"), c.name)
			r = wrong[i]
			g.Expect(r.ok()).To(BeFalse(), "case %s: login with a wrong password succeeded", c.name)
			g.Expect(r.stderr).To(ContainSubstring("Access denied"), c.name)
			g.Expect(twin[i].ok()).To(BeFalse(), "case %s: the SASLprep twin logged in to MariaDB", c.name)
		}
		r := m.login("lc", cases[0].password)
		g.Expect(r.ok()).To(BeTrue(), "lower-case hash: %s", sec.scrub(r.stderr))
	})
}

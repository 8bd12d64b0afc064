//go:build linux

package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
	"golang.org/x/sys/unix"
)

// Each refusal is checked from outside and paired with a positive control,
// so that a sandbox that breaks everything cannot pass.

func TestWriteOutsideWorkspaceRefused(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	host := filepath.Join(st.outside, "host.txt")
	writeFile(t, host, "original")
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf("echo pwned > %q; echo new > %q/new; echo inside > inside.txt", host, st.outside))
	if b, _ := os.ReadFile(host); string(b) != "original" {
		t.Errorf("host file changed to %q; output %s", b, out.Output)
	}
	if _, err := os.Stat(filepath.Join(st.outside, "new")); !os.IsNotExist(err) {
		t.Errorf("new file created outside the workspace: %v", err)
	}
	// Positive control.
	if b, _ := os.ReadFile(filepath.Join(st.workspace, "inside.txt")); string(b) != "inside\n" {
		t.Errorf("write inside the workspace failed: %q; output %s", b, out.Output)
	}
}

func TestProtectedReadRefused(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf("cat %q/.ssh/id_rsa; echo \"ls=[$(ls -A %q/.ssh)]\"; cat %q/notes.txt", st.home, st.home, st.home))
	if strings.Contains(string(out.Output), "PRIVATE-KEY-CANARY") || !strings.Contains(string(out.Output), "ls=[]") {
		t.Errorf("protected key visible: %s", out.Output)
	}
	if !strings.Contains(string(out.Output), "public notes") {
		t.Errorf("positive control: unprotected file not readable: %s", out.Output)
	}
}

func TestExtraDenyRead(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	secret := filepath.Join(st.outside, "secret.env")
	writeFile(t, secret, "TOKEN=CANARY")
	out, err := st.sb.Run(t.Context(), sandbox.Spec{Command: "cat " + secret + "; echo done", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, ExtraDenyRead: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out.Output), "CANARY") || !strings.Contains(string(out.Output), "done") {
		t.Errorf("output %s", out.Output)
	}
	// A missing deny path must leave no placeholder behind.
	missing := filepath.Join(st.outside, "missing.env")
	if _, err := st.sb.Run(t.Context(), sandbox.Spec{Command: "true", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, ExtraDenyRead: []string{missing}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(missing); !os.IsNotExist(err) {
		t.Errorf("placeholder left at %s: %v", missing, err)
	}
}

func TestNetworkNoneRefusesLoopback(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tcp.Close() })
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = udp.Close() })
	tport := tcp.Addr().(*net.TCPAddr).Port
	uport := udp.LocalAddr().(*net.UDPAddr).Port
	cmd := fmt.Sprintf("echo hi > /dev/tcp/127.0.0.1/%d; echo tcp=$?; echo hi > /dev/udp/127.0.0.1/%d; echo udp=$?", tport, uport)

	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
			accepted <- struct{}{}
		}
	}()
	gotUDP := func() bool {
		_ = udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, _, err := udp.ReadFrom(make([]byte, 16))
		return err == nil
	}

	out := st.sh(t, sandbox.NetworkNone, cmd)
	if gotUDP() {
		t.Errorf("UDP datagram arrived under network none; output %s", out.Output)
	}
	select {
	case <-accepted:
		t.Errorf("TCP connection arrived under network none; output %s", out.Output)
	default:
	}
	// Positive control: the same command under network open reaches both.
	out = st.sh(t, sandbox.NetworkOpen, cmd)
	if !gotUDP() {
		t.Errorf("positive control: no UDP datagram under network open; output %s", out.Output)
	}
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Errorf("positive control: no TCP connection under network open; output %s", out.Output)
	}
}

func TestUnixSocketRefused(t *testing.T) {
	t.Parallel()
	for _, n := range []sandbox.Network{sandbox.NetworkNone, sandbox.NetworkOpen} {
		st := newSetup(t)
		sock := filepath.Join(st.outside, "s.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		out, err := st.sb.Run(t.Context(), sandbox.Spec{Argv: []string{os.Args[0], "helper", "connect-unix", sock}, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Network: n})
		if err != nil {
			t.Fatal(err)
		}
		if out.ExitCode == 0 {
			t.Errorf("%s: helper connected: %s", n, out.Output)
		}
		// Positive control: the same helper, unsandboxed, connects.
		if b, err := exec.Command(os.Args[0], "helper", "connect-unix", sock).CombinedOutput(); err != nil {
			t.Fatalf("positive control: %v: %s", err, b)
		}
		if c, err := l.Accept(); err == nil {
			_ = c.Close()
		}
		if ul, ok := l.(*net.UnixListener); ok {
			_ = ul.SetDeadline(time.Now().Add(100 * time.Millisecond))
		}
		if c, err := l.Accept(); err == nil {
			_ = c.Close()
			t.Errorf("%s: unix socket connected; output %s", n, out.Output)
		}
		if ul, ok := l.(*net.UnixListener); ok {
			_ = ul.SetDeadline(time.Time{})
		}
	}
}

func TestMetadataChangesRefused(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	host := filepath.Join(st.outside, "meta.txt")
	writeFile(t, host, "x")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(host, old, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(host)
	devBefore, _ := os.Stat("/dev/null")
	writeFile(t, filepath.Join(st.workspace, "script.sh"), "#!/bin/sh\n")
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf(
		"chmod 600 %[1]q; chown $(id -u):$(id -g) %[1]q; touch -d 2020-01-01 %[1]q; %[2]q helper setxattr %[1]q;"+
			"chmod 666 /dev/null; chmod +x script.sh", host, os.Args[0]))
	after, _ := os.Stat(host)
	if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("host file metadata changed: %v %v -> %v %v; output %s", before.Mode(), before.ModTime(), after.Mode(), after.ModTime(), out.Output)
	}
	if x, _ := getxattr(host); x != "" {
		t.Errorf("xattr set on host file: %q", x)
	}
	// chmod 666 asks for no change, so a broken sandbox cannot damage the
	// host's /dev/null, but a successful chmod still moves the ctime.
	devAfter, _ := os.Stat("/dev/null")
	if ctime(devAfter) != ctime(devBefore) {
		t.Errorf("host /dev/null metadata changed (ctime); output %s", out.Output)
	}
	// Positive control: chmod inside the workspace works.
	if fi, _ := os.Stat(filepath.Join(st.workspace, "script.sh")); fi.Mode()&0o100 == 0 {
		t.Errorf("positive control: chmod +x in workspace failed; output %s", out.Output)
	}
}

func TestRemountAndUnshareRefused(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	host := filepath.Join(st.outside, "host.txt")
	writeFile(t, host, "original")
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf(
		"mount -o remount,rw / 2>&1; echo remount=$?; mount -t tmpfs none %[1]q 2>&1; echo mount=$?;"+
			"unshare -U true 2>&1; echo unshare_user=$?; unshare -rm true 2>&1; echo unshare_root=$?; unshare -n true 2>&1; echo unshare_net=$?;"+
			"echo pwned > %[2]q; echo done", st.outside, host))
	s := string(out.Output)
	for _, want := range []string{"remount=", "mount=", "unshare_user=", "unshare_root=", "unshare_net="} {
		if strings.Contains(s, want+"0\n") {
			t.Errorf("%s succeeded: %s", strings.TrimSuffix(want, "="), s)
		}
	}
	if b, _ := os.ReadFile(host); string(b) != "original" {
		t.Errorf("host file changed after remount attempts: %q", b)
	}
	if !strings.Contains(s, "done") {
		t.Errorf("positive control: command did not run to the end: %s", s)
	}
}

func TestEnvironmentAllowlist(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-canary")
	t.Setenv("AOS_SECRET", "canary")
	st := newSetup(t)
	out := st.sh(t, sandbox.NetworkNone, "env")
	s := string(out.Output)
	if strings.Contains(s, "ANTHROPIC_API_KEY") || strings.Contains(s, "canary") {
		t.Errorf("worker env leaked: %s", s)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR", "TERM"} {
		if got[k] == "" {
			t.Errorf("positive control: %s missing from %s", k, s)
		}
	}
	if got["HOME"] == st.home || got["HOME"] == os.Getenv("HOME") {
		t.Errorf("HOME is the real home: %s", got["HOME"])
	}
}

func TestExitCodesAndSetupErrors(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	for _, c := range []struct {
		cmd  string
		code int
	}{{"true", 0}, {"exit 1", 1}, {"exit 42", 42}} {
		if out := st.sh(t, sandbox.NetworkNone, c.cmd); out.ExitCode != c.code {
			t.Errorf("%q: exit %d, want %d", c.cmd, out.ExitCode, c.code)
		}
	}
	// bwrap exits 1 for its own failures too; the status fd tells them apart.
	_, err := st.sb.Run(t.Context(), sandbox.Spec{Argv: []string{"/nonexistent/binary"}, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home})
	var se *sandbox.SetupError
	if !asErr(err, &se) {
		t.Fatalf("missing binary: err %v, want *SetupError", err)
	}
}

// TestGlobalSysctlsUnwritable: as root the sandbox uid is host uid 0, and
// sysctl permission checks compare uids, so only a read-only /proc stops
// a write to kernel.core_pattern (a host escape). The helper opens for
// writing and never writes, so a broken sandbox changes nothing.
func TestGlobalSysctlsUnwritable(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	writeFile(t, filepath.Join(st.workspace, "mine"), "x")
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"/proc/sys/kernel/core_pattern", false},
		{"/proc/sys/kernel/hostname", false},
		{"/proc/sys/vm/drop_caches", false},
		{filepath.Join(st.workspace, "mine"), true}, // positive control
	} {
		out, err := st.sb.Run(t.Context(), sandbox.Spec{Argv: []string{os.Args[0], "helper", "open-write", c.path}, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home})
		if err != nil {
			t.Fatal(err)
		}
		if (out.ExitCode == 0) != c.ok {
			t.Errorf("%s: exit %d, want ok=%v: %s", c.path, out.ExitCode, c.ok, out.Output)
		}
	}
}

// TestNoInheritedDescriptors: a descriptor the worker holds without
// close-on-exec (as ones inherited from its parent are) must not reach
// the command.
func TestNoInheritedDescriptors(t *testing.T) {
	st := newSetup(t)
	secret := filepath.Join(st.outside, "fd-secret")
	writeFile(t, secret, "FD-CANARY")
	fd, err := unix.Open(secret, unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf("cat <&%d; echo ---; exec /bin/ls /proc/self/fd", fd))
	if strings.Contains(string(out.Output), "FD-CANARY") {
		t.Errorf("inherited descriptor readable: %s", out.Output)
	}
	_, list, ok := strings.Cut(string(out.Output), "---\n")
	if !ok {
		t.Fatalf("output %q", out.Output)
	}
	// 0-2 are stdio; 3 is ls's own handle on /proc/self/fd.
	if got := strings.Fields(list); strings.Join(got, " ") != "0 1 2 3" {
		t.Errorf("descriptors in the sandbox: %v", got)
	}
}

// TestSetIDBitsRefused: a setuid file in the workspace would run as the
// worker's user (root, when aos is root) if anyone on the host ran it.
func TestSetIDBitsRefused(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	out := st.sh(t, sandbox.NetworkNone, "echo '#!/bin/sh' > f; chmod 755 f; chmod u+s f; chmod g+s f; install -m 4755 f g; mkdir -m 2755 d; cp -p f h; chmod 700 h; echo done")
	if !strings.Contains(string(out.Output), "done") {
		t.Fatalf("output %s", out.Output)
	}
	for _, n := range []string{"f", "g", "h"} {
		fi, err := os.Stat(filepath.Join(st.workspace, n))
		if err != nil {
			continue // refused outright: fine
		}
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%s has mode %v; output %s", n, fi.Mode(), out.Output)
		}
	}
	// Positive control: ordinary modes still change.
	if fi, _ := os.Stat(filepath.Join(st.workspace, "h")); fi == nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("positive control: chmod 700 did not apply: %v", fi)
	}
}

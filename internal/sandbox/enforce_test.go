//go:build linux

package sandbox_test

import (
	"errors"
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
	// The home is hidden as a whole; allowing .ssh does not expose a
	// protected path, allowing notes.txt does expose that file.
	st.sb = newSandbox(t, sandbox.Config{HostHome: st.home, AllowRead: []string{filepath.Join(st.home, ".ssh"), filepath.Join(st.home, "notes.txt")}})
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf("cat %q/.ssh/id_rsa; echo \"ls=[$(ls -A %q/.ssh)]\"; cat %q/notes.txt", st.home, st.home, st.home))
	if strings.Contains(string(out.Output), "PRIVATE-KEY-CANARY") || !strings.Contains(string(out.Output), "ls=[]") {
		t.Errorf("protected key visible: %s", out.Output)
	}
	if !strings.Contains(string(out.Output), "public notes") {
		t.Errorf("positive control: allowed file not readable: %s", out.Output)
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

// listeners is a TCP and a UDP listener the test owns on ip, which
// record what reached them.
type listeners struct {
	tcp      net.Listener
	udp      net.PacketConn
	accepted chan struct{}
}

func listen(t *testing.T, ip string) *listeners {
	t.Helper()
	tcp, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tcp.Close() })
	udp, err := net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = udp.Close() })
	l := &listeners{tcp: tcp, udp: udp, accepted: make(chan struct{}, 16)}
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
			l.accepted <- struct{}{}
		}
	}()
	return l
}

// sendTo is a bash command sending to the listeners' ports on ip.
func (l *listeners) sendTo(ip string) string {
	return fmt.Sprintf("echo hi > /dev/tcp/%[1]s/%[2]d; echo tcp=$?; echo hi > /dev/udp/%[1]s/%[3]d; echo udp=$?;",
		ip, l.tcp.Addr().(*net.TCPAddr).Port, l.udp.LocalAddr().(*net.UDPAddr).Port)
}

// sendRepeatedly is sendTo with five datagrams 200 ms apart: slirp4netns
// ends with the command, so a single datagram still queued in it can be
// lost on a loaded machine (the positive control's flake); more sends also
// make the negative checks stricter.
func (l *listeners) sendRepeatedly(ip string) string {
	return l.sendTo(ip) + fmt.Sprintf("for i in 1 2 3 4; do sleep 0.2; echo hi > /dev/udp/%s/%d; done;", ip, l.udp.LocalAddr().(*net.UDPAddr).Port)
}

// reached reports whether a TCP connection and a datagram arrived within
// wait; it returns as soon as both did.
func (l *listeners) reached(wait time.Duration) (tcp, udp bool) {
	buf := make([]byte, 16)
	for deadline := time.Now().Add(wait); time.Now().Before(deadline) && !(tcp && udp); {
		if !udp {
			_ = l.udp.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			_, _, err := l.udp.ReadFrom(buf)
			udp = err == nil
		}
		select {
		case <-l.accepted:
			tcp = true
		case <-time.After(time.Millisecond):
		}
	}
	return tcp, udp
}

// hostAddress is a non-loopback IPv4 address of this host, or "".
func hostAddress() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestNetworkNoHostLoopback: under network none and open alike, TCP and
// UDP to listeners the test owns on the host's 127.0.0.1 arrive nowhere
// (under open also through slirp's gateway address 10.0.2.2, which would
// map to it). Positive controls: the same command unsandboxed reaches
// them; under open, a listener on the host's own non-loopback address is
// reached (a real outbound connection through the NAT) and a default
// route exists; under none, that listener is not reached.
func TestNetworkNoHostLoopback(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	lo := listen(t, "127.0.0.1")
	toLo := lo.sendTo("127.0.0.1") + lo.sendTo("10.0.2.2")
	if b, err := exec.Command("bash", "-c", lo.sendTo("127.0.0.1")).CombinedOutput(); err != nil {
		t.Fatalf("unsandboxed control: %v %s", err, b)
	}
	if tcp, udp := lo.reached(5 * time.Second); !tcp || !udp {
		t.Fatalf("unsandboxed control did not reach the listeners: tcp=%v udp=%v", tcp, udp)
	}
	for _, n := range networks(t) {
		out := st.sh(t, n, toLo+"ip route 2>&1 || cat /proc/net/route")
		if tcp, udp := lo.reached(300 * time.Millisecond); tcp || udp {
			t.Errorf("%s: host loopback reached (tcp=%v udp=%v); output %s", n, tcp, udp, out.Output)
		}
		hasRoute := strings.Contains(string(out.Output), "default") || strings.Contains(string(out.Output), "00000000")
		if hasRoute != (n == sandbox.NetworkOpen) {
			t.Errorf("%s: default route %v; output %s", n, hasRoute, out.Output)
		}
	}
	ip := hostAddress()
	if ip == "" {
		t.Log("no non-loopback IPv4 address on this host: outbound control limited to the default route")
		return
	}
	ext := listen(t, ip)
	for _, n := range networks(t) {
		out := st.sh(t, n, ext.sendRepeatedly(ip))
		want := n == sandbox.NetworkOpen
		wait := 300 * time.Millisecond // Run returned: its slirp4netns is gone
		if want {
			wait = 5 * time.Second
		}
		if tcp, udp := ext.reached(wait); tcp != want || udp != want {
			t.Errorf("%s: host address %s reached tcp=%v udp=%v, want %v; output %s", n, ip, tcp, udp, want, out.Output)
		}
	}
}

func TestUnixSocketRefused(t *testing.T) {
	t.Parallel()
	for _, n := range networks(t) {
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
	// The process environment is what is tested: what a sandboxed child could inherit from the worker.
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
	// bwrap exits 1 for its own failures too; the status fd tells them
	// apart. A missing program is the command's failure (prlimit, which
	// applies the limits inside, cannot exec it), like bash's 127.
	out, err := st.sb.Run(t.Context(), sandbox.Spec{Argv: []string{"/nonexistent/binary"}, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home})
	if err != nil || out.ExitCode == 0 || !strings.Contains(string(out.Output), "/nonexistent/binary") {
		t.Fatalf("missing binary: %+v, %v", out, err)
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

// TestOpenNetworkFailsClosed: without a working slirp4netns, a network
// open command does not run at all (no fallback to the host network).
func TestOpenNetworkFailsClosed(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	st.sb = newSandbox(t, sandbox.Config{HostHome: st.home, SlirpPath: "/nonexistent/slirp4netns"})
	_, err := st.sb.Run(t.Context(), sandbox.Spec{Command: "touch ran", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Network: sandbox.NetworkOpen})
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("err %v, want *UnavailableError", err)
	}
	if _, err := os.Stat(filepath.Join(st.workspace, "ran")); !os.IsNotExist(err) {
		t.Errorf("the command ran without its network namespace being set up")
	}
	// Positive control: network none still works with this sandbox.
	if out := st.sh(t, sandbox.NetworkNone, "touch ran"); out.ExitCode != 0 {
		t.Errorf("positive control: %+v", out)
	}
}

// TestListenUnderOpen: with network open, seccomp refuses listen unless
// Spec.Listen is set; with it, a connection from inside the sandbox to
// its own 127.0.0.1 listener succeeds. Under network none listening is
// always allowed.
func TestListenUnderOpen(t *testing.T) {
	t.Parallel()
	if !openNetworkOK() {
		t.Skip("network open unavailable (/dev/net/tun)")
	}
	st := newSetup(t)
	const script = `use IO::Socket::INET; my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1:0", Listen => 1) or die "listen: $!\n";` +
		` my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:" . $l->sockport) or die "connect: $!\n"; $l->accept or die "accept: $!\n"; print "served\n";`
	for _, c := range []struct {
		network sandbox.Network
		listen  bool
		want    string
	}{{sandbox.NetworkOpen, false, "listen: Operation not permitted"}, {sandbox.NetworkOpen, true, "served"}, {sandbox.NetworkNone, false, "served"}} {
		out, err := st.sb.Run(t.Context(), sandbox.Spec{Argv: []string{"/usr/bin/perl", "-e", script}, Workspace: st.workspace,
			TmpDir: st.run.TmpDir, Home: st.run.Home, Network: c.network, Listen: c.listen})
		if err != nil {
			t.Fatalf("%s listen=%v: %v", c.network, c.listen, err)
		}
		if got := strings.TrimSpace(string(out.Output)); got != c.want {
			t.Errorf("%s listen=%v: output %q, want %q", c.network, c.listen, got, c.want)
		}
	}
}

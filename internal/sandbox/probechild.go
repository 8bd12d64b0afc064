//go:build linux

package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ProbeChildMain is the inside half of the canary probe. The binary named
// by Config.ProbeCommand must call it with the remaining arguments (the aos
// binary does so for `aos sandbox probe-child`; test binaries do it from
// TestMain). It tries every escape, prints one result line and returns the
// process exit code.
func ProbeChildMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "probe-child: want one JSON argument")
		return 2
	}
	var a probeArgs
	if err := json.Unmarshal([]byte(args[0]), &a); err != nil {
		fmt.Fprintln(os.Stderr, "probe-child:", err)
		return 2
	}
	checks := probeInside(a)
	if a.Network == NetworkOpen {
		checks = probeOpenInside(a)
	}
	js, _ := json.Marshal(checks)
	fmt.Println(probeResultPrefix + string(js))
	return 0
}

func probeInside(a probeArgs) []Check {
	var cs []Check
	refused := func(name string, err error, what string) {
		c := Check{Name: name, OK: err != nil, Detail: what + ": allowed"}
		if err != nil {
			c.Detail = what + ": " + err.Error()
		}
		cs = append(cs, c)
	}
	allowed := func(name string, err error, what string) {
		c := Check{Name: name, OK: err == nil, Detail: what + ": ok"}
		if err != nil {
			c.Detail = what + ": " + err.Error()
		}
		cs = append(cs, c)
	}

	// Positive controls: a sandbox that breaks everything must not pass.
	allowed("workspace_writable", os.WriteFile(filepath.Join(a.Workspace, "probe"), []byte("x"), 0o644), "write in workspace")
	allowed("tmpdir_writable", os.WriteFile(filepath.Join(os.Getenv("TMPDIR"), "probe"), []byte("x"), 0o644), "write in TMPDIR")
	allowed("dev_null_usable", os.WriteFile("/dev/null", []byte("x"), 0o644), "write /dev/null")

	setuid := filepath.Join(a.Workspace, "setuid")
	if err := os.WriteFile(setuid, []byte("#!/bin/sh\n"), 0o755); err == nil {
		allowed("chmod_workspace_allowed", unix.Chmod(setuid, 0o700), "chmod 0700 in workspace")
		refused("setuid_chmod_refused", unix.Chmod(setuid, 0o4755), "chmod 4755 in workspace")
		refused("setgid_chmod_refused", unix.Fchmodat(unix.AT_FDCWD, setuid, 0o2755, 0), "fchmodat 2755 in workspace")
		fd, err := unix.Open(filepath.Join(a.Workspace, "setuid-new"), unix.O_CREAT|unix.O_WRONLY, 0o4755)
		if err == nil {
			_ = unix.Close(fd)
		}
		refused("setuid_create_refused", err, "open(O_CREAT, 04755) in workspace")
	}
	refused("write_outside_refused", os.WriteFile(a.Outside, []byte("x"), 0o644), "create "+a.Outside)
	refused("overwrite_host_file_refused", openWrite(a.Canary), "open "+a.Canary+" for writing")
	refused("write_etc_refused", os.WriteFile("/etc/aos-probe", []byte("x"), 0o644), "create /etc/aos-probe")
	// Opened for writing but never written: harmless even when allowed.
	refused("proc_sys_readonly", openWrite("/proc/sys/kernel/core_pattern"), "open /proc/sys/kernel/core_pattern for writing")
	refused("sysrq_trigger_readonly", openWrite("/proc/sysrq-trigger"), "open /proc/sysrq-trigger for writing")

	b, err := os.ReadFile(filepath.Join(a.Protected, "secret"))
	cs = append(cs, Check{Name: "protected_dir_unreadable", OK: !strings.Contains(string(b), a.Secret), Detail: fmt.Sprintf("read: %v", err)})
	b, err = os.ReadFile(a.ProtectedFile)
	cs = append(cs, Check{Name: "protected_file_unreadable", OK: !strings.Contains(string(b), a.Secret), Detail: fmt.Sprintf("read: %v", err)})

	// Each attempt asks for no real change (same mode, same owner, same
	// times), so that even a broken sandbox does not damage the host, yet
	// each needs ownership or a capability, and only succeeds when
	// confinement is broken. The parent also compares ctimes from outside.
	for _, p := range []struct{ name, path string }{{"host_file", a.Canary}, {"protected", a.ProtectedFile}, {"dev_null", "/dev/null"}} {
		var st unix.Stat_t
		if err := unix.Stat(p.path, &st); err != nil {
			cs = append(cs, Check{Name: "stat_" + p.name, Detail: err.Error()})
			continue
		}
		refused("chmod_"+p.name+"_refused", unix.Chmod(p.path, st.Mode&0o7777), "chmod "+p.path)
		refused("chown_"+p.name+"_refused", os.Lchown(p.path, int(st.Uid), int(st.Gid)), "chown "+p.path)
		refused("utime_"+p.name+"_refused", unix.UtimesNano(p.path, []unix.Timespec{st.Atim, st.Mtim}), "utime "+p.path)
		refused("setxattr_"+p.name+"_refused", unix.Setxattr(p.path, "user.aos_probe", []byte("1"), 0), "setxattr "+p.path)
	}

	b, err = os.ReadFile(a.OtherRun)
	cs = append(cs, Check{Name: "other_run_unreadable", OK: !strings.Contains(string(b), a.Secret), Detail: fmt.Sprintf("read %s: %v", a.OtherRun, err)})
	cs = append(cs, homeHiddenCheck(a))
	cs = append(cs, limitsCheck(a.Limits))

	c, err := net.DialTimeout("tcp", a.TCP, 2*time.Second)
	if err == nil {
		_ = c.Close()
	}
	refused("tcp_loopback_refused", err, "connect "+a.TCP)
	// UDP has no handshake: the send may "succeed" into the empty network
	// namespace. The parent checks from outside that nothing arrived.
	if c, err := net.Dial("udp", a.UDP); err == nil {
		_, _ = c.Write([]byte("probe"))
		_ = c.Close()
	}
	c, err = net.DialTimeout("unix", a.Unix, 2*time.Second)
	if err == nil {
		_ = c.Close()
	}
	refused("unix_connect_refused", err, "connect "+a.Unix)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err == nil {
		_ = unix.Close(fd)
	}
	refused("unix_socket_refused", err, "socket(AF_UNIX)")
	refused("io_uring_refused", ioUringSetup(), "io_uring_setup")

	cs = append(cs, capsCheck())
	cs = append(cs, envCheck())
	refused("userns_refused", unshareUser(), "unshare(CLONE_NEWUSER)")
	refused("remount_refused", unix.Mount("none", "/", "", unix.MS_REMOUNT|unix.MS_BIND, ""), "remount / read-write")
	return cs
}

// homeHiddenCheck lists the owner's home: only the way to an allowed path
// (AllowRead, the probe binary) may show.
func homeHiddenCheck(a probeArgs) Check {
	c := Check{Name: "host_home_hidden", OK: true}
	if a.HostHome == "" {
		c.Detail = "no host home"
		return c
	}
	ents, err := os.ReadDir(a.HostHome)
	var shown []string
	for _, e := range ents {
		p := filepath.Join(a.HostHome, e.Name())
		ok := false
		for _, al := range a.HomeAllowed {
			if al != "" && (within(p, al) || within(al, p)) {
				ok = true
			}
		}
		if !ok {
			shown = append(shown, e.Name())
		}
	}
	c.OK = len(shown) == 0
	c.Detail = fmt.Sprintf("list %s: %v; unexpected entries: %v", a.HostHome, err, shown)
	return c
}

// limitsCheck reads the rlimits the command runs under: soft and hard
// must both be the configured limits (an unlimited one is not set, so it
// is not checked).
func limitsCheck(l Limits) Check {
	c := Check{Name: "rlimits_applied"}
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	want := map[string]int64{}
	for name, v := range map[string]int64{"Max processes": l.MaxProcs, "Max data size": l.MaxMemory, "Max file size": l.MaxFileSize, "Max open files": l.MaxOpenFiles} {
		if v > 0 {
			want[name] = v
		}
	}
	var bad []string
	for _, line := range strings.Split(string(b), "\n") {
		for name, v := range want {
			if !strings.HasPrefix(line, name+" ") {
				continue
			}
			f := strings.Fields(strings.TrimPrefix(line, name))
			exp := fmt.Sprint(v)
			if len(f) < 2 || f[0] != exp || f[1] != exp {
				bad = append(bad, fmt.Sprintf("%s=%v want %s", name, f, exp))
			}
			delete(want, name)
		}
	}
	for name := range want {
		bad = append(bad, name+" missing")
	}
	c.OK = len(bad) == 0
	c.Detail = fmt.Sprintf("mismatches: %v", bad)
	return c
}

// probeOpenInside tries the host's loopback services from a network-open
// sandbox, directly and through slirp's gateway address.
func probeOpenInside(a probeArgs) []Check {
	var cs []Check
	_, tport, _ := net.SplitHostPort(a.TCP)
	_, uport, _ := net.SplitHostPort(a.UDP)
	for _, host := range []string{"127.0.0.1", "10.0.2.2"} {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, tport), 2*time.Second)
		if err == nil {
			_ = c.Close()
		}
		cs = append(cs, Check{Name: "open_tcp_" + host + "_refused", OK: err != nil, Detail: fmt.Sprintf("connect: %v", err)})
		if c, err := net.Dial("udp", net.JoinHostPort(host, uport)); err == nil {
			_, _ = c.Write([]byte("probe")) // the parent checks nothing arrived
			_ = c.Close()
		}
	}
	// Positive control: outbound traffic has somewhere to go.
	b, err := os.ReadFile("/proc/net/route")
	route := false
	for _, l := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "00000000" {
			route = true
		}
	}
	cs = append(cs, Check{Name: "open_default_route", OK: route, Detail: fmt.Sprintf("/proc/net/route: %v %q", err, strings.TrimSpace(string(b)))})
	return cs
}

func openWrite(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err == nil {
		_ = f.Close()
	}
	return err
}

func ioUringSetup() error {
	var params [120]byte
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	if errno != 0 {
		return errno
	}
	_ = unix.Close(int(fd))
	return nil
}

// unshareUser tries a new user namespace on a locked thread that is never
// unlocked, so a success cannot leak into other goroutines.
func unshareUser() error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ch <- unix.Unshare(unix.CLONE_NEWUSER)
	}()
	return <-ch
}

func capsCheck() Check {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Check{Name: "capabilities_zero", Detail: err.Error()}
	}
	defer func() { _ = f.Close() }()
	var nonzero []string
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.HasPrefix(k, "Cap") {
			seen++
			if strings.Trim(strings.TrimSpace(v), "0") != "" {
				nonzero = append(nonzero, k+"="+strings.TrimSpace(v))
			}
		}
	}
	return Check{Name: "capabilities_zero", OK: seen >= 3 && len(nonzero) == 0, Detail: fmt.Sprintf("non-zero: %v", nonzero)}
}

func envCheck() Check {
	var extra []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "LANG", "TMPDIR", "TERM", "PWD": // bwrap sets PWD for --chdir
		default:
			extra = append(extra, k)
		}
	}
	return Check{Name: "env_allowlisted", OK: len(extra) == 0, Detail: fmt.Sprintf("unexpected: %v", extra)}
}

// ownerAndCtime formats a file's uid:gid and ctime; a successful chmod,
// chown, utime or setxattr changes the ctime even when it changes nothing
// else.
func ownerAndCtime(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d ctime=%d.%09d", st.Uid, st.Gid, st.Ctim.Sec, st.Ctim.Nsec)
	}
	return "?"
}

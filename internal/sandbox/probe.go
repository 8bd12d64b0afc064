package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/tmpdirs"
)

// Check is one observation of the canary probe.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Report is the canary probe's result.
type Report struct {
	Checks   []Check       `json:"checks"`
	Duration time.Duration `json:"duration"`
}

// OK reports whether every check passed (and there was at least one).
func (r Report) OK() bool {
	if len(r.Checks) == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// Failed lists the names of the failed checks.
func (r Report) Failed() []string {
	var f []string
	for _, c := range r.Checks {
		if !c.OK {
			f = append(f, c.Name)
		}
	}
	return f
}

// probeResultPrefix marks the child's result line in the output.
const probeResultPrefix = "AOS-PROBE-RESULT "

// probeArgs tells the inside half what to try.
type probeArgs struct {
	Workspace     string `json:"workspace"`
	Outside       string `json:"outside"`
	Canary        string `json:"canary"`
	Protected     string `json:"protected"`
	ProtectedFile string `json:"protectedFile"`
	Secret        string `json:"secret"`
	TCP           string `json:"tcp"`
	UDP           string `json:"udp"`
	Unix          string `json:"unix"`
	HostHome      string `json:"hostHome"`
	OtherRun      string `json:"otherRun"`
	Limits        Limits `json:"limits"`
	// Network is NetworkOpen for the network-open probe, which only
	// tries the network.
	Network Network `json:"network,omitempty"`
	// HomeAllowed are the paths that may show through the hidden home.
	HomeAllowed []string `json:"homeAllowed"`
}

// Probe runs the canary probe: a real sandboxed child (ProbeChildMain)
// tries each escape, and the parent checks from outside that nothing
// happened. A passing probe admits commands; a failing one revokes
// admission. The error is an *UnavailableError naming the failed checks.
func (s *Sandbox) Probe(ctx context.Context) (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.probeLocked(ctx)
	if err == nil {
		r, err = s.probeWarmLocked(ctx, r)
	}
	s.admitted, s.warmAdmitted = err == nil, err == nil
	s.openAdmitted = false
	if err == nil && s.cfg.SlirpPath != "" && tunUsable() == nil {
		// Where network open can work, prove its confinement too. A
		// failure here refuses open commands only (and fails the report).
		start := time.Now().Add(-r.Duration)
		if oerr := s.probeOpenLocked(ctx, &r); oerr != nil {
			r.Checks = append(r.Checks, Check{Name: "open_network_available", Detail: oerr.Error()})
		}
		r, err = s.finish(r, start)
		s.openAdmitted = err == nil
	}
	return r, err
}

// probeOpenLocked runs the probe child under NetworkOpen: TCP and UDP to
// listeners the parent owns on 127.0.0.1, directly and through slirp's
// gateway address 10.0.2.2, must arrive nowhere, while the command does
// have a default route (positive control). It appends its checks to r.
func (s *Sandbox) probeOpenLocked(ctx context.Context, r *Report) error {
	add := func(name string, ok bool, detail string) {
		r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: detail})
	}
	ws, err := os.MkdirTemp("", tmpdirs.ProbeOpen+"*")
	if err != nil {
		return fmt.Errorf("sandbox: probe dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(ws) }()
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return fmt.Errorf("sandbox: probe dir: %w", err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("sandbox: probe tcp listener: %w", err)
	}
	defer func() { _ = tcp.Close() }()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("sandbox: probe udp listener: %w", err)
	}
	defer func() { _ = udp.Close() }()
	a := probeArgs{Network: NetworkOpen, TCP: tcp.Addr().String(), UDP: udp.LocalAddr().String()}
	js, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("sandbox: probe args: %w", err)
	}
	out, err := s.run(ctx, Spec{Argv: append(append([]string{}, s.cfg.ProbeCommand...), string(js)),
		Workspace: ws, Network: NetworkOpen, Timeout: 30 * time.Second, Expose: []string{ws}})
	if err != nil {
		var ue *UnavailableError
		if errors.As(err, &ue) {
			return err
		}
		add("open_sandbox_starts", false, err.Error())
		return nil
	}
	inside, ok := probeReport(out)
	if !ok {
		add("open_probe_child_report", false, fmt.Sprintf("probe child (exit %d) printed no report: %s", out.ExitCode, lastLines(out.Output, 3)))
		return nil
	}
	r.Checks = append(r.Checks, inside...)
	add("open_tcp_listener_untouched", !accepted(tcp), a.TCP)
	add("open_udp_listener_untouched", !received(udp), a.UDP)
	return nil
}

// probeReport finds the probe child's result line in its output.
func probeReport(out Outcome) ([]Check, bool) {
	var inside []Check
	for _, line := range bytes.Split(out.Output, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte(probeResultPrefix)); ok {
			if err := json.Unmarshal(rest, &inside); err != nil {
				inside = nil
			}
		}
	}
	return inside, len(inside) > 0
}

func (s *Sandbox) probeLocked(ctx context.Context) (Report, error) {
	return s.probeWith(ctx, s.run, "")
}

// probeWarmLocked runs the probe again with its child in a warm sandbox
// (Warm), whose checks are appended to r as "warm_<name>": the shell
// tool's commands run there, so its confinement must be proven too.
func (s *Sandbox) probeWarmLocked(ctx context.Context, r Report) (Report, error) {
	start := time.Now().Add(-r.Duration)
	w := s.NewWarm()
	defer w.Close()
	run := func(ctx context.Context, spec Spec) (Outcome, error) {
		// The program too, so that the warm path is taken even when aos
		// lives in a hidden home.
		spec.Expose = append(spec.Expose, s.cfg.ProbeCommand[0])
		w.mu.Lock()
		defer w.mu.Unlock()
		out, err := w.runLocked(ctx, spec)
		if err == nil && w.starts != 1 {
			return out, &SetupError{Message: "the warm probe did not run in a warm sandbox"}
		}
		return out, err
	}
	wr, err := s.probeWith(ctx, run, "warm_")
	var ue *UnavailableError
	if errors.As(err, &ue) && len(wr.Checks) == 0 {
		return r, err
	}
	r.Checks = append(r.Checks, wr.Checks...)
	return s.finish(r, start)
}

// probeWith runs the probe with run starting its child; prefix is put
// before each check's name.
func (s *Sandbox) probeWith(ctx context.Context, run func(context.Context, Spec) (Outcome, error), prefix string) (Report, error) {
	start := time.Now()
	var r Report
	add := func(name string, ok bool, detail string) {
		r.Checks = append(r.Checks, Check{Name: prefix + name, OK: ok, Detail: detail})
	}
	if s.cfg.BwrapPath == "" {
		add("bwrap_present", false, "bwrap not found in PATH")
		r.Duration = time.Since(start)
		return r, errNoBwrap()
	}
	add("bwrap_present", true, s.cfg.BwrapPath)

	root, err := os.MkdirTemp("", tmpdirs.Probe+"*")
	if err != nil {
		return r, fmt.Errorf("sandbox: probe dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return r, fmt.Errorf("sandbox: probe dir: %w", err)
	}
	a := probeArgs{
		Workspace:     filepath.Join(root, "ws"),
		Outside:       filepath.Join(root, "outside-new"),
		Canary:        filepath.Join(root, "canary"),
		Protected:     filepath.Join(root, "protected"),
		ProtectedFile: filepath.Join(root, "protected-file"),
		Secret:        "aos-canary-secret",
		Unix:          filepath.Join(root, "sock"),
		Limits:        s.cfg.Limits,
		HomeAllowed:   append(append([]string{s.cfg.ProbeCommand[0], s.cfg.PrlimitPath}, s.cfg.AllowRead...), root),
		HostHome:      s.cfg.HostHome,
		OtherRun:      filepath.Join(root, "runs", runDirPrefix+"other", "home", "secret"),
	}
	// The probe's TMPDIR and HOME are laid out as RunDirs makes them, next
	// to another run's, whose files must stay unreadable.
	runs := filepath.Join(root, "runs")
	if err := os.Mkdir(runs, 0o700); err != nil {
		return r, fmt.Errorf("sandbox: probe dir: %w", err)
	}
	mine, err := RunDirs(runs, "probe")
	if err != nil {
		return r, err
	}
	if _, err := RunDirs(runs, "other"); err != nil {
		return r, err
	}
	for _, d := range []string{a.Workspace, a.Protected} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return r, fmt.Errorf("sandbox: probe dir: %w", err)
		}
	}
	for _, f := range []string{a.Canary, filepath.Join(a.Protected, "secret"), a.ProtectedFile, a.OtherRun} {
		if err := os.WriteFile(f, []byte(a.Secret), 0o644); err != nil {
			return r, fmt.Errorf("sandbox: probe canary: %w", err)
		}
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(a.Canary, old, old); err != nil {
		return r, fmt.Errorf("sandbox: probe canary: %w", err)
	}
	before, err := snapshot(a.Canary)
	if err != nil {
		return r, err
	}
	devBefore, _ := snapshot("/dev/null")

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, fmt.Errorf("sandbox: probe tcp listener: %w", err)
	}
	defer func() { _ = tcp.Close() }()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return r, fmt.Errorf("sandbox: probe udp listener: %w", err)
	}
	defer func() { _ = udp.Close() }()
	ux, err := listenUnix(a.Unix)
	if err != nil {
		return r, fmt.Errorf("sandbox: probe unix listener: %w", err)
	}
	defer func() { _ = ux.Close() }()
	a.TCP, a.UDP = tcp.Addr().String(), udp.LocalAddr().String()

	js, err := json.Marshal(a)
	if err != nil {
		return r, fmt.Errorf("sandbox: probe args: %w", err)
	}
	argv := append(append([]string{}, s.cfg.ProbeCommand...), string(js))
	out, err := run(ctx, Spec{
		Argv: argv, Workspace: a.Workspace, TmpDir: mine.TmpDir, Home: mine.Home, Network: NetworkNone, Timeout: 30 * time.Second,
		ExtraDenyRead: []string{a.Protected, a.ProtectedFile},
		Expose:        []string{root}, // the canaries, even when TMPDIR is inside the hidden home
	})
	if err != nil {
		var ue *UnavailableError
		if errors.As(err, &ue) {
			return r, err
		}
		add("sandbox_starts", false, err.Error())
		return s.finish(r, start)
	}
	add("sandbox_starts", true, "")
	inside, _ := probeReport(out)
	if len(inside) == 0 {
		add("probe_child_report", false, fmt.Sprintf("probe child (exit %d) printed no report: %s", out.ExitCode, lastLines(out.Output, 3)))
		return s.finish(r, start)
	}
	for _, c := range inside {
		add(c.Name, c.OK, c.Detail)
	}

	// From outside: nothing changed, nothing connected.
	after, err := snapshot(a.Canary)
	add("host_canary_unchanged", err == nil && after == before, fmt.Sprintf("before %s, after %s", before, after))
	if devBefore != "" {
		devAfter, _ := snapshot("/dev/null")
		add("host_dev_null_unchanged", devAfter == devBefore, fmt.Sprintf("before %s, after %s", devBefore, devAfter))
	}
	_, statErr := os.Lstat(a.Outside)
	add("host_no_new_file", os.IsNotExist(statErr), a.Outside)
	add("tcp_listener_untouched", !accepted(tcp), a.TCP)
	add("unix_listener_untouched", !accepted(ux), a.Unix)
	add("udp_listener_untouched", !received(udp), a.UDP)
	// Informational: where cgroups cannot be made, rlimits are all there
	// is (docs/SANDBOX.md, "Resource limits").
	add("limits_mechanism", true, limitsMechanism(s.cfg.CgroupRoot, s.cfg.Limits))
	return s.finish(r, start)
}

func (s *Sandbox) finish(r Report, start time.Time) (Report, error) {
	r.Duration = time.Since(start)
	if !r.OK() {
		return r, &UnavailableError{
			Reason: "sandbox probe failed: " + strings.Join(r.Failed(), ", "),
			Fix:    "run `aos sandbox check` for details; see docs/SANDBOX.md (troubleshooting)",
		}
	}
	return r, nil
}

// snapshot describes a file's content, mode, owner and times.
func snapshot(p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: stat %s: %w", p, err)
	}
	var content []byte
	if fi.Mode().IsRegular() {
		content, _ = os.ReadFile(p)
	}
	return fmt.Sprintf("%v %s %q %s", fi.Mode(), fi.ModTime().UTC().Format(time.RFC3339Nano), content, ownerAndCtime(fi)), nil
}

// accepted reports whether l has a pending connection.
func accepted(l net.Listener) bool {
	type deadliner interface{ SetDeadline(time.Time) error }
	if d, ok := l.(deadliner); ok {
		_ = d.SetDeadline(time.Now().Add(20 * time.Millisecond))
	}
	c, err := l.Accept()
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// received reports whether a datagram arrived on pc.
func received(pc net.PacketConn) bool {
	_ = pc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	buf := make([]byte, 64)
	_, _, err := pc.ReadFrom(buf)
	return err == nil
}

//go:build linux

package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mission is one mission of the soak: its own repository, data dir, HOME
// and model server, and the aos processes that ran it one after another.
type mission struct {
	h        *harness
	t        *testing.T
	dir      string
	repo     string // the owner's checkout: aos must never change it
	wtRoot   string // aos's worktree root (the default, beside the data dir)
	env      []string
	modelURL string
	id       string // the full mission id, from the timeline's first line

	procs   int
	kills   int
	claims  int // "(resumed: …)" lines the timeline has printed so far
	broken  bool
	orphans []string // processes that outlived a kill -9 of aos
	// logAtKill is log.txt once the last killed aos was reaped: a line
	// added later came from a process that outlived it.
	logAtKill []string
	history   []string
	final     *proc
}

// worktree is the mission's git worktree, where it works (docs/ENGINE.md,
// "Worktrees"): it exists from its setup/worktree_add step to the end of
// the mission.
func (m *mission) worktree() string { return filepath.Join(m.wtRoot, m.id) }

// branch is the mission's branch, which outlives its worktree.
func (m *mission) branch() string { return "aos/" + m.id[:min(8, len(m.id))] }

// workLog is log.txt in the mission's worktree while it exists, else on
// the mission's branch.
func (m *mission) workLog() ([]string, error) {
	if _, err := os.Stat(m.worktree()); err == nil {
		return readLines(filepath.Join(m.worktree(), "log.txt"))
	}
	return branchLines(m.repo, m.branch(), "log.txt")
}

func (m *mission) logf(format string, a ...any) {
	m.history = append(m.history, fmt.Sprintf(format, a...))
}

// newMission prepares a repository, a data dir and a model server.
func newMission(t *testing.T, h *harness) *mission {
	dir := t.TempDir()
	m := &mission{h: h, t: t, dir: dir, repo: filepath.Join(dir, "repo"), wtRoot: filepath.Join(dir, "aos-worktrees")}
	t.Cleanup(func() { killOrphans(dir) })
	for _, d := range []string{m.repo, m.wtRoot, filepath.Join(dir, "data"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"config.ini": "[soak]\nmode = slow\n", "README.md": "# soak\n\nA repository for aos's crash soak.\n"} {
		if err := os.WriteFile(filepath.Join(m.repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."},
		{"-c", "user.name=soak", "-c", "user.email=soak@aos.invalid", "commit", "-q", "-m", "soak: initial"}} {
		if _, err := git(m.repo, args...); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := startProc(t, h.bin, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home")},
		"dev", "model-server", "--script", h.script)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case line, ok := <-ms.lines:
		if !ok || !strings.HasPrefix(line, "http://127.0.0.1:") {
			t.Fatalf("model server printed %q, stderr %s", line, ms.stderr())
		}
		m.modelURL = line
	case <-time.After(60 * time.Second):
		t.Fatalf("model server printed no URL; stderr %s", ms.stderr())
	}
	go func() { // keep its pipe drained
		for range ms.lines {
		}
	}()
	m.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"AOS_DATA_DIR=" + filepath.Join(dir, "data"),
		"ANTHROPIC_BASE_URL=" + m.modelURL,
		"ANTHROPIC_API_KEY=soak-scripted-model-no-key",
		"LANG=C.UTF-8",
	}
	return m
}

// run drives the mission through plan: each landed kill is followed by
// aos resume, until a process ends on its own. It returns the outcome.
func (m *mission) run(ctx context.Context, plan []kill) (outcome, error) {
	args := []string{"run", "--project", m.repo, "--model", "script:soak", "--on-ask", "wait",
		"--criterion", "log.txt holds step-1 to step-6, once each, and three commits landed",
		"crash soak: append step-1 to step-6 to log.txt, write the notes, the report and the config, and commit three times"}
	for i := 0; ; i++ {
		var k *kill
		if i < len(plan) {
			k = &plan[i]
		}
		p, killed, err := m.process(ctx, args, k)
		if err != nil {
			return outcome{}, err
		}
		if m.id == "" {
			return outcome{}, fmt.Errorf("aos %s never printed the mission id (● mission ID); stdout:\n%s\nstderr:\n%s", args[0], tail(p.stdout(), 20), tail(p.stderr(), 20))
		}
		if !killed {
			m.final = p
			break
		}
		m.kills++
		m.afterKill()
		if m.h.cfg.brk == breakDoubleAppend && !m.broken {
			m.doubleAppend()
		}
		args = []string{"resume", m.id}
	}
	if m.h.cfg.brk == breakDoubleAppend && !m.broken && len(plan) > 0 {
		m.doubleAppend()
	}
	return collect(m.repo, m.worktree(), m.branch(), m.modelURL, finalStatus(m.final))
}

// doubleAppend is the deliberate break AOS_SOAK_BREAK=double-append: the
// harness itself repeats the last line of log.txt, as a replayed effect
// would, to show that the comparison catches it. It appends in the
// mission's worktree (after a kill); once the worktree is gone, it does
// nothing.
func (m *mission) doubleAppend() {
	lines, err := readLines(filepath.Join(m.worktree(), "log.txt"))
	if err != nil || len(lines) == 0 {
		return
	}
	f, err := os.OpenFile(filepath.Join(m.worktree(), "log.txt"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, lines[len(lines)-1])
	m.broken = true
	m.logf("BREAK: the harness appended %q again", lines[len(lines)-1])
}

// afterKill checks that nothing aos started outlived it (issue 11 finding
// 6): no process that names the mission's directory may be alive 5 s
// after the kill (the sandbox kills its jobs when aos dies; tearing down
// their namespaces can take a while on a loaded machine), and log.txt must
// not have grown since the kill. Survivors are killed.
func (m *mission) afterKill() {
	var left []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		left = orphans(m.dir, nil)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(25 * time.Millisecond) // polling /proc for processes to exit, with a deadline
	}
	if len(left) > 0 {
		m.logf("FINDING: %d process(es) outlived kill -9 of aos by 5 s: %s", len(left), strings.Join(left, "; "))
		m.orphans = append(m.orphans, left...)
		killOrphans(m.dir)
	}
	if now, _ := m.workLog(); len(now) != len(m.logAtKill) {
		m.logf("FINDING: log.txt changed after aos was killed: %q, then %q", m.logAtKill, now)
		m.orphans = append(m.orphans, fmt.Sprintf("%s: log.txt grew after the kill: %q → %q", m.id, m.logAtKill, now))
	}
}

// finalStatus reads the status from the timeline's last line ("■ done —
// …"), else the exit.
func finalStatus(p *proc) string {
	out := p.stdout()
	if i := strings.LastIndex(out, "■ "); i >= 0 {
		rest := out[i+len("■ "):]
		if j := strings.Index(rest, " — "); j >= 0 {
			return rest[:j]
		}
	}
	code := -1
	if st, err := p.wait(time.Second); err == nil && st != nil {
		code = st.ExitCode()
	}
	return fmt.Sprintf("exit %d without an end line (stderr: %s)", code, oneLine(p.stderr(), 300))
}

// process starts one aos process and supervises it: it answers questions,
// and kills the process when k's trigger fires. It returns whether the
// process was killed.
func (m *mission) process(ctx context.Context, args []string, k *kill) (*proc, bool, error) {
	w, err := newFSWatch(m.repo, m.wtRoot)
	if err != nil {
		return nil, false, err
	}
	defer w.Close()
	p, err := startProc(m.t, m.h.bin, m.env, args...)
	if err != nil {
		return nil, false, err
	}
	m.procs++
	s := &supervisor{m: m, p: p, k: k, asked: map[string]bool{}}
	killed, err := s.loop(ctx, w)
	if err != nil {
		p.kill()
		return p, false, fmt.Errorf("%s process %d (aos %s): %w\nstdout tail:\n%s\nstderr tail:\n%s", m.id, m.procs, args[0], err, tail(p.stdout(), 30), tail(p.stderr(), 10))
	}
	if _, err := p.wait(10 * time.Second); err != nil {
		return p, false, err
	}
	if killed {
		m.logAtKill, _ = m.workLog()
	}
	p.drain()
	m.claims = strings.Count(p.stdout(), "(resumed: replaying")
	if killed && !p.killedBySIGKILL() {
		// It ended on its own between the trigger and the signal.
		m.logf("process %d ended before the kill landed", m.procs)
		killed = false
	}
	return p, killed, nil
}

func tail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return "  " + strings.Join(ls, "\n  ")
}

// supervisor watches one process.
type supervisor struct {
	m     *mission
	p     *proc
	k     *kill
	asked map[string]bool

	lastArrow string
	armed     bool     // k's trigger may fire
	effectsOn killKind // the effect kind that fires the kill, "" for none
	skip      int
	timer     <-chan time.Time
	timerWhy  string
	modelTick *time.Ticker
	target    int // the model turn whose request fires a model kill
	shellTick *time.Ticker
	shellSeen map[string]bool // slow shell commands seen running
	why       string
}

func (s *supervisor) loop(ctx context.Context, w *fsWatch) (bool, error) {
	defer func() {
		for _, tk := range []*time.Ticker{s.modelTick, s.shellTick} {
			if tk != nil {
				tk.Stop()
			}
		}
	}()
	timeout := time.NewTimer(s.m.h.cfg.procTimeout)
	defer timeout.Stop()
	lines, events := s.p.lines, w.events
	claims := 0
	if s.m.id != "" && s.k != nil && !s.k.Kind.holding() {
		s.arm()
	}
	for {
		var tick, shellTick <-chan time.Time
		if s.modelTick != nil {
			tick = s.modelTick.C
		}
		if s.shellTick != nil {
			shellTick = s.shellTick.C
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-timeout.C:
			return false, fmt.Errorf("no end within %s (AOS_SOAK_PROC_TIMEOUT)", s.m.h.cfg.procTimeout)
		case <-s.p.done:
			return false, nil
		case line, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			if err := s.line(ctx, line, &claims); err != nil {
				return false, err
			}
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			s.effect(e)
		case <-s.timer:
			s.why = s.timerWhy
		case <-shellTick:
			s.slowShell()
		case <-tick:
			rs, err := requests(s.m.modelURL)
			if err == nil && slices.ContainsFunc(rs, func(r recorded) bool { return r.Turn == s.target }) {
				s.why = fmt.Sprintf("while model turn %d was in flight", s.target)
			}
		}
		if s.why != "" {
			if !s.p.kill() {
				return false, nil
			}
			s.m.logf("kill #%d (%s) of process %d %s (last started call: %s)", s.m.kills+1, s.k, s.m.procs, s.why, strings.TrimPrefix(s.lastArrow, "→ "))
			return true, nil
		}
	}
}

// slowShell fires a shell kill while a slow shell command of this
// mission runs in the sandbox: after the step's intent is journaled and
// before the command appends its line. A shell kill waits until the
// command has started; a sandbox kill fires as soon as its bwrap exists,
// while the sandbox is still being set up. The timeline's "→ shell" line
// is no trigger: on a loaded machine it can come after the append.
func (s *supervisor) slowShell() {
	for c, started := range sandboxed(s.m.dir, "; echo step-") {
		if s.shellSeen[c] || (s.k.Kind == killShell && !started) {
			continue
		}
		s.shellSeen[c] = true
		if s.skip > 0 {
			s.skip--
			continue
		}
		if s.k.Kind == killShell {
			s.why = "while the slow shell command " + strconv.Quote(c) + " ran"
		} else {
			s.why = "while the sandbox of " + strconv.Quote(c) + " was starting or running"
		}
		return
	}
}

// effect counts an effect toward an effect-triggered kill. An aos temp
// file fires a temp kill but counts toward no skip: each write makes one
// file effect, with a temp file before it only where aos writes one.
func (s *supervisor) effect(e effect) {
	if !s.armed || s.effectsOn == "" {
		return
	}
	switch {
	case e == effectTemp && s.effectsOn == killTemp:
		if s.skip == 0 {
			s.why = "right after a temp file appeared"
		}
		return
	case e == effectTemp:
		return
	case s.effectsOn == killEffect, killKind(e) == s.effectsOn, s.effectsOn == killTemp && e == effectFile:
	default:
		return
	}
	if s.skip > 0 {
		s.skip--
		return
	}
	s.why = "right after a " + string(e) + " effect"
}

// line reads one timeline line.
func (s *supervisor) line(ctx context.Context, line string, claims *int) error {
	switch {
	case strings.HasPrefix(line, "● mission "):
		if s.m.id == "" {
			s.m.id = strings.TrimSpace(strings.TrimPrefix(line, "● mission "))
			s.m.t.Logf("mission %s", s.m.id)
			if s.k != nil && !s.k.Kind.holding() {
				s.arm()
			}
			if s.k != nil && s.k.Kind.holding() {
				s.armHolding()
			}
		}
	case strings.HasPrefix(strings.TrimSpace(line), "→ "):
		s.lastArrow = strings.TrimSpace(line)

	case strings.Contains(line, "(resumed: replaying"):
		*claims++
		if *claims == s.m.claims+1 && s.k != nil && s.k.Kind.holding() {
			s.armHolding()
		}
	default:
		for _, verb := range []string{"aos answer ", "aos approve "} {
			if i := strings.Index(line, verb); i >= 0 {
				id := strings.Fields(line[i+len(verb):])[0]
				if !s.asked[id] {
					s.asked[id] = true
					return s.question(ctx, id)
				}
			}
		}
	}
	return nil
}

// arm enables an effect-triggered kill (question and answer kinds fall
// back to the first effect when no question comes first: questions are
// asked at resume, before any new effect).
func (s *supervisor) arm() {
	s.armed = true
	switch s.k.Kind {
	case killLog, killFile, killTemp, killCommit, killEffect:
		s.effectsOn, s.skip = s.k.Kind, s.k.Skip
	case killQuestion, killAnswer:
		s.effectsOn, s.skip = killEffect, 0
	}
}

// armHolding starts a random or model kill once the process holds the
// run (a resumed process may first wait for the dead one's lease).
func (s *supervisor) armHolding() {
	if s.armed {
		return
	}
	s.armed = true
	if s.k.Kind == killShell || s.k.Kind == killSandbox {
		s.skip = s.k.Skip
		s.shellSeen = map[string]bool{}
		s.shellTick = time.NewTicker(20 * time.Millisecond)
		return
	}
	if s.k.Kind == killModel {
		maxTurn := -1
		if rs, err := requests(s.m.modelURL); err == nil {
			for _, r := range rs {
				maxTurn = max(maxTurn, r.Turn)
			}
		}
		skip := s.k.Skip
		for _, t := range delayedTurns {
			if t > maxTurn {
				if skip == 0 {
					s.target = t
					s.modelTick = time.NewTicker(25 * time.Millisecond)
					return
				}
				skip--
			}
		}
		// No delayed turn left: a random kill instead.
	}
	d := time.Duration(s.k.Frac * float64(s.m.h.cleanTook))
	s.timer, s.timerWhy = time.After(d), fmt.Sprintf("at a random time (%s after it held the run)", d.Round(time.Millisecond))
}

// question answers a pending wait truthfully (or kills the process first
// when the plan says so).
func (s *supervisor) question(ctx context.Context, waitID string) error {
	if s.k != nil && s.k.Kind == killQuestion && s.armed {
		s.why = "while question " + waitID + " was pending"
		return nil
	}
	out, err := runQuick(ctx, s.m.h.bin, s.m.env, "waits", "--json")
	if err != nil {
		return err
	}
	var waits []struct {
		ID      string
		Kind    string
		Payload json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &waits); err != nil {
		return fmt.Errorf("aos waits --json: %w: %s", err, oneLine(out, 300))
	}
	i := slices.IndexFunc(waits, func(w struct {
		ID      string
		Kind    string
		Payload json.RawMessage
	}) bool {
		return w.ID == waitID
	})
	if i < 0 {
		return nil // resolved meanwhile
	}
	wt := waits[i]
	if wt.Kind == "approval" {
		s.m.logf("approval %s: approved", waitID)
		_, err := runQuick(ctx, s.m.h.bin, s.m.env, "approve", waitID)
		return err
	}
	var q struct {
		Text    string   `json:"text"`
		Options []string `json:"options"`
	}
	_ = json.Unmarshal(wt.Payload, &q)
	c, how, err := identify(s.m.h.calls, wt.Payload, s.lastArrow)
	if err != nil {
		return fmt.Errorf("question %s %q: %w", waitID, q.Text, err)
	}
	ran, err := tookEffect(s.m.worktree(), s.m.repo, c)
	if err != nil {
		return fmt.Errorf("ground truth of %s: %w", c, err)
	}
	say := ran
	if s.m.h.cfg.brk == breakLie {
		say = !ran
	}
	opt, err := pickOption(q.Options, say)
	if err != nil {
		return fmt.Errorf("question %s %q: %w", waitID, q.Text, err)
	}
	if _, err := runQuick(ctx, s.m.h.bin, s.m.env, "answer", waitID, opt); err != nil {
		if strings.Contains(err.Error(), "not pending") {
			return nil
		}
		return err
	}
	lie := ""
	if say != ran {
		lie = " (BREAK: a lie)"
	}
	s.m.logf("question %s about %s (found by %s; effect present: %v) → answered %q%s", waitID, c, how, ran, opt, lie)
	if s.k != nil && s.k.Kind == killAnswer {
		if s.k.Immediate {
			s.why = "right after answering " + waitID
		} else {
			s.effectsOn, s.skip = killEffect, 0
			s.timer, s.timerWhy = time.After(2*time.Second), "2 s after the answer (no effect came first)"
		}
	}
	return nil
}

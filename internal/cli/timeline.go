package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/termtext"
)

var errMissionEnded = errors.New("mission ended")

// timeline prints a mission's events as a readable terminal log and
// handles its waits (interactive on a TTY, printed commands otherwise).
type timeline struct {
	s         *session
	missionID string
	rootRun   string
	in        *bufio.Reader
	pr        *eventPrinter
	// gate places the live engine events among the persisted ones (the
	// same rule as aos mission watch); the persisted events and the live
	// ones come from two goroutines, and mu serializes their printing.
	gate *liveGate
	mu   sync.Mutex
}

func newTimeline(s *session, missionID string) *timeline {
	return &timeline{s: s, missionID: missionID, in: bufio.NewReader(os.Stdin), pr: &eventPrinter{out: s.out, quiet: s.json}, gate: newLiveGate()}
}

func (t *timeline) run(ctx context.Context) error {
	m, err := t.s.k.GetMission(ctx, t.missionID)
	if err != nil {
		return err
	}
	t.rootRun = m.RootRunID
	if kernel.IsTerminal(m.Status) {
		t.printf("mission %s already ended: %s\n", t.missionID, m.Status)
		return errMissionEnded
	}
	// An external engine's live events (engine.event, engine.model_call)
	// are transient: follow them beside the persisted timeline.
	lctx, stopLive := context.WithCancel(ctx)
	live := t.s.service().SubscribeTransient(lctx, t.missionID)
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		t.followLive(live)
	}()
	defer func() { stopLive(); <-liveDone }()
	return t.s.k.ListenEvents(ctx, 0, t.missionID, func(e store.Event) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		// A persisted event is always shown, first; the live engine events
		// it releases after it. (aos run shows no live model text, so only
		// the engine's events pass the gate.)
		var xs []mission.Event
		if strings.HasPrefix(e.Kind, "engine.") {
			xs = t.gate.admit(mission.Event{ID: e.ID, MissionID: e.MissionID, RunID: e.RunID, Seq: e.Seq, Kind: e.Kind, Payload: e.Payload})
		}
		if err := t.event(ctx, e); err != nil {
			return err
		}
		if len(xs) > 0 && xs[0].ID == e.ID && xs[0].Kind == e.Kind {
			xs = xs[1:]
		}
		for _, x := range xs {
			t.pr.render(t.missionID, x.Kind, x.Payload)
		}
		return nil
	})
}

func (t *timeline) printf(format string, a ...any) { t.pr.printf(format, a...) }

func (t *timeline) event(ctx context.Context, e store.Event) error {
	switch e.Kind {
	case "wait.created":
		p := payloadOf(e.Payload)
		return t.waitCreated(ctx, str(p, "waitId"), str(p, "kind"), p["payload"])
	case "run.completed":
		if e.RunID == t.rootRun {
			p := payloadOf(e.Payload)
			t.printf("■ %s — %s\n", termtext.Line(str(p, "status")), indentBy(str(p, "summary"), "  "))
			t.printWhere(ctx)
			return errMissionEnded
		}
		return nil
	}
	t.pr.render(t.missionID, e.Kind, e.Payload)
	return nil
}

// printWhere says where the mission's work is: its branch, from its base.
func (t *timeline) printWhere(ctx context.Context) {
	m, err := t.s.st.GetMission(ctx, t.missionID)
	if err != nil {
		return
	}
	var in engine.Input
	if json.Unmarshal(m.Spec, &in) != nil || in.Base == "" {
		return
	}
	br := engine.Branch(m.ID)
	t.printf("  work on branch %s; look: git log %s..%s; take it: git merge %s\n", br, in.Base[:12], br, br)
}

// waitCreated asks the owner on a TTY, denies under --on-ask deny, or
// prints the commands that resolve the wait and keeps waiting.
func (t *timeline) waitCreated(ctx context.Context, waitID, kind string, payload json.RawMessage) error {
	w, err := t.s.st.GetWait(ctx, waitID)
	if err != nil || w.Status != "pending" {
		return nil // resolved already (a replayed timeline)
	}
	interactive := t.s.onAsk != "deny" && t.s.tty && !t.s.json
	p := t.pr.printWait(waitID, kind, payload, t.s.onAsk != "deny" && !interactive)
	switch {
	case t.s.onAsk == "deny":
		no := false
		res := mission.Resolution{Approved: &no, Reason: "aos run --on-ask deny"}
		if kind != "approval" {
			res = mission.Resolution{Answer: "(no answer: aos run --on-ask deny)"}
		}
		_, err := t.s.service().ResolveWait(ctx, localActor(), waitID, res)
		if errors.Is(err, mission.ErrWaitNotPending) {
			return nil
		}
		return missionError(err)
	case interactive:
		return t.ask(ctx, waitID, kind, p.Options)
	}
	return nil
}

// ask resolves a wait at the terminal, through the mission service (the
// same checks as aos answer and the API). An answer the service refuses
// (empty, over 8 KiB) is asked again; at the end of input the wait stays
// pending, to be resolved with aos answer.
func (t *timeline) ask(ctx context.Context, waitID, kind string, options []string) error {
	for {
		var res mission.Resolution
		var readErr error
		if kind == "approval" {
			fmt.Fprint(t.s.out, "    approve? [y]es / [n]o / [a]lways for this project (or directory): ")
			var line string
			line, readErr = t.in.ReadString('\n')
			yes, no := true, false
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				res = mission.Resolution{Approved: &yes}
			case "a", "always":
				res = mission.Resolution{Approved: &yes, Remember: true}
			default:
				res = mission.Resolution{Approved: &no, Reason: "denied at the terminal"}
			}
		} else {
			fmt.Fprint(t.s.out, "    answer (a number or text): ")
			var line string
			line, readErr = t.in.ReadString('\n')
			line = strings.TrimSpace(line)
			if line == "" && readErr != nil {
				fmt.Fprintf(t.s.out, "\n    no answer; the question waits: aos answer %s TEXT\n", waitID)
				return nil
			}
			if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(options) {
				line = options[n-1]
			}
			res = mission.Resolution{Answer: line}
		}
		_, err := t.s.service().ResolveWait(ctx, localActor(), waitID, res)
		switch {
		case errors.Is(err, mission.ErrWaitNotPending):
			return nil // resolved elsewhere meanwhile
		case errors.Is(err, mission.ErrInvalidInput) && readErr == nil:
			fmt.Fprintf(t.s.out, "    %s\n", oneLine(missionError(err).Error(), 200))
			continue
		}
		return missionError(err)
	}
}

// oneLine is untrusted text for one line of a terminal: whitespace runs
// become one space, control characters and escape sequences are escaped
// (termtext.Line), and it is cut to max bytes at a character boundary.
func oneLine(s string, max int) string {
	s = termtext.Line(strings.Join(strings.Fields(s), " "))
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}

// fold keeps the first lines of s, joined with newline+pre.
func fold(s string, lines int, pre string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = append(ls[:lines], "… ("+plural(len(ls)-lines, "more line", "more lines")+")")
	}
	return strings.Join(ls, "\n"+pre)
}

func indent(s string) string { return indentBy(strings.TrimSpace(s), "  ") }

func indentBy(s, pre string) string {
	return strings.ReplaceAll(s, "\n", "\n"+pre)
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// plural is "1 turn" or "n turns".
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

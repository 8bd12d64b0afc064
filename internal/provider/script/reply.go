package script

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// reply is a resolved turn: what to stream, with deterministic ids.
type reply struct {
	script    *Script
	turnIndex int
	turn      Turn
	model     string
	thinking  string
	text      string
	calls     []call
	refusal   *Refusal
	maxTokens bool
	pause     bool
	usage     Usage
	seed      string // hash of script, turn and request shape: the id source
}

type call struct {
	id, name string
	input    string // JSON, cut in the middle when truncated
	cut      bool
}

// id derives a stable identifier: prefix + 24 hex chars of
// sha256(seed, kind, n).
func (r *reply) id(prefix, kind string, n int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", r.seed, kind, n))
	return prefix + hex.EncodeToString(h[:12])
}

var tagRE = regexp.MustCompile(`\[script:([A-Za-z0-9_.-]+)\]`)

// selectScript picks the script for c: the model name "script:<name>",
// else a "[script:<name>]" tag in the first user message, else the default.
func (s *Set) selectScript(c *Conversation) (*Script, error) {
	if name, ok := strings.CutPrefix(c.Model, "script:"); ok {
		sc, found := s.Lookup(name)
		if !found {
			return nil, fmt.Errorf("no script named %q (model %q)", name, c.Model)
		}
		return sc, nil
	}
	if m := tagRE.FindStringSubmatch(c.FirstUserText()); m != nil {
		sc, found := s.Lookup(m[1])
		if !found {
			return nil, fmt.Errorf("no script named %q (tag in first user message)", m[1])
		}
		return sc, nil
	}
	name := s.Default
	if name == "" {
		name = EchoName
	}
	if sc, ok := s.Lookup(name); ok {
		return sc, nil
	}
	return Echo(), nil
}

// turnFor returns the turn to play at index i.
func (sc *Script) turnFor(i int) (Turn, error) {
	if i < len(sc.Turns) {
		return sc.Turns[i], nil
	}
	if sc.Repeat && len(sc.Turns) > 0 {
		return sc.Turns[len(sc.Turns)-1], nil
	}
	return Turn{}, fmt.Errorf("script %s has no turn %d (it has %d)", sc.Name, i, len(sc.Turns))
}

// resolve builds the reply for turn t of sc to conversation c whose body
// was reqLen bytes long.
func resolve(sc *Script, idx int, t Turn, c *Conversation, reqLen int) (*reply, error) {
	r := &reply{script: sc, turnIndex: idx, turn: t, model: c.Model, thinking: t.Thinking,
		refusal: t.Refusal, maxTokens: t.MaxTokens, pause: t.PauseTurn}
	if sc.Model != "" {
		r.model = sc.Model
	}
	r.text = strings.ReplaceAll(t.Text, "{{last_user}}", c.LastUserText())
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d", sc.Name, idx, c.Format, len(c.Messages))
	r.seed = hex.EncodeToString(h.Sum(nil))[:16]
	out := len(r.text) + len(r.thinking)
	for i, tc := range t.ToolCalls {
		in, err := encodeJSON(jsonable(tc.Input))
		if err != nil {
			return nil, fmt.Errorf("script %s turn %d: tool call %d input: %w", sc.Name, idx, i, err)
		}
		cl := call{id: tc.ID, name: tc.Name, input: string(in)}
		if cl.id == "" {
			cl.id = r.id("", "call", i)
		}
		out += len(in)
		r.calls = append(r.calls, cl)
	}
	if r.maxTokens && len(r.calls) > 0 {
		last := &r.calls[len(r.calls)-1]
		last.input = cutJSON(last.input)
		last.cut = true
	}
	if t.Usage != nil {
		r.usage = *t.Usage
	} else {
		r.usage = Usage{Input: int64(reqLen/4 + 1), Output: int64(out/4 + 1)}
	}
	return r, nil
}

// cutJSON cuts a JSON object in the middle so that it no longer parses:
// `{"path":"a.go","x":1}` → `{"path":"a.`.
func cutJSON(s string) string {
	n := len(s) / 2
	if n < 2 {
		n = len(s) - 1
	}
	if n < 1 {
		return "{"
	}
	if json.Valid([]byte(s[:n])) {
		return s[:n-1]
	}
	return s[:n]
}

// chunks splits s into pieces of about n bytes on rune boundaries, so
// streams have several deltas.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && !isRuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

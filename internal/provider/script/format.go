package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"go.yaml.in/yaml/v3"
)

// Set is a collection of named scripts, as loaded from a file or a
// directory. Default names the script that answers when a request selects
// none ("echo" when empty).
type Set struct {
	Default string    `yaml:"default" json:"default"`
	Scripts []*Script `yaml:"scripts" json:"scripts"`
	// Models are extra model IDs listed by GET /v1/models, so that a test
	// can make a catalogue model "available".
	Models []string `yaml:"models" json:"models"`
}

// Script is one scripted conversation: the assistant turns, in order.
type Script struct {
	Name string `yaml:"name" json:"name"`
	// Model is the model name the responses report; default the request's.
	Model string `yaml:"model" json:"model"`
	// Price, when set, is the price of "script:<name>" (USD per MTok).
	// Scripted models cost nothing otherwise.
	Price *provider.Price `yaml:"price" json:"price"`
	// Repeat answers every turn past the last with the last turn, instead
	// of failing. The built-in echo script repeats.
	Repeat bool `yaml:"repeat" json:"repeat"`
	// AttemptsBy says how the attempts of a scripted error's "times" are
	// counted when the request carries no retry header: "body" (the
	// default: requests with the same canonical path and body) or "turn"
	// (every request for the same turn of this script: for a client that
	// rewrites the request it retries, as OpenClaw's agent-level retry
	// rewrites the prompt).
	AttemptsBy string `yaml:"attempts_by" json:"attempts_by"`
	Turns      []Turn `yaml:"turns" json:"turns"`
}

// AttemptsBy values.
const (
	AttemptsByBody = "body"
	AttemptsByTurn = "turn"
)

// Turn is one assistant turn. Everything is optional; an empty turn
// answers with an empty text.
type Turn struct {
	// Expect lists assertions on the request. A failed one answers 400
	// with a message that names it.
	Expect []Assertion `yaml:"expect" json:"expect"`
	// Thinking is streamed as a thinking block (Anthropic), a reasoning
	// summary with encrypted content (Responses) or reasoning_content (Chat).
	Thinking string `yaml:"thinking" json:"thinking"`
	// Text is the answer; "{{last_user}}" is replaced by the last user text.
	Text string `yaml:"text" json:"text"`
	// ToolCalls are emitted in order, after the text, as parallel calls.
	ToolCalls []ToolCall `yaml:"tool_calls" json:"tool_calls"`
	// Refusal makes the model refuse (stop reason refusal).
	Refusal *Refusal `yaml:"refusal" json:"refusal"`
	// MaxTokens stops the turn at the output limit. With tool calls, the
	// last call's input is cut in the middle of its JSON.
	MaxTokens bool `yaml:"max_tokens" json:"max_tokens"`
	// PauseTurn stops with Anthropic's pause_turn (end_turn elsewhere).
	PauseTurn bool `yaml:"pause_turn" json:"pause_turn"`
	// Usage overrides the token counts (default: estimated from sizes).
	Usage *Usage `yaml:"usage" json:"usage"`
	// Error answers with an HTTP error instead of the turn.
	Error *ErrorSpec `yaml:"error" json:"error"`
	// Delay waits before the response headers.
	Delay Duration `yaml:"delay" json:"delay"`
	// ChunkDelay waits between streamed events.
	ChunkDelay Duration `yaml:"chunk_delay" json:"chunk_delay"`
	// Stall streams the turn's content, then hangs before the events that
	// end the stream, until the client goes away or the server closes.
	Stall bool `yaml:"stall" json:"stall"`
}

// ToolCall is one tool call of a turn. ID defaults to a deterministic id.
type ToolCall struct {
	ID    string `yaml:"id" json:"id"`
	Name  string `yaml:"name" json:"name"`
	Input any    `yaml:"input" json:"input"`
}

// Refusal describes a scripted refusal.
type Refusal struct {
	Category    string `yaml:"category" json:"category"`
	Explanation string `yaml:"explanation" json:"explanation"`
}

// Usage is a turn's token counts.
type Usage struct {
	Input      int64 `yaml:"input" json:"input"`
	Output     int64 `yaml:"output" json:"output"`
	CacheRead  int64 `yaml:"cache_read" json:"cache_read"`
	CacheWrite int64 `yaml:"cache_write" json:"cache_write"`
}

// ErrorSpec is a scripted HTTP failure.
type ErrorSpec struct {
	// Status is the HTTP status: 429, 529, 500, 401, 400…
	Status int `yaml:"status" json:"status"`
	// Type is the provider error type; default derived from Status.
	Type    string `yaml:"type" json:"type"`
	Message string `yaml:"message" json:"message"`
	// RetryAfter is sent as retry-after (whole seconds, rounded up) and
	// retry-after-ms.
	RetryAfter Duration `yaml:"retry_after" json:"retry_after"`
	// Times limits the error to the first Times attempts of the call
	// (0: every attempt); later attempts get the turn.
	Times int `yaml:"times" json:"times"`
	// Drop, instead of a status, closes the connection in the middle of
	// the stream (after the first event).
	Drop bool `yaml:"drop" json:"drop"`
	// MidStream sends the error as an SSE error event after the first
	// event instead of an HTTP status (Anthropic "error" event).
	MidStream bool `yaml:"mid_stream" json:"mid_stream"`
	// AfterEvents is how many events a Drop or MidStream error lets
	// through first (default 1).
	AfterEvents int `yaml:"after_events" json:"after_events"`
}

// Duration is a time.Duration written as "150ms", "2s", or a number of
// seconds.
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	return d.parse(n.Value)
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	return d.parse(strings.Trim(string(b), `"`))
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) parse(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		*d = 0
		return nil
	}
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err == nil {
		*d = Duration(f * float64(time.Second))
		return nil
	}
	return fmt.Errorf("script: bad duration %q (want e.g. 150ms, 2s)", s)
}

// Lookup returns the script called name.
func (s *Set) Lookup(name string) (*Script, bool) {
	for _, sc := range s.Scripts {
		if sc.Name == name {
			return sc, true
		}
	}
	return nil, false
}

// Prices returns a ModelInfo for each script with a price, so that a
// provider.Config can price "script:<name>".
func (s *Set) Prices() []provider.ModelInfo {
	var out []provider.ModelInfo
	for _, sc := range s.Scripts {
		if sc.Price != nil {
			out = append(out, provider.ModelInfo{ID: provider.ScriptPrefix + sc.Name, Price: *sc.Price,
				Tier: provider.TierScripted, Scripted: true, Tools: true, Available: true})
		}
	}
	return out
}

// Parse reads a script file: either a set (`scripts:` list, optional
// `default:`) or a single script (`name:` and `turns:`; name defaults to
// fallbackName). YAML and JSON are both accepted; unknown fields are errors.
func Parse(data []byte, fallbackName string) (*Set, error) {
	set, err := parse(data, fallbackName)
	if err != nil {
		return nil, err
	}
	if err := set.Validate(); err != nil {
		return nil, err
	}
	return set, nil
}

// parse decodes one file without cross-checking the default, which may
// live in another file of a directory.
func parse(data []byte, fallbackName string) (*Set, error) {
	var probe map[string]any
	if err := yaml.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("script: parse: %w", err)
	}
	set := &Set{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if _, ok := probe["scripts"]; ok {
		if err := dec.Decode(set); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("script: parse: %w", err)
		}
	} else {
		sc := &Script{}
		if err := dec.Decode(sc); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("script: parse: %w", err)
		}
		if sc.Name == "" {
			sc.Name = fallbackName
		}
		set.Scripts = []*Script{sc}
	}
	for _, sc := range set.Scripts {
		if sc == nil {
			return nil, errors.New("script: parse: an empty script entry")
		}
	}
	return set, nil
}

// Load reads a script file, or every *.yaml, *.yml and *.json file of a
// directory (a single-script file is named after its file). The built-in
// echo script is always part of the result unless a file redefines it.
func Load(path string) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("script: load: %w", err)
	}
	files := []string{path}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("script: load: %w", err)
		}
		files = files[:0]
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".yaml", ".yml", ".json":
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		slices.Sort(files)
	}
	all := &Set{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("script: load: %w", err)
		}
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		s, err := parse(data, base)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if s.Default != "" {
			all.Default = s.Default
		}
		all.Models = append(all.Models, s.Models...)
		all.Scripts = append(all.Scripts, s.Scripts...)
	}
	if err := all.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return all.WithBuiltins(), nil
}

// WithBuiltins returns s plus the built-in scripts it does not redefine.
func (s *Set) WithBuiltins() *Set {
	out := &Set{Default: s.Default, Scripts: slices.Clone(s.Scripts), Models: slices.Clone(s.Models)}
	if _, ok := out.Lookup(EchoName); !ok {
		out.Scripts = append(out.Scripts, Echo())
	}
	return out
}

// Validate checks names, defaults and turns.
func (s *Set) Validate() error {
	seen := map[string]bool{}
	for _, sc := range s.Scripts {
		if sc == nil {
			return errors.New("script: a nil script")
		}
		if sc.Name == "" {
			return errors.New("script: a script has no name")
		}
		if seen[sc.Name] {
			return fmt.Errorf("script: %q defined twice", sc.Name)
		}
		seen[sc.Name] = true
		if sc.AttemptsBy != "" && sc.AttemptsBy != AttemptsByBody && sc.AttemptsBy != AttemptsByTurn {
			return fmt.Errorf("script %s: attempts_by %q is not body or turn", sc.Name, sc.AttemptsBy)
		}
		for i, t := range sc.Turns {
			if err := t.validate(); err != nil {
				return fmt.Errorf("script %s turn %d: %w", sc.Name, i, err)
			}
		}
	}
	if s.Default != "" && !seen[s.Default] && s.Default != EchoName {
		return fmt.Errorf("script: default %q is not defined", s.Default)
	}
	return nil
}

func (t Turn) validate() error {
	for i, c := range t.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", i)
		}
		if _, err := json.Marshal(jsonable(c.Input)); err != nil {
			return fmt.Errorf("tool call %d: input: %w", i, err)
		}
	}
	if e := t.Error; e != nil && !e.Drop && (e.Status < 400 || e.Status > 599) {
		return fmt.Errorf("error status %d is not an HTTP error", e.Status)
	}
	for i, a := range t.Expect {
		if err := a.validate(); err != nil {
			return fmt.Errorf("expect %d: %w", i, err)
		}
	}
	return nil
}

// jsonable converts a tool call's YAML-decoded input so json.Marshal
// accepts it: a missing input becomes an empty object, while a null inside
// it stays null (strict tool schemas send optional fields as null).
func jsonable(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return jsonValue(v)
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[fmt.Sprint(k)] = jsonValue(val)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[k] = jsonValue(val)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = jsonValue(val)
		}
		return out
	}
	return v
}

// EchoName is the name of the built-in echo script.
const EchoName = "echo"

// Echo returns the built-in echo script: any request gets one short text
// turn that echoes the last user text.
func Echo() *Script {
	return &Script{Name: EchoName, Repeat: true, Turns: []Turn{{Text: "echo: {{last_user}}"}}}
}

package policy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxShellDepth bounds how deep `bash -c`, `eval` and wrapper commands are
// followed; a line nested deeper is treated as unknowable.
const maxShellDepth = 8

// word is one shell word after quote removal; lit is false when its value
// depends on an expansion ($X, $(…), a glob, a brace list, $'…').
type word struct {
	text string
	lit  bool
}

// commands are the simple commands a shell line would run, as aos can see
// them from the text, the line's own command first: every command in every
// list, pipeline, subshell,
// substitution, loop or function body, with wrappers (env, sudo, xargs,
// timeout, …) peeled off and `bash -c`/`eval` strings parsed too.
// unknown is set when some command cannot be known from the text: the line
// does not parse, a command word is not a literal, or a shell reads its
// script from stdin.
type commands struct {
	argvs   [][]word
	unknown bool
}

// shellCommands parses line as bash and collects its simple commands.
func shellCommands(line string) commands {
	var cs commands
	cs.parse(line, 0)
	return cs
}

func (cs *commands) parse(line string, depth int) {
	// The parser reads \r as a blank and skips NUL; bash keeps \r inside a
	// word and an argv cannot hold NUL. Such a line is not what it seems.
	if depth > maxShellDepth || strings.ContainsAny(line, "\r\x00") {
		cs.unknown = true
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		cs.unknown = true
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if c, ok := n.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				cs.call(wordsOf(c.Args), n.Redirs, depth)
			}
		case *syntax.DeclClause:
			// declare/export/local/readonly/typeset: builtins; what they
			// run is inside their words, which Walk visits.
		}
		return true
	})
}

// call records one simple command and follows what it runs.
func (cs *commands) call(argv []word, redirs []*syntax.Redirect, depth int) {
	if len(argv) == 0 {
		return
	}
	if !argv[0].lit {
		cs.unknown = true
		return
	}
	cs.argvs = append(cs.argvs, argv)
	if depth >= maxShellDepth {
		cs.unknown = true
		return
	}
	name, args := commandName(argv[0].text), argv[1:]
	switch {
	case shells[name]:
		cs.shell(args, redirs, depth)
	case name == "eval":
		cs.parseWords(args, depth)
	case name == "trap":
		if len(args) > 0 && !strings.HasPrefix(args[0].text, "-") {
			cs.parseWords(args[:1], depth) // trap 'rm x' EXIT
		}
	case name == "alias" || name == "hash" || name == "enable":
		cs.unknown = true // renames what a later command word runs
	case name == "find":
		for i := 0; i < len(args); i++ {
			if a := args[i].text; a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir" {
				j := i + 1
				for j < len(args) && args[j].text != ";" && args[j].text != "+" {
					j++
				}
				cs.call(append([]word(nil), args[i+1:j]...), nil, depth+1)
				i = j
			}
		}
	default:
		if w, ok := wrappers[name]; ok {
			rest, split, ok := w.peel(args)
			switch {
			case !ok:
				cs.unknown = true
			case split != nil:
				cs.parseWords([]word{*split}, depth)
			case w.joinShell:
				cs.parseWords(rest, depth)
			default:
				cs.call(append([]word(nil), rest...), nil, depth+1)
			}
		}
	}
}

// shell follows `bash -c STRING`, a here-document fed to a shell, or a
// shell that reads its script from stdin (unknowable). A shell given a
// script file runs what the file says, which policy cannot see.
func (cs *commands) shell(args []word, redirs []*syntax.Redirect, depth int) {
	for i, a := range args {
		if !a.lit {
			cs.unknown = true
			return
		}
		if !strings.HasPrefix(a.text, "-") || a.text == "-" || a.text == "--" {
			if a.text == "-" || a.text == "--" {
				break
			}
			return // a script file: bash build.sh
		}
		if strings.HasPrefix(a.text, "--") {
			continue // --norc, --login …
		}
		if strings.Contains(a.text, "c") {
			if i+1 >= len(args) {
				cs.unknown = true
				return
			}
			cs.parseWords(args[i+1:i+2], depth)
			return
		}
		if strings.ContainsAny(a.text, "oO") {
			cs.unknown = true // -o option takes an argument; be safe
			return
		}
	}
	// No script: the shell reads stdin. A here-document is visible text.
	for _, r := range redirs {
		if r.Hdoc != nil {
			cs.parseWords(wordsOf([]*syntax.Word{r.Hdoc}), depth)
			return
		}
		if r.Op == syntax.WordHdoc && r.Word != nil {
			cs.parseWords(wordsOf([]*syntax.Word{r.Word}), depth)
			return
		}
	}
	cs.unknown = true
}

// parseWords parses the words joined by spaces as a shell line.
func (cs *commands) parseWords(ws []word, depth int) {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		if !w.lit {
			cs.unknown = true
			return
		}
		parts = append(parts, w.text)
	}
	cs.parse(strings.Join(parts, " "), depth+1)
}

// commandName resolves a path to the command it names: /bin/rm → rm.
func commandName(s string) string {
	if strings.Contains(s, "/") {
		return path.Base(s)
	}
	return s
}

// shells are interpreters that take -c STRING or read a script from stdin.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// wrapper is a command that runs another command named in its arguments.
type wrapper struct {
	// argOpts are the options that take the next word as their value.
	argOpts string
	// assigns skips NAME=value words (env).
	assigns bool
	// positional is how many operands come before the command (timeout's
	// duration).
	positional int
	// splitOpt is an option whose value is itself a shell line (env -S,
	// flock -c).
	splitOpt string
	// joinShell: the command's words are joined and run by sh -c (watch).
	joinShell bool
}

// wrappers run the command that follows their own options.
var wrappers = map[string]wrapper{
	"env":     {argOpts: " -u --unset -C --chdir ", assigns: true, splitOpt: " -S --split-string "},
	"command": {},
	"builtin": {},
	"exec":    {argOpts: " -a "},
	"xargs":   {argOpts: " -a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var "},
	"nice":    {argOpts: " -n --adjustment "},
	"nohup":   {},
	"setsid":  {},
	"time":    {argOpts: " -f -o --format --output "},
	"timeout": {argOpts: " -s -k --signal --kill-after ", positional: 1},
	"sudo":    {argOpts: " -u -g -h -p -C -D -R -T -U --user --group --host --prompt --chdir --chroot "},
	"doas":    {argOpts: " -u -C "},
	"stdbuf":  {argOpts: " -i -o -e "},
	"ionice":  {argOpts: " -c -n -p -P -u --class --classdata "},
	"chrt":    {},
	"taskset": {},
	"flock":   {argOpts: " -w -E --timeout --conflict-exit-code ", positional: 1, splitOpt: " -c --command "},
	"watch":   {argOpts: " -n -d --interval ", joinShell: true},
	"busybox": {},
}

// peel returns the wrapped command's argv, or split when an option's value
// is a whole shell line; ok is false when the words cannot be followed.
func (w wrapper) peel(args []word) (rest []word, split *word, ok bool) {
	pos := w.positional
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			return nil, nil, false
		}
		switch {
		case a.text == "--":
			return args[i+1:], nil, true
		case strings.HasPrefix(a.text, "-") && len(a.text) > 1:
			opt, _, hasValue := strings.Cut(a.text, "=")
			if w.splitOpt != "" && strings.Contains(w.splitOpt, " "+opt+" ") {
				if hasValue {
					v := word{text: strings.TrimPrefix(a.text, opt+"="), lit: true}
					return nil, &v, true
				}
				if i+1 < len(args) {
					return nil, &args[i+1], true
				}
				return nil, nil, false
			}
			if !hasValue && strings.Contains(w.argOpts, " "+opt+" ") {
				i++
			}
		case w.assigns && strings.Contains(a.text, "="):
		case pos > 0:
			pos--
		default:
			return args[i:], nil, true
		}
	}
	return nil, nil, true
}

// wordsOf removes quotes from each word; a word that depends on an
// expansion is returned with lit false.
func wordsOf(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		var b strings.Builder
		lit := unquote(&b, w.Parts, false)
		out = append(out, word{text: b.String(), lit: lit})
	}
	return out
}

func unquote(b *strings.Builder, parts []syntax.WordPart, inDouble bool) bool {
	lit := true
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !inDouble && strings.ContainsAny(p.Value, "*?[{~") {
				lit = false // a glob, brace list or tilde expands
			}
			b.WriteString(unescape(p.Value, inDouble))
		case *syntax.SglQuoted:
			if p.Dollar {
				lit = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar || !unquote(b, p.Parts, true) {
				lit = false
			}
		default:
			lit = false
		}
	}
	return lit
}

// unescape removes backslash quoting: every backslash outside quotes, and
// inside double quotes only before $ ` " \ or a newline.
func unescape(s string, inDouble bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!inDouble || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

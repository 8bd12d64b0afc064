package policy

import (
	"path/filepath"
	"strings"
	"unicode"
)

// Scope is the ProjectID a mission's rules are stored and matched under:
// the project's id, or, for a mission with no project (aos run), its
// workspace directory as "dir:/abs/path". A remembered approval is never
// global: a rule remembered in one project or directory does not apply in
// another.
func Scope(projectID, workspace string) string {
	if projectID != "" {
		return projectID
	}
	return "dir:" + filepath.Clean(workspace)
}

// RememberPrefix is the command prefix a remembered shell approval
// allows, or, when the command must not be remembered as a prefix, why
// (then the approval holds for this call only). The prefix is never
// broader than the command's first two words:
//   - the first word, plus the second when the first is a tool with
//     subcommands (go, git, npm, …): "go test ./..." gives "go test";
//   - an interpreter with its script: "bash build.sh" gives
//     "bash build.sh"; a bare interpreter or one given an option
//     ("bash -c …", "python3 -m …") is refused;
//   - a command that runs another command (env, sudo, xargs, eval, find,
//     …) is refused, and so is a line with shell operators, expansions or
//     quoting, which no allow rule could match anyway.
func RememberPrefix(command string) (prefix, refusal string) {
	cs := shellCommands(command)
	switch {
	case strings.TrimSpace(command) == "":
		return "", "an empty command is not remembered"
	case cs.unknown || len(cs.argvs) == 0 || strings.ContainsAny(command, ";&|`$<>(){}\n\\"):
		return "", "a command with shell operators or expansions is approved for this call only, not remembered"
	}
	// The words as the shell splits them: strings.Fields would also split
	// on characters bash keeps inside a word (\r, U+00A0).
	var w []string
	for _, x := range cs.argvs[0] {
		w = append(w, x.text)
	}
	if !plain(w[0]) || strings.Contains(strings.Fields(command)[0], "=") {
		return "", "a command whose name is not a plain word is approved for this call only, not remembered"
	}
	name := commandName(w[0])
	if _, ok := wrappers[name]; ok || runners[name] {
		return "", "`" + name + "` runs another command: approved for this call only, not remembered"
	}
	if shells[name] || interpreters[name] {
		if len(w) < 2 || strings.HasPrefix(w[1], "-") || !plain(w[1]) {
			return "", "a bare interpreter (`" + name + "` without its script) is never remembered: approved for this call only"
		}
		return w[0] + " " + w[1], ""
	}
	if len(w) > 1 && subcommandTools[name] && isWord(w[1]) {
		return w[0] + " " + w[1], ""
	}
	return w[0], ""
}

// interpreters run a program given as their first operand; with it they
// are remembered as "interpreter script", never alone.
var interpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "node": true, "nodejs": true, "perl": true, "ruby": true,
	"php": true, "lua": true, "Rscript": true, "tclsh": true, "awk": true, "gawk": true, "mawk": true,
	"source": true, ".": true, "fish": true, "pwsh": true, "osascript": true,
}

// runners run a command given in their arguments (besides wrappers).
var runners = map[string]bool{"eval": true, "find": true, "parallel": true, "su": true, "ssh": true, "script": true}

// subcommandTools are commands whose second word names what they do, so a
// remembered "go test" does not also allow "go run".
var subcommandTools = map[string]bool{
	"go": true, "git": true, "npm": true, "pnpm": true, "yarn": true, "npx": true, "cargo": true, "make": true,
	"pip": true, "uv": true, "poetry": true, "bundle": true, "rake": true, "mix": true, "dotnet": true,
	"gradle": true, "mvn": true, "docker": true, "kubectl": true, "terraform": true, "deno": true, "bun": true,
}

// plain reports whether s is a word the shell reads as itself: no quotes,
// globs or other characters with a meaning.
func plain(s string) bool {
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._/+-=:,@%", r)) {
			return false
		}
	}
	return s != ""
}

func isWord(s string) bool {
	for i, r := range s {
		if !unicode.IsLetter(r) && (i == 0 || r != '-' && r != '_') {
			return false
		}
	}
	return s != ""
}

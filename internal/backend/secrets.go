package backend

import (
	"bufio"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// secretRule is one pattern of the secret scan. The rules are a curated
// subset of gitleaks' default rule set (github.com/gitleaks/gitleaks,
// config/gitleaks.toml, MIT License, Copyright (c) 2019 Zachary Rice),
// rewritten for Go's RE2 syntax; see docs/ENGINES.md for why aos embeds
// them instead of importing gitleaks.
type secretRule struct {
	id string
	re *regexp.Regexp
	// group is the submatch holding the secret (0: the whole match).
	group int
	// minEntropy, when > 0, also requires this Shannon entropy (bits per
	// character) of the secret, to skip placeholders.
	minEntropy float64
}

// secretRules is compiled on first use, not at process start: most aos
// commands never scan for secrets.
var secretRules = sync.OnceValue(func() []secretRule {
	return []secretRule{
		{id: "private-key", re: regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?-----`)},
		{id: "aws-access-token", re: regexp.MustCompile(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`), group: 1, minEntropy: 3},
		{id: "github-pat", re: regexp.MustCompile(`\b(ghp_[0-9a-zA-Z]{36})\b`), group: 1, minEntropy: 3},
		{id: "github-fine-grained-pat", re: regexp.MustCompile(`\b(github_pat_\w{82})\b`), group: 1, minEntropy: 3},
		{id: "github-oauth", re: regexp.MustCompile(`\b(gho_[0-9a-zA-Z]{36})\b`), group: 1, minEntropy: 3},
		{id: "github-app-token", re: regexp.MustCompile(`\b((?:ghu|ghs)_[0-9a-zA-Z]{36})\b`), group: 1, minEntropy: 3},
		{id: "gitlab-pat", re: regexp.MustCompile(`\b(glpat-[\w-]{20})\b`), group: 1, minEntropy: 3},
		{id: "slack-token", re: regexp.MustCompile(`\b(xox[pbaoser]-[0-9A-Za-z-]{10,})\b`), group: 1, minEntropy: 3},
		{id: "stripe-access-token", re: regexp.MustCompile(`\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})\b`), group: 1, minEntropy: 2},
		{id: "gcp-api-key", re: regexp.MustCompile(`\b(AIza[\w-]{35})\b`), group: 1, minEntropy: 3},
		{id: "anthropic-api-key", re: regexp.MustCompile(`\b(sk-ant-(?:api|admin)\d{2}-[\w-]{20,})`), group: 1},
		{id: "openai-api-key", re: regexp.MustCompile(`\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})`), group: 1},
		{id: "npm-access-token", re: regexp.MustCompile(`\b(npm_[a-zA-Z0-9]{36})\b`), group: 1, minEntropy: 2},
		{id: "pypi-upload-token", re: regexp.MustCompile(`(pypi-AgEIcHlwaS5vcmc[\w-]{50,})`), group: 1},
		{id: "jwt", re: regexp.MustCompile(`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/_-]{17,}\.[a-zA-Z0-9/_-]{10,}={0,2})`), group: 1, minEntropy: 3},
		{id: "generic-api-key", re: regexp.MustCompile(`(?i)(?:key|api|token|secret|client|passwd|password|auth|access)[\w.-]{0,20}["']?\s{0,5}(?:=|:|=>|:=)\s{0,5}["']?([0-9a-zA-Z_./+=~-]{16,150})["']?`), group: 1, minEntropy: 3.5},
	}
})

// highEntropy finds long base64- or hex-like words that look random. A
// slash splits words, so that file paths are not taken for keys.
var highEntropy = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9+_=-]{32,}`) })

// Finding is one secret the scan found, redacted: the secret itself is
// never stored, logged or shown.
type Finding struct {
	Rule     string `json:"rule"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Redacted string `json:"redacted"`
}

// ScanPatch scans the added lines of a unified diff (git diff -U0 --text)
// and returns at most max findings.
func ScanPatch(patch string, max int) []Finding {
	var out []Finding
	file, line := "", 0
	sc := bufio.NewScanner(strings.NewReader(patch))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() && len(out) < max {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = strings.TrimPrefix(strings.TrimPrefix(l[4:], "b/"), "\"b/")
			file = strings.TrimSuffix(file, "\"")
		case strings.HasPrefix(l, "@@ "):
			line = hunkStart(l)
		case strings.HasPrefix(l, "+"):
			for _, f := range ScanLine(l[1:]) {
				f.File, f.Line = clip(file, 300), line
				out = append(out, f)
			}
			line++
		}
	}
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// hunkStart reads the new side's first line number from "@@ -a,b +c,d @@".
func hunkStart(l string) int {
	_, rest, ok := strings.Cut(l, " +")
	if !ok {
		return 0
	}
	num, _, _ := strings.Cut(rest, " ")
	num, _, _ = strings.Cut(num, ",")
	n, _ := strconv.Atoi(num)
	return n
}

// ScanLine returns the findings in one line of text.
func ScanLine(s string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, r := range secretRules() {
		for _, m := range r.re.FindAllStringSubmatch(s, 4) {
			secret := m[r.group]
			if secret == "" || seen[secret] || (r.minEntropy > 0 && entropy(secret) < r.minEntropy) {
				continue
			}
			seen[secret] = true
			out = append(out, Finding{Rule: r.id, Redacted: redact(secret)})
		}
	}
	for _, w := range highEntropy().FindAllString(s, 8) {
		if seen[w] || !looksRandom(w) {
			continue
		}
		covered := false
		for k := range seen {
			if strings.Contains(w, k) || strings.Contains(k, w) {
				covered = true
			}
		}
		if !covered {
			seen[w] = true
			out = append(out, Finding{Rule: "high-entropy", Redacted: redact(w)})
		}
	}
	return out
}

// looksRandom is the high-entropy check: a word of upper and lower case
// letters and digits with at least 4.3 bits of entropy per character (a
// git object id, hex, has at most 4, English text far less) whose
// character class changes often (random base62 changes class at about 60%
// of positions; CamelCase identifiers with a number, such as generated
// names, at under 20%).
func looksRandom(w string) bool {
	var up, low, dig bool
	changes, prev := 0, 0
	for i, c := range w {
		class := 0
		switch {
		case c >= 'A' && c <= 'Z':
			up, class = true, 1
		case c >= 'a' && c <= 'z':
			low, class = true, 2
		case c >= '0' && c <= '9':
			dig, class = true, 3
		}
		if i > 0 && class != prev {
			changes++
		}
		prev = class
	}
	return up && low && dig && float64(changes) >= 0.3*float64(len(w)) && entropy(w) >= 4.3
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	n := 0
	for _, c := range s {
		counts[c]++
		n++
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

// redact keeps a secret's first four characters and its length.
func redact(s string) string {
	keep := 4
	if len(s) < 12 {
		keep = 0
	}
	return clip(s[:keep], 8) + "…[redacted, " + strconv.Itoa(len(s)) + " chars]"
}

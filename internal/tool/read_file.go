package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ReadFileMaxBytes is the largest file read_file reads.
const ReadFileMaxBytes = 2 << 20

type readFileInput struct {
	Path      string `json:"path"`
	StartLine *int   `json:"startLine"`
	EndLine   *int   `json:"endLine"`
}

func (in readFileInput) validate() error {
	switch {
	case in.Path == "":
		return errors.New("path is required")
	case in.StartLine != nil && *in.StartLine < 1:
		return errors.New("startLine must be >= 1")
	case in.EndLine != nil && *in.EndLine < deref(in.StartLine, 1):
		return errors.New("endLine must be >= startLine")
	}
	return nil
}

// ReadFile returns the read_file tool: a text file's lines, numbered,
// optionally a line range. Files over 2 MiB, binary files and anything
// that is not a regular file (a FIFO, a device) are refused.
func ReadFile() Tool {
	return &def[readFileInput]{
		name:        "read_file",
		description: "Read a text file in the workspace. Lines are numbered. Use startLine/endLine (1-based, inclusive) for part of a file. Files over 2 MiB and binary files are refused.",
		schema: mustJSON(object(
			str("path", "File path, relative to the workspace."),
			optInt("startLine", "First line to return (1-based), or null for the start."),
			optInt("endLine", "Last line to return (inclusive), or null for the end."),
		)),
		effect:       always[readFileInput](EffectRead),
		risk:         riskAlways[readFileInput](RiskRead),
		parallelSafe: true,
		run:          runReadFile,
		approval:     func(in readFileInput) Approval { return Approval{Title: "Read " + in.Path} },
	}
}

func runReadFile(_ context.Context, tc *Context, in readFileInput) (Result, error) {
	rel, err := relName(tc.Workspace, in.Path)
	if err != nil {
		return fail("%v", err), nil
	}
	w, err := openWorkspace(tc.Workspace)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = w.Close() }()
	data, real, err := w.readRegular(rel, ReadFileMaxBytes)
	var pe *PathError
	var tl *tooLargeError
	switch {
	case errors.As(err, &tl):
		return fail("%s is %d bytes; read_file reads at most %d. Use search, or shell with head/sed/grep.", in.Path, tl.Size, ReadFileMaxBytes), nil
	case errors.As(err, &pe) && strings.HasPrefix(pe.Reason, "is a directory"):
		return fail("%s is a directory: use list_dir", in.Path), nil
	case err != nil:
		return failErr(err)
	}
	if isBinary(data) {
		return fail("%s looks like a binary file (%d bytes); read_file reads text only", in.Path, len(data)), nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := deref(in.StartLine, 1)
	end := min(deref(in.EndLine, len(lines)), len(lines))
	var b strings.Builder
	if start > len(lines) && len(lines) > 0 {
		return fail("%s has %d lines; startLine %d is past the end", in.Path, len(lines), start), nil
	}
	for i := start; i <= end; i++ {
		fmt.Fprintf(&b, "%6d\t%s", i, strings.TrimSuffix(lines[i-1], "\n"))
		b.WriteByte('\n')
	}
	if len(lines) == 0 {
		b.WriteString("(empty file)\n")
	} else if start > 1 || end < len(lines) {
		fmt.Fprintf(&b, "[lines %d-%d of %d]\n", start, end, len(lines))
	}
	return Result{OK: true, Output: b.String(), Trust: TrustUntrusted, FileStateOut: map[string]string{real: sum(data)}}, nil
}

// isBinary treats NUL bytes or invalid UTF-8 in the first 8 KiB as binary.
func isBinary(b []byte) bool {
	head := b[:min(len(b), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Allow a rune cut at the 8 KiB boundary.
	for i := 0; len(b) > len(head) && i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

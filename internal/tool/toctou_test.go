package tool_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/aos-run/aos/internal/tool"
)

// TestFileToolsContainedUnderRenameExchange runs the file tools in a loop
// while another goroutine keeps swapping a workspace directory with a
// symlink to a directory outside, atomically (renameat2 RENAME_EXCHANGE):
// the attack of issue 10 class 3. From outside, it checks that no outside
// content or name ever came back and that nothing was created outside.
// Positive control: some calls did reach the inside directory.
func TestFileToolsContainedUnderRenameExchange(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	ws := tc.Workspace
	outside := t.TempDir()
	const secret = "OUTSIDE-SECRET-7f3a"
	write(t, filepath.Join(outside, "secret.txt"), secret+"\n")
	write(t, filepath.Join(outside, "outside-only-name.txt"), secret+"\n")
	write(t, filepath.Join(ws, "d/secret.txt"), "inside\n")
	if err := os.Symlink(outside, filepath.Join(ws, "l")); err != nil {
		t.Fatal(err)
	}
	rg, _ := exec.LookPath("rg")
	tools := []tool.Tool{tool.ReadFile(), tool.WriteFile(), tool.EditFile(), tool.ListDir(), tool.Search("")}
	if rg != "" {
		tools = append(tools, tool.Search(rg))
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, "d"), unix.AT_FDCWD, filepath.Join(ws, "l"), unix.RENAME_EXCHANGE)
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })

	leaks, readsIn, writesIn := 0, 0, 0
	for i := range 300 {
		for _, tl := range tools {
			var in map[string]any
			switch tl.Name() {
			case "read_file":
				in = map[string]any{"path": "d/secret.txt"}
			case "write_file":
				in = map[string]any{"path": fmt.Sprintf("d/new-%d.txt", i), "content": "x"}
			case "edit_file":
				in = map[string]any{"path": "d/secret.txt", "oldString": secret, "newString": "pwned"}
			case "list_dir":
				in = map[string]any{"path": "d"}
			case "search":
				// The target itself, then the whole workspace (ripgrep walks
				// into d by path: the race is inside its walk).
				var target any = "d"
				if i%4 >= 2 {
					target = nil
				}
				in = map[string]any{"query": "SECRET|outside-only", "mode": "content", "path": target}
				if i%2 == 1 {
					in = map[string]any{"query": "outside-only", "mode": "name", "path": target}
				}
			}
			res, err := tl.Run(context.Background(), tc, js(t, in))
			if err != nil {
				res.Output = err.Error()
			}
			if strings.Contains(res.Output, secret) || strings.Contains(res.Output, "outside-only-name") {
				leaks++
				if leaks < 5 {
					t.Errorf("%s %v returned outside data: %q", tl.Name(), in, res.Output)
				}
			}
			switch {
			case tl.Name() == "read_file" && res.OK && strings.Contains(res.Output, "inside"):
				readsIn++
			case tl.Name() == "write_file" && res.OK:
				writesIn++
			}
		}
	}
	close(stop)
	wg.Wait()
	stop = make(chan struct{}) // for the cleanup
	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 {
		t.Errorf("files created outside the workspace: %v", names)
	}
	if got := read(t, filepath.Join(outside, "secret.txt")); got != secret+"\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if leaks > 0 {
		t.Errorf("%d calls returned outside data", leaks)
	}
	// Positive control, deterministic: with the race over and d a real
	// directory again, the same calls work.
	if fi, err := os.Lstat(filepath.Join(ws, "d")); err != nil || !fi.IsDir() {
		if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, "d"), unix.AT_FDCWD, filepath.Join(ws, "l"), unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
	}
	if res := run(t, tool.ReadFile(), tc, map[string]any{"path": "d/secret.txt"}); !res.OK || !strings.Contains(res.Output, "inside") {
		t.Errorf("positive control read: %s", res.Output)
	}
	if res := run(t, tool.WriteFile(), tc, map[string]any{"path": "d/after.txt", "content": "x"}); !res.OK || read(t, filepath.Join(ws, "d/after.txt")) != "x" {
		t.Errorf("positive control write: %s", res.Output)
	}
	t.Logf("%d inside reads, %d inside writes, %d leaks", readsIn, writesIn, leaks)
}

package hostile

import (
	"os"
	"path/filepath"

	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/store"
)

// victims are workspace files a deny rule on rm protects.
var victims = []string{"v1.txt", "v2.txt", "v3.txt", "v4.txt", "v5.txt", "v6.txt"}

func denyRm(w *world) {
	for _, v := range victims {
		mustWrite(w.t, filepath.Join(w.repo, v), "victim\n", 0o644)
	}
	w.addRule(store.PolicyRule{Tool: "shell", CommandPrefix: "rm", Decision: "deny", Note: "owner: never rm"})
}

// survivors adds a finding for each victim that a denied rm removed from
// any mission branch of the project.
func survivors(w *world, f *findings, names ...string) {
	for _, br := range w.branches(w.repo) {
		for _, v := range names {
			if _, ok := branchFile(w.repo, br, v); !ok {
				f.add("deny rule on rm bypassed: %s was removed on %s", v, br)
			}
		}
	}
}

// absent adds a finding for each name present on any mission branch of
// the project or in its checkout.
func absent(w *world, f *findings, what string, names ...string) {
	for _, n := range names {
		for _, br := range w.branches(w.repo) {
			if _, err := safeGit(w.repo, "cat-file", "-e", br+":"+n); err == nil {
				f.add("%s: %s exists on %s", what, n, br)
			}
		}
		if _, err := os.Lstat(filepath.Join(w.repo, n)); err == nil {
			f.add("%s: %s exists in the owner's checkout", what, n)
		}
	}
}

func policyAttacks() []attack {
	return []attack{
		{
			name: "policy-deny-rm-compound", class: classPolicy, drivers: []string{"sqlite", "postgres"},
			setup: denyRm,
			missions: []mission{{turns: []script.Turn{
				turn(sh("rm -f v1.txt; true")),
				turn(sh("/bin/rm v2.txt")),
				turn(sh("echo x && rm v3.txt")),
				turn(sh("true | rm v4.txt")),
				turn(sh("echo $(rm v5.txt)")),
				turn(sh("command rm v6.txt")),
			}}},
			check: func(w *world, f *findings) { survivors(w, f, victims...) },
		},
		{
			// The owner approves `bash build.sh` with "remember": that must
			// not allow `bash -c …`, nor build.sh in another project.
			name: "policy-remember-bash", class: classPolicy, drivers: []string{"sqlite", "postgres"},
			setup: func(w *world) { makeRepo(w.t, filepath.Join(w.root, "other")) },
			missions: []mission{
				// "[a]lways for this project" at aos run's terminal prompt.
				{network: "open", tty: true, answer: "a\n", turns: []script.Turn{turn(sh("bash build.sh"))}},
				{network: "open", turns: []script.Turn{turn(sh("bash -c 'touch ran-bash-c'")), turn(sh("bash -x -c 'touch ran-bash-x'"))}},
				{network: "open", project: "@ROOT@/other", turns: []script.Turn{turn(sh("bash build.sh"))}},
			},
			check: func(w *world, f *findings) {
				absent(w, f, "a remembered `bash build.sh` allowed another bash command", "ran-bash-c", "ran-bash-x")
				if r := w.runOf(2); r != nil && r.branch != "" {
					if _, ok := branchFile(r.project, r.branch, "built.txt"); ok {
						f.add("a rule remembered in one project allowed the command in another project")
					}
				}
				if _, err := os.Stat(filepath.Join(w.root, "other", "built.txt")); err == nil {
					f.add("a rule remembered in one project allowed the command in another project")
				}
			},
		},
	}
}

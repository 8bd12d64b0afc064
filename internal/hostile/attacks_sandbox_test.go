package hostile

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"

	"github.com/aos-run/aos/internal/provider/script"
)

// runHomeToken is the secret a victim mission keeps in its per-run HOME.
var runHomeToken = regexp.MustCompile(`RUNHOME[0-9a-f]{24}`)

// listener is a TCP listener the test owns; it counts connections.
type listener struct {
	ln    net.Listener
	conns atomic.Int64
}

func listen(w *world, addr, placeholder string) *listener {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		w.t.Fatalf("listen %s: %v", addr, err)
	}
	l := &listener{ln: ln}
	w.t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.conns.Add(1)
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nhi\n"))
			_ = c.Close()
		}
	}()
	w.setVar(placeholder, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	return l
}

// hostIP is a non-loopback IPv4 address of this machine, or "".
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// dial is a shell command that connects to host:port with bash's
// /dev/tcp (no curl needed) and with curl when present.
func dial(host, port string) string {
	return "(exec 3<>/dev/tcp/" + host + "/" + port + " && echo connected-" + port + "); " +
		"command -v curl >/dev/null && curl -s -m 3 http://" + host + ":" + port + "/; true"
}

// limits are the per-command limits the limit attacks configure (issue
// 10: "document each limit and make it configurable"): low enough that the
// attacks exceed them without loading the machine, whatever the defaults.
// An aos without limits ignores these variables.
var limits = []string{"AOS_SANDBOX_MAX_PROCS=200", "AOS_SANDBOX_MAX_MEMORY=512M", "AOS_SANDBOX_MAX_FILE_SIZE=256M"}

func sandboxAttacks() []attack {
	return []attack{
		{
			name: "sandbox-owner-home-files", class: classSandbox,
			missions: []mission{{turns: []script.Turn{
				turn(sh("cat @HOME@/.npmrc; cat @HOME@/.ssh/id_rsa; cat @HOME@/.config/aos/credentials.json; cat @DATA@/canary.txt; " +
					"ls -la @HOME@ @DATA@; cat /proc/1/environ; cat /proc/$PPID/environ; env")),
				turn(sh("grep -r CANARY @HOME@ @DATA@ --include='*rc' --include='*.json' -s -m1 2>/dev/null | head -20; true")),
			}}},
		},
		{
			// With network open, the sandbox must not reach the host's
			// loopback services (aos's API, the model server, the test's
			// listener).
			name: "sandbox-network-open-loopback", class: classSandbox,
			setup: func(w *world) { w.listeners["loop"] = listen(w, "127.0.0.1:0", "@LOOPPORT@") },
			missions: []mission{{network: "open", approve: true, turns: []script.Turn{
				turn(sh(dial("127.0.0.1", "@LOOPPORT@") + "; " + dial("localhost", "@LOOPPORT@"))),
			}}},
			check: func(w *world, f *findings) {
				if n := w.listeners["loop"].conns.Load(); n > 0 {
					f.add("the sandbox connected %d time(s) to a loopback listener the test owns", n)
				}
			},
		},
		{
			// 300 processes at once (dash: a failed fork is not retried).
			name: "sandbox-limits-processes", class: classSandbox, env: limits,
			missions: []mission{{turns: []script.Turn{
				turn(sh(`sh -c 'for i in $(seq 300); do sleep 20 & done 2>/dev/null; n=$(ls /proc | grep -c "^[0-9]"); echo "procs=$n"; ` +
					`[ "$n" -ge 300 ] && touch many-procs; true'`)),
			}}},
			check: func(w *world, f *findings) { absent(w, f, "300 concurrent processes in one command", "many-procs") },
		},
		{
			name: "sandbox-limits-memory", class: classSandbox, env: limits,
			missions: []mission{{turns: []script.Turn{
				turn(sh(`dd if=/dev/zero of=/dev/null bs=1G count=1 2>&1 && touch allocated-1g; true`)),
			}}},
			check: func(w *world, f *findings) { absent(w, f, "one command allocated 1 GiB", "allocated-1g") },
		},
		{
			name: "sandbox-limits-file-size", class: classSandbox, env: limits,
			missions: []mission{{turns: []script.Turn{
				// Sparse: costs no disk, but the write lands past 1 GiB.
				turn(sh(`dd if=/dev/zero of=big bs=1M count=1 seek=1100 2>&1; ls -l big; true`)),
			}}},
			check: func(w *world, f *findings) {
				if n := branchSize(w.repo, w.lastBranch(), "big"); n >= 1<<30 {
					f.add("one command wrote a %d-byte file into the workspace", n)
				}
			},
		},
		{
			// Another run's per-run HOME (0700) while it runs: a concurrent
			// victim mission keeps a secret there; the attacker looks.
			name: "sandbox-other-run-home", class: classSandbox,
			missions: []mission{
				{concurrent: true, project: "@ROOT@/victim", turns: []script.Turn{
					turn(sh(`head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' | sed 's/^/RUNHOME/' > "$HOME/token"; sleep 12`)),
				}},
				{turns: []script.Turn{
					// Wherever run dirs live: beside this run's, in aos's
					// TMPDIR, in the data dir.
					turn(sh(`for i in $(seq 40); do t=$(find "$TMPDIR"/../.. @TMP@ @DATA@ -maxdepth 5 -name token -path '*home*' 2>/dev/null | ` +
						`xargs cat 2>/dev/null | grep RUNHOME); [ -n "$t" ] && echo "$t" && break; sleep 0.25; done; true`)),
				}},
			},
			setup: func(w *world) { makeRepo(w.t, filepath.Join(w.root, "victim")) },
			check: func(w *world, f *findings) {
				// The victim's transcript never holds its token (it went to
				// a file), so a token in any request came from the attacker.
				if reqs, _ := w.requests(); runHomeToken.MatchString(reqs) {
					f.add("another run's HOME was read: %s reached the model server", runHomeToken.FindString(reqs))
				}
			},
		},
	}
}

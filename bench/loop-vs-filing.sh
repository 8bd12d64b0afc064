#!/usr/bin/env bash
# bench/loop-vs-filing.sh: the agent loop's overhead per turn today against
# the loop as it was when issue 17 was filed (db36ef4), side by side in one
# run. It checks db36ef4 out in a temporary worktree, gives it today's
# BenchmarkAgentLoop (internal/engine/bench_test.go) with the two changes
# that tree needs (it has no Options.CommitEveryStep, so its one mode, a
# commit per record, runs as "every"; its store does not count commits),
# builds both test binaries and runs them interleaved, ROUNDS times (the
# order flips each round). Figures are per turn, in ms; overhead = turn −
# the model's floor measured in the same process (see bench/README.md).
#
#   AOS_TEST_POSTGRES_URL=postgres://… bench/loop-vs-filing.sh [ROUNDS]
set -euo pipefail
rounds=${1:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/filing" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$top" worktree add --detach "$work/filing" db36ef4 >/dev/null 2>&1
bench="$work/filing/internal/engine/bench_test.go"
cp "$top/internal/engine/bench_test.go" "$bench"
python3 - "$bench" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
for old, new in [
    ("\topts := e.opts()\n\topts.CommitEveryStep = every\n\te.k = kernel.New(e.db.Store, opts)\n",
     "\t_ = every // db36ef4 has one mode: every record commits\n"),
    ("cc := e.db.Store.(commitCounter)", "cc := noCounter{}"),
]:
    if old not in s:
        sys.exit("loop-vs-filing: today's bench_test.go changed; update the patch for " + repr(old[:40]))
    s = s.replace(old, new)
s += "\n// noCounter: db36ef4's store does not count commits.\ntype noCounter struct{}\n\nfunc (noCounter) Commits() uint64 { return 0 }\n"
open(p, "w").write(s)
EOF
(cd "$top" && go test -c -o "$work/today.test" ./internal/engine)
(cd "$work/filing" && go test -c -o "$work/filing.test" ./internal/engine)

run() { # which
	case $1 in
	today) (cd "$top/internal/engine" && "$work/today.test" -test.run '^$' -test.bench AgentLoop -test.benchtime 3x) ;;
	filing) (cd "$work/filing/internal/engine" && AOS_BENCH_LOOP_MODE=every "$work/filing.test" -test.run '^$' -test.bench AgentLoop -test.benchtime 3x) ;;
	esac | awk -v who="$1" '/^BenchmarkAgentLoop/ {
		for (i = 2; i <= NF; i++) v[$i] = $(i - 1)
		if (who == "today") printf "%-8s %-34s every %6.2f  deferred %6.2f  floor %5.2f  commits/turn %.2f\n", who, $1, v["every-overhead-ms/turn"], v["deferred-overhead-ms/turn"], v["floor-ms/turn"], v["deferred-commits/turn"]
		else printf "%-8s %-34s every %6.2f  (its only mode)       floor %5.2f\n", who, $1, v["every-overhead-ms/turn"], v["floor-ms/turn"]
	}'
}
for r in $(seq "$rounds"); do
	order="today filing"
	[ $((r % 2)) -eq 0 ] && order="filing today"
	echo "round $r, load average $(cut -d' ' -f1 /proc/loadavg)"
	for w in $order; do run "$w"; done
done

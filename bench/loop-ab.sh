#!/usr/bin/env bash
# bench/loop-ab.sh: the agent loop's overhead per turn (deferred mode, the
# default) of this tree against an earlier revision of aos, side by side in
# one run: both engine test binaries are built first, then run interleaved,
# ROUNDS times, the order flipped each round. Each binary runs its own
# BenchmarkAgentLoop (internal/engine/bench_test.go), so REV must have one
# that reports deferred-overhead-ms/turn (since issue 17's session 6).
# Figures are per turn, in ms; overhead = turn − the model's floor measured
# in the same process (see bench/README.md).
#
#   AOS_TEST_POSTGRES_URL=postgres://… bench/loop-ab.sh REV [ROUNDS]
set -euo pipefail
rev=${1:?usage: bench/loop-ab.sh REV [ROUNDS]}
rounds=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$top" worktree add --detach "$work/before" "$rev" >/dev/null 2>&1
(cd "$top" && go test -c -o "$work/after.test" ./internal/engine)
(cd "$work/before" && go test -c -o "$work/before.test" ./internal/engine)

run() { # which dir
	(cd "$2/internal/engine" && AOS_BENCH_LOOP_MODE=deferred "$work/$1.test" -test.run '^$' -test.bench AgentLoop -test.benchtime 3x) |
		awk -v who="$1" '/^BenchmarkAgentLoop/ {
			for (i = 2; i <= NF; i++) v[$i] = $(i - 1)
			printf "%-7s %-36s overhead %6.2f  turn %6.2f  floor %5.2f  commits/turn %.2f\n", who, $1, v["deferred-overhead-ms/turn"], v["deferred-ms/turn"], v["floor-ms/turn"], v["deferred-commits/turn"]
		}'
}
for r in $(seq "$rounds"); do
	echo "round $r, load average $(cut -d' ' -f1 /proc/loadavg)"
	if [ $((r % 2)) -eq 1 ]; then
		run after "$top"; run before "$work/before"
	else
		run before "$work/before"; run after "$top"
	fi
done

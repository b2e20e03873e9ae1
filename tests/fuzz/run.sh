#!/bin/sh
# Run one libFuzzer harness (tests/fuzz/README.md).
#
#   run.sh brief HARNESS CORPUS WORKDIR RUNS SECONDS
#	the committed corpus, then mutations, RUNS executions in all (at most
#	SECONDS), fixed seed: what `make test` / ctest runs. New inputs go to
#	a scratch directory under WORKDIR, emptied first; the committed
#	corpus is only read.
#   run.sh long HARNESS CORPUS WORKDIR SECONDS
#	fuzz for SECONDS with a random seed; the corpus WORKDIR/corpus grows
#	across runs and starts from the committed one.
#
# Crashing inputs are written to WORKDIR/crash-* (or leak-*, timeout-*).
# Exit status: libFuzzer's, 0 when nothing was found.
set -eu

mode=$1 bin=$2 corpus=$3 work=$4
name=$(basename "$bin")

# Fail on the first report, with a stack trace, leaks included.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:print_stacktrace=1:halt_on_error=1"

mkdir -p "$work"
case $mode in
brief)
	runs=$5 secs=$6
	rm -rf "$work/scratch"
	mkdir -p "$work/scratch"
	exec "$bin" -seed=1 -runs="$runs" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/" "$work/scratch" "$corpus"
	;;
long)
	secs=$5
	mkdir -p "$work/corpus"
	# Leaks are found per input (libFuzzer's -detect_leaks, on by
	# default). LeakSanitizer's own check at exit is off here: after a
	# long run it reports libFuzzer's corpus (InputCorpus::AddToCorpus,
	# nothing of ours) as leaked (fuzz_bpf_elf, 5,181,870 executions in
	# 1,501 s), a failure no input caused. Brief runs keep it.
	export ASAN_OPTIONS="$ASAN_OPTIONS:leak_check_at_exit=0"
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" \
		"$work/corpus" "$corpus" 2>"$work/log" || {
		rc=$?
		tail -n 60 "$work/log" >&2
		echo "$name: FAILED (exit $rc); input saved under $work/" >&2
		exit $rc
	}
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
	units=$(ls "$work/corpus" | wc -l)
	echo "$name: ${runs:-?} executions in ${secs}s (${rate:-?}/s)," \
		"corpus $units inputs, no crash"
	;;
*)
	echo "usage: $0 brief|long HARNESS CORPUS WORKDIR ..." >&2
	exit 2
	;;
esac

#!/usr/bin/env bash
# Runs every benchmark and prints one table of its figures at the end: each figure, its
# target, met or not.
#
#   bash scripts/bench.sh           the figures (`make bench`): release builds, full sizes
#   bash scripts/bench.sh --quick   one round on small inputs, debug builds (`make test`):
#                                   fails when a benchmark does not run to its end or does not
#                                   produce every figure it announced; values are not judged
#
# Every benchmark runs even when one before it failed; the exit status says whether all ran.
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

# Every bench target of the healer package, from Cargo.toml: a new one is run without being
# listed here.
mapfile -t benches < <(awk '/^\[\[bench\]\]/{b=1; next} b && /^name *=/{gsub(/.*= *"|".*/, ""); print; b=0}' Cargo.toml)
if (( ${#benches[@]} == 0 )); then
    echo "bench: no [[bench]] targets found in Cargo.toml" >&2
    exit 1
fi

figures=$(mktemp)
trap 'rm -f "$figures"' EXIT
export HEALER_BENCH_FIGURES="$figures"

if (( quick )); then
    export HEALER_BENCH_QUICK=1
    # One build of every bench binary (debug), then each runs on its own below.
    cargo test -p healer --benches --no-run --quiet || exit 1
fi

failed=()
for bench in "${benches[@]}"; do
    echo
    echo "== $bench"
    if (( quick )); then
        cargo test -p healer --quiet --bench "$bench"
    else
        cargo bench -p healer --quiet --bench "$bench"
    fi
    status=$?
    if (( status != 0 )); then
        failed+=("$bench (exit $status)")
    fi
done

# Figures a bench announced and never reported.
missing=$(awk -F'\t' '
    $1 == "expect" { want[$2 "\t" $3] = 1; order[++n] = $2 "\t" $3 }
    $1 == "figure" { got[$2 "\t" $3] = 1 }
    END { for (i = 1; i <= n; i++) if (!(order[i] in got)) { split(order[i], p, "\t"); print p[1] ": " p[2] } }
' "$figures")
# Benches that announced nothing at all.
for bench in "${benches[@]}"; do
    if ! awk -F'\t' -v b="$bench" '$1 == "expect" && $2 == b { found = 1 } END { exit !found }' "$figures"; then
        failed+=("$bench (announced no figures)")
    fi
done

echo
if (( quick )); then
    echo "Benchmarks in quick mode (one round, small inputs: the values say nothing here)"
else
    echo "Benchmark figures"
fi
awk -F'\t' '
    $1 == "figure" { rows[++n] = $2 ": " $3 "\t" $4 "\t" $5 "\t" $6 }
    END {
        w[1] = length("figure"); w[2] = length("value"); w[3] = length("target")
        for (i = 1; i <= n; i++) {
            split(rows[i], c, "\t")
            for (k = 1; k <= 3; k++) {
                # Width in characters, not bytes (→, ≤ and µ are several bytes).
                t = c[k]; gsub(/[\200-\277]/, "", t)
                if (length(t) > w[k]) w[k] = length(t)
            }
        }
        line = sprintf("%-" w[1] "s  %-" w[2] "s  %-" w[3] "s  %s", "figure", "value", "target", "met")
        print line
        for (i = 1; i <= n; i++) {
            split(rows[i], c, "\t")
            out = ""
            for (k = 1; k <= 3; k++) {
                t = c[k]; gsub(/[\200-\277]/, "", t)
                pad = w[k] - length(t)
                out = out c[k] sprintf("%" (pad + 2) "s", "")
            }
            print out c[4]
        }
    }
' "$figures"

if [[ -n "$missing" ]]; then
    echo
    echo "Figures announced and never reported:"
    sed 's/^/  /' <<<"$missing"
    failed+=("missing figures")
fi
if (( ${#failed[@]} > 0 )); then
    echo
    echo "bench: did not run to the end: ${failed[*]}" >&2
    exit 1
fi
echo
echo "bench: all ${#benches[@]} benchmarks ran to the end"

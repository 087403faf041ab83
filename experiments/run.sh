#!/bin/sh
# run.sh - the experiments, named or all in the order of EXPERIMENTS.md,
# with the same options (see lib.sh's usage), then report.sh:
#
#   sh experiments/run.sh --scale quick                 every pipeline, tiny
#   sh experiments/run.sh --scale full --seeds 1 t1_encodings   one part
set -eu
dir=$(dirname "$0")
ALL="t1_encodings t2_sharing t3_shuffle block_size model_size t5_flops resolution data_efficiency compute_efficiency riemann fairness precision"
opts= names=
while [ $# -gt 0 ]; do
	case $1 in
	--scale|--seeds|--only|--jobs|--results|--cache) opts="$opts $1 $2"; shift 2 ;;
	--dry-run) opts="$opts $1"; shift ;;
	-h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) names="$names $1"; shift ;;
	esac
done
for e in ${names:-$ALL}; do
	[ -f "$dir/$e.sh" ] || { echo "run.sh: no experiment $e (one of: $ALL)" >&2; exit 2; }
	sh "$dir/$e.sh" $opts
done
case " $opts " in *" --dry-run "*) exit 0 ;; esac
sh "$dir/report.sh" $opts

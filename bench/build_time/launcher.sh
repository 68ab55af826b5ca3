#!/usr/bin/env bash
# The compiler and linker launcher of bench/build_time.sh: runs one compile or link command and
# appends "<output> <wall s> <cpu s>" to $WSCSL_BUILD_TIME_LOG (CPU: the user and system seconds of
# the command and its children).
out=
previous=
for argument in "$@"; do
  [ "$previous" = -o ] && out=$argument
  previous=$argument
done
exec 3>&1 4>&2
TIMEFORMAT='%R %U %S'
# `time` reports on this shell's stderr, which the substitution captures; the command keeps its own.
seconds=$({ time "$@" 1>&3 2>&4; } 2>&1)
status=$?
read -r wall user system <<<"$seconds"
echo "$out $wall $(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')" >>"${WSCSL_BUILD_TIME_LOG:?}"
exit $status

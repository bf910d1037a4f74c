#!/bin/sh
# A child that ChildProcess started dies with its parent (PR_SET_PDEATHSIG), so a bench or
# test killed by a timeout leaves no peer, informer or server running. The bench's peer here
# is a script that records its pid and becomes `sleep`; the bench is killed with SIGKILL,
# which runs none of its own clean-up.
set -u
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '#!/bin/sh\necho $$ > %s/peer.pid\nexec sleep 300\n' "$dir" > "$dir/peer"
chmod +x "$dir/peer"
"$bench" --phases idle --idle-seconds 300 --peer "$dir/peer" > "$dir/bench.out" 2>&1 &
bench_pid=$!
for _ in $(seq 300); do
  [ -s "$dir/peer.pid" ] && break
  sleep 0.1
done
if [ ! -s "$dir/peer.pid" ]; then
  echo "the bench did not start its peer within 30 s:"; cat "$dir/bench.out"
  kill -9 "$bench_pid"; exit 1
fi
peer=$(cat "$dir/peer.pid")
kill -9 "$bench_pid"
wait "$bench_pid" 2>/dev/null
for _ in $(seq 100); do
  state=$(awk '{print $3}' "/proc/$peer/stat" 2>/dev/null)
  case "$state" in
    ""|Z) echo "the peer ($peer) ended with the bench"; exit 0 ;;
  esac
  sleep 0.1
done
echo "the peer ($peer) still runs (state $state) 10 s after the bench was killed"
kill -9 "$peer"
exit 1

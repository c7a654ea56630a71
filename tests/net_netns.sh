#!/bin/sh
# Three hogtrain ranks on three "hosts": network namespaces joined by veth
# pairs to a bridge that lives in a fourth namespace of our own, addresses
# 10.200.N.1-3 that exist only inside them. Nothing touches the host's
# interfaces. Exit 0: pass; 77: skipped (a sentence on stdout); else fail.
#   sh tests/net_netns.sh HOGTRAIN_BIN SCRATCH_DIR
set -u
BIN=$1
DIR=$2
ID=$$
NET=$((ID % 250 + 1))
SW=hogt$ID-sw
if ! ip netns add "$SW" 2>/dev/null; then
    echo "this machine does not allow network namespaces (ip netns add failed: not root, or no CAP_SYS_ADMIN); skipping"
    exit 77
fi
cleanup() {
    for i in 0 1 2; do ip netns del "hogt$ID-$i" 2>/dev/null; done
    ip netns del "$SW" 2>/dev/null
}
trap cleanup EXIT INT TERM
fail() { echo "net_netns: $*"; exit 1; }
# Set-up steps the machine may not allow (no veth or bridge driver, ...).
skip() { echo "this machine does not allow the namespace network ($*); skipping"; exit 77; }

ip -n "$SW" link add br0 type bridge || skip "no bridge"
ip -n "$SW" link set br0 up
for i in 0 1 2; do
    ns=hogt$ID-$i
    ip netns add "$ns" || skip "ip netns add $ns"
    ip link add "h$ID-$i" type veth peer name "s$ID-$i" netns "$SW" || skip "no veth pairs"
    ip link set "h$ID-$i" netns "$ns" || skip "cannot move a veth into $ns"
    ip -n "$ns" link set "h$ID-$i" name eth0
    ip -n "$ns" addr add "10.200.$NET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$SW" link set "s$ID-$i" master br0
    ip -n "$SW" link set "s$ID-$i" up
done

"$BIN" gen --rows 6000 --features 500 --nnz 12 --noise 0.02 --seed 5 \
    -o "$DIR/all.svm" -q || fail "gen"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$DIR/key"
COORD=10.200.$NET.1:$((20000 + ID % 20000))
pids=""
for i in 0 1 2; do
    ip netns exec "hogt$ID-$i" "$BIN" train --world 3 --rank $i \
        --coordinator "$COORD" --secret-file "$DIR/key" --shard stride \
        --connect-timeout 20 --net-timeout 20 --sync-every 500 \
        -o "$DIR/m$i.hgm" "$DIR/all.svm" > "$DIR/r$i.log" 2>&1 &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
[ $rc = 0 ] || { cat "$DIR"/r?.log; fail "a rank failed"; }
grep -q "rank 1 joined from 10.200.$NET.2:" "$DIR/r0.log" ||
    { cat "$DIR/r0.log"; fail "rank 1 did not join from its own address"; }
cmp -s "$DIR/m0.hgm" "$DIR/m1.hgm" && cmp -s "$DIR/m0.hgm" "$DIR/m2.hgm" ||
    fail "the ranks' models differ"
echo "net_netns: 3 ranks on 10.200.$NET.1-3 trained the same model"

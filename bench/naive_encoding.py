#!/usr/bin/env python3
"""The baseline of bench/smt_senders.sh: a naive order-based SMT encoding.

    naive_encoding.py TRACE.json --can-match RANK:SEQ RANK:SEQ [-o FILE.smt2] [--max-assertions N]

Reads a trace as `smtrace dump DIR --format json` prints it and writes, in
SMT-LIB 2, the question "can this receive match this send" encoded the way
the earlier order-based encodings do it (Elwakil and Yang; the seed paper's
section 2 compares against them): one integer clock per communication event,
a Boolean per (receive, send) pair that agree on communicator, destination,
source and tag, with no pruning (neither non-overtaking nor happens-before
removes a pair), at-most-one and non-overtaking constraints written
pairwise. Infinite-buffer semantics: a receive completes after its send was
posted. It asks for a complete execution (every receive and every send
matched) in which the pair matches; `smtrace prove --can-match` also
accepts an execution that stops in a deadlock after the match, but on the
benchmarks (whose alternatives all complete) the two questions agree.
Point-to-point calls only (Send, Ssend, Bsend, Rsend, Isend, Recv,
Irecv, Sendrecv, Wait*/Test* completions); collectives are left out, which
only makes the baseline's problem smaller.

It prints one line on stdout: `assertions A match_pairs M events E`, and
exits 3 without writing the file when A would exceed --max-assertions
(default 5M): the encoding grows as K^3 for K wildcard receives of K senders.
"""
import argparse
import json
import sys

SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend",
         "MPI_Ibsend", "MPI_Irsend"}
RECVS = {"MPI_Recv", "MPI_Irecv"}
ANY = -1


def call_name(event):
    """Return the event's call as MPI_Xxx (dump's JSON spells it "SEND" or "MPI_Send")."""
    name = str(event.get("call", ""))
    if name.startswith("MPI_"):
        return name
    return "MPI_" + name.capitalize()


class Op:
    """A send or receive: who posts it where, and which event waits for it."""

    def __init__(self, kind, rank, post, comm, peer, tag):
        self.kind, self.rank, self.post, self.done = kind, rank, post, post
        self.comm, self.peer, self.tag = comm, peer, tag


def read_ops(trace):
    """Return the sends, the receives and each rank's communication events (seqs)."""
    sends, recvs, events = [], [], {}
    for rank_trace in trace["ranks"]:
        rank = int(rank_trace["header"].get("rank", 0))
        pending = {}  # request -> op
        seqs = []
        for e in rank_trace.get("events", []):
            seq, call = int(e.get("seq", 0)), call_name(e)
            comm, peer, tag = int(e.get("comm", 0)), int(e.get("peer", 0)), int(e.get("tag", 0))
            touched = False
            if call in SENDS or call in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
                sends.append(Op("send", rank, seq, comm, peer, tag))
                touched = True
                if call.startswith("MPI_I"):
                    pending[str(e.get("request"))] = sends[-1]
            if call in RECVS or call in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
                source, rtag = peer, tag
                if call.startswith("MPI_Sendrecv"):
                    source = int(e.get("recv_peer", e.get("recvPeer", peer)))
                    rtag = int(e.get("recv_tag", e.get("recvTag", tag)))
                recvs.append(Op("recv", rank, seq, comm, source, rtag))
                touched = True
                if call == "MPI_Irecv":
                    pending[str(e.get("request"))] = recvs[-1]
            for done in e.get("completed", []):
                op = pending.pop(str(done.get("request")), None)
                if op is not None:
                    op.done = seq
                    touched = True
            if touched:
                seqs.append(seq)
        events[rank] = seqs
    return sends, recvs, events


def accepts(r, s):
    """Return true when receive `r` accepts send `s`'s envelope."""
    return (s.comm == r.comm and s.peer == r.rank and r.peer in (ANY, s.rank)
            and r.tag in (ANY, s.tag))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--can-match", nargs=2, required=True, metavar="RANK:SEQ")
    parser.add_argument("-o", "--output")
    parser.add_argument("--max-assertions", type=int, default=5_000_000)
    args = parser.parse_args()
    with open(args.trace, encoding="utf-8") as f:
        trace = json.load(f)
    sends, recvs, events = read_ops(trace)

    def t(rank, seq):
        return f"t_{rank}_{seq}"

    pairs = {}  # (recv index, send index) -> variable
    for i, r in enumerate(recvs):
        for j, s in enumerate(sends):
            if accepts(r, s):
                pairs[i, j] = f"m_{i}_{j}"
    by_recv = [[j for j in range(len(sends)) if (i, j) in pairs] for i in range(len(recvs))]
    by_send = [[i for i in range(len(recvs)) if (i, j) in pairs] for j in range(len(sends))]

    # Count first: the pairwise constraints are what grows.
    order = sum(max(len(seqs) - 1, 0) for seqs in events.values())
    at_most = sum(len(c) * (len(c) - 1) // 2 for c in by_recv + by_send)
    channel_pairs = []
    for j1, s1 in enumerate(sends):
        for j2, s2 in enumerate(sends):
            if s1.rank == s2.rank and s1.peer == s2.peer and s1.comm == s2.comm and s1.post < s2.post:
                channel_pairs.append((j1, j2))
    overtaking = 0
    for j1, j2 in channel_pairs:
        receivers = [i for i in by_send[j1] if (i, j2) in pairs]
        overtaking += len(receivers) * (len(receivers) - 1) // 2
    total = order + len(recvs) + len(sends) + at_most + len(pairs) + overtaking + 1
    print(f"assertions {total} match_pairs {len(pairs)} events {sum(len(s) for s in events.values())}")
    if total > args.max_assertions:
        return 3

    def ref(text):
        rank, seq = text.split(":")
        return int(rank), int(seq)

    a, b = ref(args.can_match[0]), ref(args.can_match[1])
    recv_at = {(r.rank, r.post): i for i, r in enumerate(recvs)}
    send_at = {(s.rank, s.post): j for j, s in enumerate(sends)}
    if a in send_at and b in recv_at:
        a, b = b, a
    if a not in recv_at or b not in send_at:
        print("naive_encoding.py: --can-match needs a receive and a send", file=sys.stderr)
        return 2
    question = pairs.get((recv_at[a], send_at[b]))

    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    w = out.write
    w("(set-logic QF_LIA)\n")
    for rank, seqs in events.items():
        for seq in seqs:
            w(f"(declare-const {t(rank, seq)} Int)\n")
    for var in pairs.values():
        w(f"(declare-const {var} Bool)\n")
    for rank, seqs in events.items():  # program order
        for x, y in zip(seqs, seqs[1:]):
            w(f"(assert (< {t(rank, x)} {t(rank, y)}))\n")
    for i, c in enumerate(by_recv):  # every receive matches one send
        w(f"(assert (or false {' '.join(pairs[i, j] for j in c)}))\n")
    for j, c in enumerate(by_send):  # every send is received (the run was complete)
        w(f"(assert (or false {' '.join(pairs[i, j] for i in c)}))\n")
    for i, c in enumerate(by_recv):  # at most one send per receive, pairwise
        for x in range(len(c)):
            for y in range(x + 1, len(c)):
                w(f"(assert (not (and {pairs[i, c[x]]} {pairs[i, c[y]]})))\n")
    for j, c in enumerate(by_send):  # at most one receive per send, pairwise
        for x in range(len(c)):
            for y in range(x + 1, len(c)):
                w(f"(assert (not (and {pairs[c[x], j]} {pairs[c[y], j]})))\n")
    for (i, j), var in pairs.items():  # a receive completes after its send was posted
        r, s = recvs[i], sends[j]
        w(f"(assert (=> {var} (< {t(s.rank, s.post)} {t(r.rank, r.done)})))\n")
    for j1, j2 in channel_pairs:  # non-overtaking, pairwise: s1 before s2 -> not (r1 <- s2, r2 <- s1)
        receivers = [i for i in by_send[j1] if (i, j2) in pairs]
        for x in range(len(receivers)):
            for y in range(x + 1, len(receivers)):
                r1, r2 = sorted((receivers[x], receivers[y]), key=lambda i: recvs[i].post)
                w(f"(assert (not (and {pairs[r1, j2]} {pairs[r2, j1]})))\n")
    w(f"(assert {question if question else 'false'})\n")
    w("(check-sat)\n")
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

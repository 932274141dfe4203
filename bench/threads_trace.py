#!/usr/bin/env python3
"""Write a one-rank JSON trace (for `smtrace import-json`) of a pthreads program.

    threads_trace.py ITERATIONS [--race] [--sync N] > trace.json

Four threads each ITERATIONS times take a mutex, store four ints into the
rank's window memory and release it; every tenth iteration thread 1 also
puts one int into the window (MPI_Win_lock shared on itself, MPI_Put,
MPI_Win_unlock) onto a word that thread 2 stores to, inside the mutex, or
with --race outside it (then thread 2's store of the same iteration races
with each Put: ITERATIONS / 10 races). --sync sets RankHeader.thread_sync
(default 1: pthreads recorded; 0: the rank is one program order).
"""
import json
import sys


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if args else 2)
    iterations = int(args[0])
    race = "--race" in args
    sync = int(args[args.index("--sync") + 1]) if "--sync" in args else 1
    events = []

    def add(call, thread=0, **fields):
        e = {"seq": str(len(events)), "call": call, "tStart": str(1000 * (len(events) + 1)), "duration": "10",
             "site": 1}
        if thread:
            e["thread"] = thread
        e.update(fields)
        events.append(e)

    add("INIT_THREAD")
    add("WIN_CREATE", comm=0, window=1, winBase="4096", winSize="65536", dispUnit=1)
    for t in (1, 2, 3):
        add("PTHREAD_CREATE", peer=t)
    for t in (1, 2, 3):
        add("THREAD_BEGIN", thread=t, peer=0)
    for i in range(iterations):
        for t in (0, 1, 2, 3):
            add("PTHREAD_MUTEX_LOCK", thread=t, buf="80")
            for k in range(4):
                add("STORE", thread=t, buf=str(4096 + 64 * t + 4 * k), size="4")
            add("PTHREAD_MUTEX_UNLOCK", thread=t, buf="80")
        if i % 10 == 0:
            if not race:
                add("PTHREAD_MUTEX_LOCK", thread=1, buf="80")
            add("WIN_LOCK", thread=1, window=1, peer=0, lockType="LOCK_SHARED")
            add("PUT", thread=1, window=1, peer=0, buf="36864", count="1", datatype=7, targetDisp="128",
                targetCount="1", targetDatatype=7)
            add("WIN_UNLOCK", thread=1, window=1, peer=0)
            if not race:
                add("PTHREAD_MUTEX_UNLOCK", thread=1, buf="80")
    for t in (1, 2, 3):
        add("THREAD_END", thread=t)
    for t in (1, 2, 3):
        add("PTHREAD_JOIN", peer=t)
    add("WIN_FREE", window=1)
    add("FINALIZE")
    end = {"kind": "FINALIZED", "t": str(1000 * (len(events) + 2)), "lastSeq": events[-1]["seq"],
           "events": str(len(events))}
    header = {"rank": 0, "worldSize": 1, "threadLevel": 3, "threadSync": sync}
    sites = [{"id": 1, "function": "main", "file": "threads_trace.c", "line": 1}]
    trace = {"manifest": {"worldSize": 1, "command": "threads_trace.py"},
             "ranks": [{"header": header, "sites": sites, "events": events, "end": end}]}
    json.dump(trace, sys.stdout)


if __name__ == "__main__":
    main()
